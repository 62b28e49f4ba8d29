package launch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// Issue 34 item 5: a soak that judged nothing said PASS. soak-churn
// against an external server (--url): the profile's server: block (tick,
// get_retry) cannot apply there, yet nothing said so and run.json held it
// as applied; the GET streams carried no event, yet "correctness drift
// PASS … 0 GET streams faulty"; and the top line said WARN while the last
// said "Soak: PASS". Now the block is named not applicable (stderr,
// run.json, the summary), the GET streams read "not judged", and the run
// has one verdict: the top line's word, soak.json's verdict and the last
// line agree.

// soakVerdictWords returns the word of the report's "Verdict:" line and
// of the soak's last "Soak:" line.
func soakVerdictWords(t *testing.T, out string) (top, last string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Verdict: (\S+)`).FindStringSubmatch(out)
	n := regexp.MustCompile(`(?m)^Soak: (\S+)`).FindAllStringSubmatch(out, -1)
	if m == nil || len(n) != 1 {
		t.Fatalf("no Verdict: line or not one Soak: line:\n%s", out)
	}
	return m[1], n[0][1]
}

func TestSoakExternalServerNotApplicable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a soak for 3 s")
	}
	t.Parallel()
	// The reference server started on its own (as `mcpbench serve` is):
	// no tick notifications, no GET retry hint.
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "soak")
	p := testProfile(t, "soak-churn", "rate", 50.0, "duration", 3*time.Second, "warmup", time.Duration(0))
	p.URL = srv.URL()
	out, errs, code := testRun(t, Spec{Command: "soak", Profile: p, Out: dir, Quiet: true}, (*Test).Soak)
	if code != int(ExitOK) && code != int(ExitThresholds) {
		t.Fatalf("soak: exit %d\n%s\n%s", code, out, errs)
	}
	const feature = "the profile's server: block (get_retry 500ms, tick 1s)"
	var info results.RunInfo
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil || json.Unmarshal(data, &info) != nil {
		t.Fatalf("run.json (%v): %s", err, data)
	}
	sum := readSum(t, dir)
	for where, list := range map[string][]results.NotApplicable{"run.json": info.NotApplicable, "summary.json": sum.NotApplicable} {
		if len(list) != 1 || list[0].Feature != feature || !strings.Contains(list[0].Reason, "external server (--url)") {
			t.Fatalf("%s not_applicable %+v: want exactly %q", where, list, feature)
		}
	}
	if !strings.Contains(out, "not applicable: "+feature+", because") {
		t.Fatalf("the report does not name the server: block:\n%s", out)
	}
	g := sum.GETStreams
	if g == nil || g.Opened == 0 || g.Events != 0 {
		t.Fatalf("GET streams %+v: want some opened, no event (an external server without ticks)", g)
	}
	sk := readSoak(t, dir)
	v := verdictOf(t, sk, "correctness drift")
	if want := fmt.Sprintf("GET streams not judged: the %d opened carried no event", g.Opened); !strings.Contains(v.Detail, want) || strings.Contains(v.Detail, "GET streams faulty") {
		t.Fatalf("correctness drift %q: want %q", v.Detail, want)
	}
	top, last := soakVerdictWords(t, out)
	if top != last || sk.Verdict != top || top == "OK" {
		t.Fatalf("top %s, last %s, soak.json %s: want one verdict, WARN at least (a feature not applicable)", top, last, sk.Verdict)
	}
}

// The embedded server soak applies its server: block: no not-applicable
// line, its GET streams carry the tick notifications and are judged, the
// correctness verdict passes over them, and the run has one verdict.
func TestSoakEmbeddedServerJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a soak for 3 s")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "soak")
	p := testProfile(t, "soak-churn", "rate", 50.0, "duration", 3*time.Second, "warmup", time.Duration(0))
	out, errs, code := testRun(t, Spec{Command: "soak", Profile: p, Out: dir, Quiet: true}, (*Test).Soak)
	if code != int(ExitOK) {
		t.Fatalf("soak: exit %d\n%s\n%s", code, out, errs)
	}
	sum := readSum(t, dir)
	if len(sum.NotApplicable) != 0 || strings.Contains(out, "not applicable") {
		t.Fatalf("not applicable %+v against the embedded server", sum.NotApplicable)
	}
	g := sum.GETStreams
	if g == nil || g.Events == 0 || g.Ledger == nil || g.Ledger.Streams == 0 {
		t.Fatalf("GET streams %+v: want events from the ticks", g)
	}
	sk := readSoak(t, dir)
	v := verdictOf(t, sk, "correctness drift")
	if want := fmt.Sprintf("0 of %d GET streams faulty", g.Ledger.Streams); !v.Checked || !v.Pass || !strings.Contains(v.Detail, want) {
		t.Fatalf("correctness drift %+v: want a pass with %q", v, want)
	}
	top, last := soakVerdictWords(t, out)
	if top != last || sk.Verdict != top || top == "FAIL" {
		t.Fatalf("top %s, last %s, soak.json %s: want one verdict, not FAIL", top, last, sk.Verdict)
	}
}

func readSum(t *testing.T, dir string) *results.Summary {
	t.Helper()
	s, err := results.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readSoak(t *testing.T, dir string) *results.Soak {
	t.Helper()
	sk, err := results.ReadSoak(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sk
}

// verdictOf is a soak's verdict by name.
func verdictOf(t *testing.T, sk *results.Soak, name string) results.SoakVerdict {
	t.Helper()
	for _, v := range sk.Verdicts {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no %s verdict in %+v", name, sk.Verdicts)
	return results.SoakVerdict{}
}
