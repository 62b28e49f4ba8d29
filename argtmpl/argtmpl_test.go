package argtmpl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
)

// CompileOp alone, without a profile: the fast forms render as JSON of
// the right types, the same seed, VU and iteration give the same values,
// {{seq}} counts the op's requests, and a data file's column is read.
func TestCompileOpRenders(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.csv"), []byte("city\nOslo\nLima\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := LoadData(&DataSpec{File: "c.csv"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"n": "{{rand_int 1 6}}", "s": "{{seq}}", "who": "vu {{vu}}", "city": "{{.city}}", "env": `{{env "K"}}`}
	src := Source{Method: "tools/call", Tool: "echo", Arguments: args}
	op, errs := CompileOp(0, src, src, 7, map[string]string{"K": "v"}, data)
	if len(errs) > 0 || op == nil {
		t.Fatalf("CompileOp: %v", errs)
	}
	render := func(vu int, it int64) map[string]any {
		var m struct {
			Arguments map[string]any `json:"arguments"`
			Name      string         `json:"name"`
		}
		b := op.Render(nil, driver.RenderContext{VU: vu, Iteration: it})
		if err := json.Unmarshal(b, &m); err != nil || m.Name != "echo" {
			t.Fatalf("%s: %v", b, err)
		}
		return m.Arguments
	}
	a, b := render(2, 5), render(2, 5)
	if a["n"] != b["n"] || a["who"] != "vu 3" || a["env"] != "v" {
		t.Fatalf("same VU and iteration: %v then %v", a, b)
	}
	if n, ok := a["n"].(float64); !ok || n < 1 || n > 6 {
		t.Fatalf("rand_int 1 6 = %v (%T): want a number in [1, 6]", a["n"], a["n"])
	}
	if a["s"] != 1.0 || b["s"] != 2.0 {
		t.Fatalf("seq %v, %v: want 1, 2", a["s"], b["s"])
	}
	if a["city"] != "Oslo" || b["city"] != "Lima" {
		t.Fatalf("rows %v, %v: want Oslo then Lima (sequential)", a["city"], b["city"])
	}
	if op.Note() != "" || op.DynName() || len(op.Refs()) != 0 {
		t.Fatalf("note %q, dynName %v, refs %v", op.Note(), op.DynName(), op.Refs())
	}
	// No template: nothing to compile.
	plain := Source{Method: "tools/call", Tool: "echo", Arguments: map[string]any{"a": 1}}
	if op, errs := CompileOp(1, plain, plain, 7, nil, nil); op != nil || errs != nil {
		t.Fatalf("fixed arguments compiled to %v, %v", op, errs)
	}
	// A column without a data file is an error naming the field.
	bad := Source{Method: "tools/call", Tool: "echo", Arguments: map[string]any{"c": "{{.city}}"}}
	if _, errs := CompileOp(3, bad, bad, 7, nil, nil); len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "ops[3].arguments.c") {
		t.Fatalf("errors %v: want one naming ops[3].arguments.c", errs)
	}
}
