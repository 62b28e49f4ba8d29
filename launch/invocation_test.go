package launch

import (
	"os"
	"path/filepath"
	"testing"
)

// The command the Next: line names is the one the user ran: `go run`'s
// temporary binary is said as go run ./cmd/mcpbench; a path as typed,
// unless $PATH's mcpbench is that file; a bare name as typed.
func TestInvocation(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, "bin")
	elsewhere := filepath.Join(dir, "build")
	for _, d := range []string{onPath, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "mcpbench"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", onPath)
	t.Chdir(dir)
	for _, tt := range []struct{ arg0, want string }{
		{"/tmp/go-build1234567/b001/exe/mcpbench", GoRun},
		{filepath.Join(dir, "go-build99", "b001", "exe", "mcpbench"), GoRun},                   // $GOTMPDIR elsewhere
		{"mcpbench", "mcpbench"},                                                               // found on $PATH by its bare name
		{"mcpb", "mcpb"},                                                                       // a bare name other than mcpbench, as typed
		{"./build/mcpbench", "./build/mcpbench"},                                               // a relative path, not the one on $PATH
		{elsewhere + "/mcpbench", elsewhere + "/mcpbench"},                                     // an absolute path, not the one on $PATH
		{"./bin/mcpbench", "mcpbench"},                                                         // a relative path to $PATH's mcpbench
		{onPath + "/mcpbench", "mcpbench"},                                                     // an absolute one
		{"/tmp/go-build1234567/b001/mcpbench.test", "/tmp/go-build1234567/b001/mcpbench.test"}, // go test's binary: not go run's
		{"", "mcpbench"},
	} {
		if got := Invocation(tt.arg0); got != tt.want {
			t.Errorf("Invocation(%q) = %q, want %q", tt.arg0, got, tt.want)
		}
	}
	t.Setenv("PATH", "")
	if got := Invocation("./bin/mcpbench"); got != "./bin/mcpbench" {
		t.Errorf("no mcpbench on $PATH: Invocation(./bin/mcpbench) = %q, want it as typed", got)
	}
}
