package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A check (profile checks:, as --check gives them) reaches every op; a check that fails every call fails the
// checks threshold (exit 99), and summary.json counts each failure.
func TestCheckFlagFailsThreshold(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	p := toolProfile(t, "smoke", "echo", map[string]any{"text": "hello"}, false, "duration", time.Second, "warmup", time.Duration(0))
	p.Checks = append(p.Checks, `content.0.text == "hello"`, `tools/call:echo => content.0.text == "bye"`)
	p.CheckFlags = 2
	p.Thresholds, p.ThresholdFlags = append(p.Thresholds, "checks>0.99"), 1
	out, errs, code := testRun(t, Spec{Command: "run", Profile: p, Out: dir, Quiet: true}, (*Test).Run)
	if code != int(ExitThresholds) || !strings.Contains(errs, "thresholds crossed: checks>0.99") {
		t.Fatalf("exit %d, stderr %q; want 99 naming checks>0.99", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Ops []struct {
			Count  int64
			Checks []struct {
				Check          string
				Passed, Failed int64
				FirstFailure   *struct{ Seen string } `json:"first_failure"`
			}
		}
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Ops) != 1 || len(s.Ops[0].Checks) != 2 {
		t.Fatalf("summary ops %+v, want one op with two checks", s.Ops)
	}
	n, c := s.Ops[0].Count, s.Ops[0].Checks
	if n == 0 || c[0].Passed != n || c[0].Failed != 0 || c[1].Failed != n || c[1].Passed != 0 || c[1].FirstFailure == nil || c[1].FirstFailure.Seen != `"hello"` {
		t.Errorf("%d ops, checks %+v: want the first passed and the second failed by every op, seeing \"hello\"", n, c)
	}
	if !strings.Contains(out, `content.0.text == "bye"`) || !strings.Contains(out, "Checks: ") {
		t.Errorf("no checks table in:\n%s", out)
	}
}
