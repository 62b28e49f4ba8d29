package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --check reaches every op; a check that fails every call fails the
// checks threshold (exit 99), and summary.json counts each failure.
func TestCheckFlagFailsThreshold(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out, errs, code := run(t, "run", "--tool", "echo", "--args", `{"text":"hello"}`, "--duration", "1s", "--warmup", "0s", "--out", dir,
		"--check", `content.0.text == "hello"`, "--check", `tools/call:echo => content.0.text == "bye"`, "--threshold", "checks>0.99")
	if code != exitThresholds || !strings.Contains(errs, "thresholds crossed: checks>0.99") {
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
