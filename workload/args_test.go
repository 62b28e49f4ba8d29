package workload

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
)

// writeFile writes a data file in a temporary directory and returns its
// path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// argProfile is a profile of one tools/call op of tool with args.
func argProfile(tool string, args map[string]any) *profile.Profile {
	return &profile.Profile{
		Name: "args", URL: "http://127.0.0.1:1/mcp", Protocol: driver.Protocol20251125,
		Ops: []profile.OpSpec{{Method: "tools/call", Tool: tool, Arguments: args}},
	}
}

// compileOne compiles p and returns its first op.
func compileOne(t *testing.T, p *profile.Profile) *driver.Op {
	t.Helper()
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pl.Ops[0]
}

// render renders op for VU vu, iteration it, and decodes the arguments.
func render(t *testing.T, op *driver.Op, vu int, it int64) map[string]any {
	t.Helper()
	b := op.Render(nil, driver.RenderContext{VU: vu, Iteration: it})
	var params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal(b, &params); err != nil {
		t.Fatalf("rendered params %s: %v", b, err)
	}
	return params.Arguments
}

// What each template sends, with its JSON type: whole numeric templates
// are numbers, anything else strings, text is escaped.
func TestArgumentTemplatesRender(t *testing.T) {
	jsonl := writeFile(t, "rows.jsonl", `{"name":"Zoë \"Z\"","n":42,"obj":{"a":[1,true]}}`+"\n")
	p := argProfile("echo", map[string]any{
		"seq":     "{{seq}}",
		"seqText": "n{{seq}}",
		"vu":      "{{vu}}",
		"it":      "{{iteration}}",
		"int":     "{{rand_int 7 7}}",
		"printf":  `{{printf "%05d" seq}}`,
		"print":   "{{print seq}}",
		"braces":  `a{{"{{"}}b`,
		"index":   `{{index . "name"}}`,
		"text":    "say \"hi\"\n\t\u2028 {{vu}}",
		"name":    "{{.name}}",
		"n":       "{{.n}}",
		"nText":   "n={{.n}}",
		"obj":     "{{.obj}}",
		"fixed":   map[string]any{"list": []any{1, "x", "{{iteration}}"}},
	})
	p.Data = &argtmpl.DataSpec{File: jsonl}
	op := compileOne(t, p)
	got := render(t, op, 2, 5)
	want := map[string]any{
		"seq": 1.0, "seqText": "n1", "vu": 3.0, "it": 5.0, "int": 7.0, "printf": "00001", "print": "1", "braces": "a{{b", "index": `Zoë "Z"`,
		"text": "say \"hi\"\n\t\u2028 3", "name": `Zoë "Z"`, "n": 42.0, "nText": "n=42",
		"obj":   map[string]any{"a": []any{1.0, true}},
		"fixed": map[string]any{"list": []any{1.0, "x", 5.0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered arguments (-want +got):\n%s", diff)
	}
	if got := render(t, op, 0, 0); got["seq"] != 2.0 || got["seqText"] != "n2" {
		t.Errorf("second request: seq %v, seqText %v, want 2 and \"n2\" (one seq per request)", got["seq"], got["seqText"])
	}
	if !strings.Contains(string(op.Params), `"{{seq}}"`) {
		t.Errorf("Params %s: want the arguments as written", op.Params)
	}
}

// Prompt arguments are strings: a whole numeric template is sent quoted.
func TestPromptArgumentsStayStrings(t *testing.T) {
	p := argProfile("", nil)
	p.Ops[0] = profile.OpSpec{Method: "prompts/get", Prompt: "greet", Arguments: map[string]any{"name": "{{seq}}", "n": 3}}
	op := compileOne(t, p)
	if diff := cmp.Diff(map[string]any{"name": "1", "n": "3"}, render(t, op, 0, 0)); diff != "" {
		t.Errorf("prompt arguments (-want +got):\n%s", diff)
	}
}

// The same seed gives the same random arguments for the same VU and
// iteration; another seed, VU or iteration other ones.
func TestArgumentsReproducible(t *testing.T) {
	args := map[string]any{"s": "{{rand_string 12}}", "u": "{{uuid}}", "i": "{{rand_int 1 1000000000}}", "f": "{{rand_int 1 (rand_int 5 9)}}"}
	stream := func(seed int64) []map[string]any {
		p := argProfile("echo", args)
		p.Seed = seed
		op := compileOne(t, p)
		var out []map[string]any
		for vu := range 3 {
			for it := range int64(4) {
				out = append(out, render(t, op, vu, it))
			}
		}
		return out
	}
	a, b, c := stream(7), stream(7), stream(8)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different arguments (-first +second):\n%s", diff)
	}
	seen := map[string]bool{}
	for i := range a {
		if cmp.Equal(a[i], c[i]) {
			t.Errorf("request %d: seeds 7 and 8 drew the same arguments %v", i, a[i])
		}
		s := a[i]["s"].(string)
		if len(s) != 12 || strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "" || seen[s] {
			t.Errorf("rand_string 12 = %q: want 12 new characters of [A-Za-z0-9]", s)
		}
		seen[s] = true
		if f := a[i]["f"].(string); f < "1" || f > "9" || len(f) != 1 {
			t.Errorf("rand_int 1 (rand_int 5 9) = %q", f)
		}
	}
}

// Every problem of the arguments is a profile error naming its field.
func TestArgumentTemplateErrors(t *testing.T) {
	csvFile := writeFile(t, "cities.csv", "city,country\nBerlin,DE\n")
	jsonl := writeFile(t, "tags.jsonl", `{"tags":["a","b"]}`+"\n"+`{"tags":["a"]}`+"\n")
	ragged := writeFile(t, "ragged.csv", "city,country\nBerlin,DE\nLyon\n")
	badJSONL := writeFile(t, "bad.jsonl", `{"a":1}`+"\n"+`[1,2]`+"\n")
	headerOnly := writeFile(t, "empty.csv", "city\n")
	txt := writeFile(t, "rows.txt", "city\nBerlin\n")
	sparse := writeFile(t, "sparse.jsonl", `{"tags":1}`+"\n"+`{"other":2}`+"\n")
	for _, c := range []struct {
		name string
		args map[string]any
		data *argtmpl.DataSpec
		op   *argtmpl.DataSpec
		want string
	}{
		{"syntax", map[string]any{"city": "{{seq"}, nil, nil, `ops[0].arguments.city: template 1: unclosed action`},
		{"unknown function", map[string]any{"a": map[string]any{"b": "{{nope}}"}}, nil, nil, `ops[0].arguments.a.b: template 1: function "nope" not defined`},
		{"arity", map[string]any{"x": "{{rand_int 1}}"}, nil, nil, `ops[0].arguments.x: {{rand_int 1}}: rand_int takes 2 arguments, got 1`},
		{"bounds", map[string]any{"x": "{{rand_int 9 1}}"}, nil, nil, `ops[0].arguments.x: {{rand_int 9 1}}: the lower bound 9 is above the upper 1`},
		{"no data file", map[string]any{"city": "{{.city}}"}, nil, nil, `ops[0].arguments.city: {{.city}} needs a data file: set data: on the op or the profile`},
		{"missing column", map[string]any{"city": "x{{.town}}"}, &argtmpl.DataSpec{File: csvFile}, nil, `ops[0].arguments.city: {{.town}}: no column "town" in ` + csvFile + ` (columns: [city country])`},
		{"missing file", map[string]any{"city": "{{.city}}"}, nil, &argtmpl.DataSpec{File: "nope.csv"}, `ops[0].data.file: open nope.csv: no such file or directory`},
		{"bad order", map[string]any{"city": "{{.city}}"}, &argtmpl.DataSpec{File: csvFile, Order: "shuffled"}, nil, `data.order: "shuffled", want sequential or random`},
		{"ragged csv", map[string]any{"city": "{{.city}}"}, &argtmpl.DataSpec{File: ragged}, nil, `data.file: ` + ragged + `: line 3: wrong number of fields`},
		{"bad jsonl", map[string]any{"city": "{{.a}}"}, &argtmpl.DataSpec{File: badJSONL}, nil, `data.file: ` + badJSONL + `: line 2: want one JSON object per line`},
		{"no rows", map[string]any{"city": "{{.city}}"}, &argtmpl.DataSpec{File: headerOnly}, nil, `data.file: ` + headerOnly + `: no rows`},
		{"unknown format", map[string]any{"city": "{{.city}}"}, &argtmpl.DataSpec{File: txt}, nil, `data.file: ` + txt + `: want a .csv, .jsonl or .ndjson file`},
		{"missing key in a jsonl row", map[string]any{"x": "{{.tags}}"}, &argtmpl.DataSpec{File: sparse}, nil, `ops[0].arguments.x: {{.tags}}: row 2 of ` + sparse + ` has no "tags"`},
		{"row fails", map[string]any{"t": "{{index .tags 1}}"}, &argtmpl.DataSpec{File: jsonl}, nil, `ops[0].arguments.t (row 2 of ` + jsonl + `): template 1:2: at <index .tags 1>: error calling index: reflect: slice index out of range`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := argProfile("echo", c.args)
			p.Data, p.Ops[0].Data = c.data, c.op
			_, err := Compile(p, nil)
			var pe *profile.ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("Compile: %v, want a *ProfileError", err)
			}
			var got []string
			for _, e := range pe.Errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff([]string{c.want}, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// Data files in YAML: the file alone or {file, order}; a mistake is
// reported with its field and line.
func TestDataSpecYAML(t *testing.T) {
	p, errs := profile.ParseProfile([]byte("data: a.csv\nops:\n  - method: tools/call\n    tool: echo\n    data: {file: b.jsonl, order: random}\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if diff := cmp.Diff([]*argtmpl.DataSpec{{File: "a.csv"}, {File: "b.jsonl", Order: "random"}}, []*argtmpl.DataSpec{p.Data, p.Ops[0].Data}); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	_, errs = profile.ParseProfile([]byte("ops:\n  - method: tools/call\n    data: {file: b.csv, shuffle: true}\n"))
	if len(errs) != 1 || errs[0].Error() != `ops[0].data (line 3): unknown field "shuffle"` {
		t.Errorf("errors %v, want the unknown field with its line", errs)
	}
}

// A template that fails only at run time (the dry run at compile time met
// no failing case) is counted, and the summary's note says how many
// requests sent a cut value.
func TestRunTimeTemplateFailuresCounted(t *testing.T) {
	jsonl := writeFile(t, "tags.jsonl", `{"tags":["a","b"]}`+"\n")
	p := argProfile("echo", map[string]any{"t": "x{{if eq iteration 3 5}}{{index .tags 9}}{{end}}"})
	p.Data = &argtmpl.DataSpec{File: jsonl}
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for vu := range 2 {
		for it := range int64(10) {
			got := render(t, pl.Ops[0], vu, it)["t"]
			if got != "x" {
				t.Fatalf("VU %d iteration %d: %q, want \"x\"", vu, it, got)
			}
		}
	}
	want := []string{"ops[0].arguments.t: 4 requests sent a value cut where its template failed (first: template 1:26: at <index .tags 9>: error calling index: index out of range: 9)"}
	if diff := cmp.Diff(want, pl.argNotes()); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// The README's example loads as written: its data file is read beside the
// profile, and the ops share the profile's rows in turn.
func TestExampleDataArgsProfile(t *testing.T) {
	p, err := profile.LoadProfile("../examples/data-args/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := render(t, pl.Ops[0], 0, 0)
	if diff := cmp.Diff(map[string]any{"key": "ann-1"}, map[string]any{"key": key["key"]}); diff != "" {
		t.Errorf("count key (-want +got):\n%s", diff)
	}
	if ms, ok := key["ms"].(float64); !ok || ms < 0 || ms > 2 {
		t.Errorf("ms %v: want a number in [0, 2]", key["ms"])
	}
	text := render(t, pl.Ops[1], 1, 4)["text"].(string)
	if !regexp.MustCompile(`^VU 2, iteration 4, from São Paulo, request [0-9a-f-]{36}$`).MatchString(text) {
		t.Errorf("echo text %q", text)
	}
	if got := render(t, pl.Ops[2], 0, 1)["name"]; got != "cy (Lyon)" {
		t.Errorf("prompt name %q, want \"cy (Lyon)\"", got)
	}
}

// Render is safe for concurrent use: 8 goroutines × 100 requests get
// seq 1 … 800 once each, and a text/template value of a request reads the
// same seq as its fast values.
func TestRenderConcurrent(t *testing.T) {
	op := compileOne(t, argProfile("echo", map[string]any{"a": "{{seq}}", "b": `{{printf "%d" seq}}`}))
	var mu sync.Mutex
	seen := map[float64]int{}
	var wg sync.WaitGroup
	for vu := range 8 {
		wg.Go(func() {
			for it := range int64(100) {
				got := render(t, op, vu, it)
				if b := strconv.FormatFloat(got["a"].(float64), 'f', -1, 64); b != got["b"] {
					t.Errorf("a %v, b %v: want the same seq", got["a"], got["b"])
				}
				mu.Lock()
				seen[got["a"].(float64)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for i := 1; i <= 800; i++ {
		if seen[float64(i)] != 1 {
			t.Errorf("seq %d sent %d times, want once", i, seen[float64(i)])
		}
	}
}
