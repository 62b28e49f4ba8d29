package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every problem of a threshold — from --threshold or from the profile —
// exits 2 before the run: the server gets no request, and the message
// names the field and lists what is valid. run, soak and their
// --processes forms share the check.
func TestThresholdProblemsExit2BeforeLoad(t *testing.T) {
	t.Setenv("MCPBENCH_MAIN", "1") // were the check lost, --processes would start this binary as mcpbench, not as the tests
	url, requests := countingServer(t)
	profile := filepath.Join(t.TempDir(), "gate.yaml")
	os.WriteFile(profile, []byte(`name: gate
ops:
  - {method: tools/call, tool: echo, arguments: {text: hi}}
  - {method: ping}
thresholds: ["p99<1s", "tools/call:ech:p99<200ms"]
`), 0o644)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--threshold", "tools/call:ech:p99<200ms"},
			[]string{"--threshold: ", `no op or scenario "tools/call:ech" in this test`, "ops: tools/call:echo", "methods (every op of it): tools/call"}},
		{[]string{"run", "--processes", "2", "--threshold", "tools/call:ech:p99<200ms"}, []string{`no op or scenario "tools/call:ech"`}},
		{[]string{"soak", "--duration", "2s", "--threshold", "tools/call:ech:p99<200ms"}, []string{`no op or scenario "tools/call:ech"`}},
		{[]string{"soak", "--duration", "2s", "--processes", "2", "--threshold", "tools/call:ech:p99<200ms"}, []string{`no op or scenario "tools/call:ech"`}},
		{[]string{"run", "--profile", profile},
			[]string{"thresholds[1]: ", `"tools/call:ech:p99<200ms"`, "ops: tools/call:echo, ping"}},
		{[]string{"run", "--threshold", "http_req_duration<200"}, []string{"--threshold: ", "k6's http_req_duration is our response time", "p(95)<200"}},
		{[]string{"run", "--threshold", "http_req_failed<0.01"}, []string{"our error_rate", "error_rate<0.01"}},
		{[]string{"run", "--threshold", "checks>0.99"}, []string{"--threshold: ", "the test has no checks", "--check"}},
		{[]string{"run", "--check", "is_error == false", "--threshold", "checks{no such}==1"}, []string{`no check "no such" in this test (checks: is_error == false)`}},
		{[]string{"run", "--check", "content.0.text == hello"}, []string{`--check: bad check "content.0.text == hello": value "hello" is not a JSON literal`}},
		{[]string{"run", "--check", "tools/call:ech => is_error == false"}, []string{`--check: "tools/call:ech => is_error == false" selects no op`, "ops: tools/call:echo"}},
		{[]string{"run", "--threshold", "iterations>100"}, []string{"this test has no scenarios", "k6's iterations are our completed ops"}},
		{[]string{"run", "--threshold", "error_rate<5"}, []string{"a fraction from 0 to 1", "error_rate<0.05 or error_rate<5%"}},
		{[]string{"run", "--threshold", "p99<3%"}, []string{"p99 is a time (ms, s, us)"}},
		{[]string{"run", "--threshold", "latncy<3ms"}, []string{`unknown metric "latncy"`, "valid metrics: p50"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			_, errs, code := run(t, append(tt.args, "--url", url, "--out", dir, "-q")...)
			if code != exitUsage {
				t.Fatalf("exit %d, stderr %q; want 2", code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if n := requests.Load(); n != 0 {
				t.Fatalf("the server got %d requests before the refusal", n)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("a refused run left %s: %v", dir, err)
			}
		})
	}
}

// A threshold that passes the gate and fails on the measured data still
// exits 99; the rate written as a fraction (k6) passes as its percentage
// does.
func TestThresholdGateKeepsExit99(t *testing.T) {
	_, errs, code := run(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--no-results",
		"--threshold", "error_rate<0.01", "--threshold", "tools/call:echo:p50<0.001ms")
	if code != exitThresholds || !strings.Contains(errs, "thresholds crossed: tools/call:echo:p50<0.001ms") || strings.Contains(errs, "error_rate<0.01,") {
		t.Fatalf("exit %d, stderr %q; want 99 naming the op's threshold alone", code, errs)
	}
}

// merge checks --threshold against the merged run's ops before it writes
// anything (exit 2, --out not created); a valid one merges. A second
// merge into the same --out is refused unless --overwrite.
func TestMergeThresholdGateAndOut(t *testing.T) {
	url := startRefServer(t)
	seg := filepath.Join(t.TempDir(), "seg0")
	if _, errs, code := run(t, "run", "--url", url, "--rate", "40", "--duration", "1s", "--warmup", "0s", "-q", "--segment", "0/2", "--out", seg); code != exitOK {
		t.Fatalf("segment: exit %d: %s", code, errs)
	}
	out := filepath.Join(t.TempDir(), "merged")
	_, errs, code := run(t, "merge", seg, "--out", out, "--threshold", "tools/call:ech:p99<1s")
	if code != exitUsage || !strings.Contains(errs, `--threshold: threshold "tools/call:ech:p99<1s": no op or scenario "tools/call:ech"`) || !strings.Contains(errs, "ops: tools/call:echo") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused merge left %s: %v", out, err)
	}
	if _, errs, code = run(t, "merge", seg, "--out", out, "--threshold", "tools/call:echo:p99<10s"); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	if _, errs, code = run(t, "merge", seg, "--out", out); code != exitUsage || !strings.Contains(errs, "exists and is not empty") {
		t.Fatalf("second merge: exit %d, stderr %q", code, errs)
	}
	if _, errs, code = run(t, "merge", seg, "--out", out, "--overwrite"); code != exitOK {
		t.Fatalf("merge --overwrite: exit %d: %s", code, errs)
	}
}
