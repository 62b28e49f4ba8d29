package httpclient

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// httpclient is the layer under the MCP session: it imports nothing of
// this module but the small internal helpers listed here (not driver, not
// chaos, not the SSE or JSON-RPC codecs).
func TestImportsNoMCPLayer(t *testing.T) {
	const module = "github.com/mcpbench/mcpbench/"
	allowed := []string{module + "internal/secret"}
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkg.Imports, "net/http") {
		t.Fatalf("imports %v: the package's own imports were not read", pkg.Imports)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, module) && !slices.Contains(allowed, imp) {
			t.Errorf("httpclient imports %s: it may import only %v of this module", imp, allowed)
		}
	}
}
