package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/results"
)

// readSoak reads a soak's soak.json.
func readSoak(t *testing.T, dir string) *results.Soak {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "soak.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sk results.Soak
	if err := json.Unmarshal(data, &sk); err != nil {
		t.Fatal(err)
	}
	return &sk
}

// verdictOf is a soak's verdict by name.
func verdictOf(t *testing.T, sk *results.Soak, name string) results.SoakVerdict {
	t.Helper()
	for _, v := range sk.Verdicts {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no %q verdict in %+v", name, sk.Verdicts)
	return results.SoakVerdict{}
}

// dupFake answers each tools/call over SSE with progress 1 and 2 of 2
// and the response; every third call it sends progress 1 twice (a
// duplicated message: a faulty stream). planted counts those calls.
func dupFake(planted *atomic.Int64) *mcptest.Server {
	fake := mcptest.New()
	var calls atomic.Int64
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		tok := r.ProgressToken()
		evs := []mcptest.Event{{Data: mcptest.Progress(tok, 1, 2)}}
		if calls.Add(1)%3 == 0 {
			evs = append(evs, mcptest.Event{Data: mcptest.Progress(tok, 1, 2)})
			planted.Add(1)
		}
		evs = append(evs, mcptest.Event{Data: mcptest.Progress(tok, 2, 2)}, mcptest.Event{Data: mcptest.Response(r.ID, map[string]any{"content": []any{}})})
		w.Events(evs...)
	})
	return fake
}

// soak --processes 2 against a server planting duplicated progress: the
// merged run's correctness drift counts exactly the faulty streams the
// server planted across both children (each child found some), the
// verdict fails and the soak exits 99.
func TestSoakProcessesCountsPlantedFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcpbench as processes")
	}
	t.Parallel()
	var planted atomic.Int64
	srv := httptest.NewServer(dupFake(&planted))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "soak")
	out, errs, code := runPar(t, "soak", "--processes", "2", "--url", srv.URL, "--profile", "smoke", "--tool", "work", "--progress-token", "--rate", "40",
		"--duration", "2s", "--warmup", "0s", "--start-delay", "1s", "-q", "--out", dir)
	if code != exitThresholds || !strings.Contains(out, "Soak: FAIL") {
		t.Fatalf("exit %d, want 99\n%s\n%s", code, out, errs)
	}
	v := verdictOf(t, readSoak(t, dir), "correctness drift")
	if v.Pass || !v.Checked || int64(v.Value) != planted.Load() || planted.Load() < 10 {
		t.Fatalf("correctness drift %+v; the server planted %d faulty streams", v, planted.Load())
	}
	var perSegment float64
	for _, d := range []string{"segment-0", "segment-1"} {
		sv := verdictOf(t, readSoak(t, filepath.Join(dir, d)), "correctness drift")
		if sv.Value == 0 {
			t.Errorf("%s found no faulty stream: %+v", d, sv)
		}
		perSegment += sv.Value
	}
	if m := readSum(t, dir); perSegment != v.Value || m.All.Ledger == nil || float64(m.All.Ledger.Faulty) != v.Value {
		t.Errorf("the segments found %v faulty streams, the merged verdict %v, the merged ledger %+v", perSegment, v.Value, m.All.Ledger)
	}
}

// soak --processes 2 against the (shared) embedded reference server, with
// churn and the profile's resume chaos: every verdict passes, session
// hygiene probed the deleted sessions of both children, and the soak
// exits 0 with the merged run in --out.
func TestSoakProcessesCleanPasses(t *testing.T) {
	testenv.Long(t)
	if testing.Short() {
		t.Skip("runs mcpbench as processes")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "soak")
	out, errs, code := runPar(t, "soak", "--processes", "2", "--duration", "3s", "--warmup", "0s", "--churn-rate", "5", "--rate", "60",
		"--start-delay", "1s", "-q", "--out", dir)
	if code != exitOK || !strings.Contains(out, "Segments merged (2)") {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errs)
	}
	sk := readSoak(t, dir)
	// One verdict: the run's (OK, or WARN on a busy machine), none failed.
	if top, last := soakVerdictWords(t, out); top != last || sk.Verdict != top || top == "FAIL" {
		t.Fatalf("top %s, last %s, soak.json %s\n%s", top, last, sk.Verdict, out)
	}
	for _, v := range sk.Verdicts {
		if v.Checked && !v.Pass {
			t.Errorf("verdict %s failed: %s", v.Name, v.Detail)
		}
	}
	m, s0, s1 := readSum(t, dir), readSum(t, filepath.Join(dir, "segment-0")), readSum(t, filepath.Join(dir, "segment-1"))
	h := verdictOf(t, sk, "session hygiene")
	probed := s0.Sessions.Hygiene.Probed + s1.Sessions.Hygiene.Probed
	if !sk.Pass || !h.Checked || m.Sessions.Hygiene == nil || m.Sessions.Hygiene.Probed != probed || s0.Sessions.Hygiene.Probed == 0 || s1.Sessions.Hygiene.Probed == 0 {
		t.Errorf("pass %v, hygiene %+v: merged probes %+v, children %d + %d", sk.Pass, h, m.Sessions.Hygiene, s0.Sessions.Hygiene.Probed, s1.Sessions.Hygiene.Probed)
	}
	if c := verdictOf(t, sk, "correctness drift"); !c.Checked || c.Value != 0 || m.All.Count != s0.All.Count+s1.All.Count {
		t.Errorf("correctness drift %+v over %d ops (children %d + %d)", c, m.All.Count, s0.All.Count, s1.All.Count)
	}
}

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
