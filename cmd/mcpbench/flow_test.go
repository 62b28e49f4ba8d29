package main

import (
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
