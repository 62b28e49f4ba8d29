package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI's Next: lines name mcpbench as the user invoked it: argv[0] as
// launch.Invocation says it — go run's temporary binary as go run
// ./cmd/mcpbench, a path as typed (its cases: launch's TestInvocation).
func TestNextLineNamesTheInvocation(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	as := func(arg0 string, args ...string) string {
		var out, errb bytes.Buffer
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&errb)
		root.SetArgs(args)
		if err := root.ExecuteContext(withArgv(t.Context(), append([]string{arg0}, args...))); err != nil {
			t.Fatalf("%s %v: %v\n%s", arg0, args, err, errb.String())
		}
		return out.String()
	}
	out := as("/tmp/go-build42/b001/exe/mcpbench", "run", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir)
	if want := "Next: go run ./cmd/mcpbench plot " + dir + " ("; !strings.Contains(out, want) {
		t.Errorf("after go run: no %q in\n%s", want, out)
	}
	out = as("./no-such-dir/mcpbench", "report", dir)
	if want := "Next: ./no-such-dir/mcpbench plot " + dir + " ("; !strings.Contains(out, want) {
		t.Errorf("through a path: no %q in\n%s", want, out)
	}
	out = as("mcpbench", "report", dir)
	if want := "Next: mcpbench plot " + dir + " ("; !strings.Contains(out, want) {
		t.Errorf("on $PATH: no %q in\n%s", want, out)
	}
}
