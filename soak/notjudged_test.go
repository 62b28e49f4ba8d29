package soak

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// Issue 34 item 5: a verdict over nothing judged is "not judged", never a
// pass: the correctness verdict of a run whose response streams were not
// judged (JSON answers) and whose GET streams carried no event.
func TestCorrectnessNotJudgedOverNothing(t *testing.T) {
	ps := soakPoints(func(float64) float64 { return 5 }, func(float64) float64 { return 80 })
	get := func(sk *results.Soak, name string) results.SoakVerdict {
		for _, v := range sk.Verdicts {
			if v.Name == name {
				return v
			}
		}
		t.Fatalf("no verdict %s", name)
		return results.SoakVerdict{}
	}
	// JSON answers (no response stream judged), GET streams without events.
	s := &results.Summary{GETStreams: &results.GETStreamSummary{Opened: 154, Ledger: &results.LedgerSummary{Streams: 154}}}
	sk := Verdicts(ps, s)
	v := get(sk, "correctness drift")
	if v.Checked || v.Pass || v.Detail != "not judged: no response stream was judged (JSON answers, or no op completed), and GET streams not judged: the 154 opened carried no event" {
		t.Fatalf("correctness over nothing: %+v", v)
	}
	if h := get(sk, "session hygiene"); h.Checked || h.Pass {
		t.Fatalf("hygiene with no probe: %+v", h)
	}
	// Response streams judged, GET streams without events: judged on the
	// response streams, the GET streams said not judged.
	s.All.Ledger = &results.LedgerSummary{Streams: 1200}
	v = get(Verdicts(ps, s), "correctness drift")
	if !v.Checked || !v.Pass || !strings.HasSuffix(v.Detail, ", GET streams not judged: the 154 opened carried no event") {
		t.Fatalf("response streams judged: %+v", v)
	}
	// GET streams that carried events are judged (the clean case).
	s.GETStreams.Events = 462
	v = get(Verdicts(ps, s), "correctness drift")
	if !v.Checked || !v.Pass || !strings.HasSuffix(v.Detail, ", 0 of 154 GET streams faulty") {
		t.Fatalf("GET streams judged: %+v", v)
	}
	// A planted fault on a GET stream fails it.
	s.GETStreams.Ledger.Faulty = 3
	v = get(Verdicts(ps, s), "correctness drift")
	if !v.Checked || v.Pass || v.Value != 3 || !strings.HasSuffix(v.Detail, ", 3 of 154 GET streams faulty") {
		t.Fatalf("GET streams faulty: %+v", v)
	}
}

// The soak's last line: not judged when no verdict judged anything; with
// the run's verdict recorded, its word.
func TestSoakLastLine(t *testing.T) {
	line := func(sk *results.Soak) string {
		var b bytes.Buffer
		if err := WriteText(&b, sk); err != nil {
			t.Fatal(err)
		}
		ls := strings.Split(strings.TrimSpace(b.String()), "\n")
		return ls[len(ls)-1]
	}
	none := &results.Soak{Pass: true, Verdicts: []results.SoakVerdict{{Name: "latency drift"}, {Name: "correctness drift"}}}
	if got := line(none); got != "Soak: NOT JUDGED — not judged: none of the 2 soak verdicts had anything to judge" {
		t.Fatalf("nothing judged: %q", got)
	}
	none.Verdict = "WARN"
	if got := line(none); got != "Soak: WARN — not judged: none of the 2 soak verdicts had anything to judge" {
		t.Fatalf("nothing judged, run WARN: %q", got)
	}
	sk := &results.Soak{Pass: true, Verdict: "WARN", Verdicts: []results.SoakVerdict{{Name: "latency drift", Checked: true, Pass: true}, {Name: "target leak"}}}
	if got := line(sk); got != "Soak: WARN — 1 of 2 soak verdicts judged, none failed; the run's warnings are in its verdict line above" {
		t.Fatalf("run WARN: %q", got)
	}
	sk.Verdict = "OK"
	if got := line(sk); got != "Soak: OK — 1 of 2 soak verdicts judged, none failed" {
		t.Fatalf("run OK: %q", got)
	}
	sk.Verdicts[0].Pass, sk.Pass, sk.Verdict = false, false, "FAIL"
	if got := line(sk); got != "Soak: FAIL — latency drift failed" {
		t.Fatalf("failed: %q", got)
	}
}
