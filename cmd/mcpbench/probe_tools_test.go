package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// --stream-args and --close-args must be JSON objects of a named tool; a
// tool the server does not list is reported as not run.
func TestProbeToolFlags(t *testing.T) {
	f := &mcptest.ProbeFake{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	if _, errs, code := cli(t.Context(), "probe", "--stream-tool", "progress", "--stream-args", "[1]", srv.URL); code != exitUsage || !strings.Contains(errs, `--stream-args "[1]": not a JSON object`) {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, errs, code := cli(t.Context(), "probe", "--close-args", "{}", srv.URL); code != exitUsage || !strings.Contains(errs, "need --stream-tool") {
		t.Errorf("exit %d: %s", code, errs)
	}
	out, errs, code := cli(t.Context(), "probe", "--stream-tool", "nosuch", srv.URL)
	if code != exitOK || !strings.Contains(out, "\nstreaming    not run: no tool named \"nosuch\" (--stream-tool); the server lists \"progress\"\n") || f.Calls("progress") != 0 {
		t.Errorf("exit %d (%s), progress called %d times:\n%s", code, errs, f.Calls("progress"), out)
	}
}
