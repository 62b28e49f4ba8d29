package probe_test

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The probe's layer: of this module it imports only driver (its wire
// helpers and Config) and the internal SSE and JSON-RPC codecs; never the
// engine, workload, metrics, report or cmd packages. (That driver does not
// import probe, the compiler checks: it would be a cycle.)
func TestImports(t *testing.T) {
	const mod = "github.com/mcpbench/mcpbench/"
	allowed := map[string]bool{mod + "driver": true, mod + "internal/jsonrpc": true, mod + "internal/sse": true}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, p := range pkgs {
		for name, f := range p.Files {
			files++
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				if strings.HasPrefix(path, mod) && !allowed[path] {
					t.Errorf("%s imports %s: the probe may import only driver, internal/jsonrpc and internal/sse of this module", name, path)
				}
			}
		}
	}
	if files == 0 {
		t.Fatal("no source files parsed")
	}
}
