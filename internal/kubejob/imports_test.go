package kubejob

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The manifest builder only builds: it must not import the command, the
// process runner, the results (metrics) or the reference server.
func TestImports(t *testing.T) {
	checkImports(t, "github.com/mcpbench/mcpbench/cmd", "github.com/mcpbench/mcpbench/internal/procrun", "github.com/mcpbench/mcpbench/refserver",
		"github.com/mcpbench/mcpbench/metrics")
}

// checkImports fails for each import of the package's own (non-test)
// files that is one of forbidden or below one.
func checkImports(t *testing.T, forbidden ...string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		n++
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range af.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no source file read")
	}
}
