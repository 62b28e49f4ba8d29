package archtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCmdLines bounds cmd/mcpbench's non-test lines (issue 35): the command
// wires flags to launch and prints; the run logic lives in the libraries.
const maxCmdLines = 2500

// cmd/mcpbench stays a front end: its non-test Go files hold at most
// maxCmdLines lines.
func TestCmdStaysSmall(t *testing.T) {
	dir := filepath.Join("..", "..", "cmd", "mcpbench")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("cmd/mcpbench: %v (%d files)", err, len(files))
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	t.Logf("cmd/mcpbench: %d non-test lines (at most %d)", n, maxCmdLines)
	if n > maxCmdLines {
		t.Errorf("cmd/mcpbench has %d non-test lines, more than %d: move run logic into launch (or the library it belongs to)", n, maxCmdLines)
	}
}
