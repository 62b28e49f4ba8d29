package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -e KEY=VALUE feeds {{env "KEY"}}: the server gets the values, a value
// written '${NAME}' is read from the environment and never shown (stdout,
// stderr, every file of the results directory); the others are shown as
// given.
func TestEnvFlagReachesRequestsSecretsHidden(t *testing.T) {
	t.Setenv("MCPB_TEST_SECRET", "SECRET7")
	g := startGuarded(t, "", nil, true)
	dir := filepath.Join(t.TempDir(), "r")
	out, errs, code := run(t, "run", "--url", g.url, "--tool", "echo", "--args", `{"text":"{{env \"TOKEN\"}}-{{env \"PUB\"}}"}`,
		"-e", "TOKEN=${MCPB_TEST_SECRET}", "--env", "PUB=visible", "--vus", "1", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	g.check(t)
	g.mu.Lock()
	bodies := g.bodies.String()
	g.mu.Unlock()
	if !strings.Contains(bodies, `"text":"SECRET7-visible"`) {
		t.Errorf("the server did not get the -e values:\n%.600s", bodies)
	}
	runJSON, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if !strings.Contains(string(runJSON), `"TOKEN": "${MCPB_TEST_SECRET}"`) || !strings.Contains(string(runJSON), `"PUB": "visible"`) {
		t.Errorf("run.json does not show the -e values as written:\n%s", runJSON)
	}
	noSecret(t, dir, map[string]string{"run": out + errs}, "SECRET7")

	// A key the templates read that no -e gives, and a pair without "=",
	// are errors naming them.
	_, errs, code = run(t, "run", "--url", g.url, "--tool", "echo", "--args", `{"text":"{{env \"NOPE\"}}"}`, "--duration", "1s", "-q", "--no-results")
	if code == exitOK || !strings.Contains(errs, `{{env "NOPE"}}: "NOPE" is not given: pass -e NOPE=VALUE`) {
		t.Errorf("unset key: exit %d\n%s", code, errs)
	}
	_, errs, code = run(t, "run", "-e", "JUSTAKEY", "--duration", "1s", "-q", "--no-results")
	if code == exitOK || !strings.Contains(errs, `-e "JUSTAKEY": want KEY=VALUE`) {
		t.Errorf("bad pair: exit %d\n%s", code, errs)
	}
}

// --abort-on-fail: a gate crossed from the first interval stops a
// one-minute run there: exit 99, the summary printed and written saying
// when and why, every results file written. With --processes it is
// refused before anything runs.
func TestAbortOnFailExits99WithResults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	out, errs, code := run(t, "run", "--tool", "slow", "--args", `{"ms":30}`, "--vus", "2", "--duration", "1m", "--warmup", "0s",
		"--threshold", "p99<20ms", "--abort-on-fail", "-q", "--out", dir)
	if code != exitThresholds || !strings.Contains(out, "ABORTED: aborted at ") || !strings.Contains(errs, "p99<20ms failed (p99 ") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var sum struct {
		Aborted    bool    `json:"aborted"`
		StopReason string  `json:"stop_reason"`
		DurationS  float64 `json:"duration_s"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil || !sum.Aborted || !strings.HasPrefix(sum.StopReason, "aborted at ") || sum.DurationS > 30 {
		t.Fatalf("summary.json: %+v %v", sum, err)
	}
	for _, f := range []string{"run.json", "intervals.csv", "histograms.hlog", "offenders.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	_, errs, code = run(t, "run", "--threshold", "p99<20ms", "--abort-on-fail", "--processes", "2", "--out", filepath.Join(t.TempDir(), "p"))
	if code != exitUsage || !strings.Contains(errs, "with --processes: each process would judge only its own share") {
		t.Fatalf("--processes: exit %d\n%s", code, errs)
	}
}
