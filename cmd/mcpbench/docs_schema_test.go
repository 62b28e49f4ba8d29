package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/metrics"
)

// docs/reference/summary-json.md is summary.json's schema: every object
// the file holds, each field with its JSON name, its type and the doc
// comment of the Go field it comes from, generated from the summary's
// types (reflection for the shape, the package's source for the
// comments). The test regenerates the page and fails when the committed
// one differs, so a field added, renamed or documented anew without the
// page fails CI. To rewrite it:
//
//	go test ./cmd/mcpbench -run TestDocsSummarySchema -update
//	MCPBENCH_UPDATE_DOCS=1 go test ./cmd/mcpbench -run TestDocsSummarySchema -count=1

const summarySchemaDoc = "../../docs/reference/summary-json.md"

const summarySchemaHead = `# summary.json

` + "`summary.json`" + ` in a results directory is exactly the summary the run printed, as JSON (` + "`--format json`" + `
prints the same object). This page is generated from the Go types it is written from — a test fails when it is
stale (` + "`go test ./cmd/mcpbench -run TestDocsSummarySchema`; `-update` rewrites it" + `) — so each field's
meaning is its Go doc comment. The other files of a results directory: [results.md](results.md); the metric names
thresholds read from these numbers: [metrics.md](metrics.md).

Types: ` + "`string`, `number`, `bool`; `time` is an RFC 3339 string; `[]T` an array of T; `{string: T}` an object\n" +
	"whose values are T; a field marked *omitempty* is left out when it is zero, empty or null." + `

`

// genSummarySchema renders the schema page of metrics.Summary, and
// returns the fields it visited ("Type.Field").
func genSummarySchema(t *testing.T) (string, map[string]bool) {
	t.Helper()
	comments := fieldComments{}
	visited := map[string]bool{}
	var b strings.Builder
	b.WriteString(summarySchemaHead)
	root := reflect.TypeOf(metrics.Summary{})
	queue := []reflect.Type{root}
	seen := map[reflect.Type]bool{root: true}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if st == root {
			b.WriteString("## The top-level object (`Summary`)\n\n")
		} else {
			fmt.Fprintf(&b, "## %s\n\n", st.Name())
		}
		b.WriteString("| field | type | meaning |\n|---|---|---|\n")
		var row func(st reflect.Type)
		row = func(st reflect.Type) {
			for i := range st.NumField() {
				f := st.Field(i)
				if !f.IsExported() {
					continue
				}
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" {
					continue
				}
				visited[st.Name()+"."+f.Name] = true
				if f.Anonymous && name == "" && derefStruct(f.Type) != nil {
					row(derefStruct(f.Type)) // an embedded struct's fields are the object's own
					continue
				}
				if name == "" {
					name = f.Name
				}
				typ, refs := jsonType(f.Type)
				for _, r := range refs {
					if !seen[r] {
						seen[r] = true
						queue = append(queue, r)
					}
				}
				if strings.Contains(opts, "omitempty") {
					typ += " *omitempty*"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, typ, mdCell(comments.of(t, st, f.Name)))
			}
		}
		row(st)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n", visited
}

var (
	timeType      = reflect.TypeOf(time.Time{})
	durationType  = reflect.TypeOf(time.Duration(0))
	marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// derefStruct is t (or what t points to) when it is a struct, else nil.
func derefStruct(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

// jsonType says how encoding/json writes a value of t, with the struct
// types it refers to (each a section of the page, linked).
func jsonType(t reflect.Type) (string, []reflect.Type) {
	switch {
	case t == timeType:
		return "time", nil
	case t == durationType:
		return "number (ns)", nil
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return "`" + t.Name() + "` (its own JSON)", nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonType(t.Elem())
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string (base64)", nil
		}
		s, refs := jsonType(t.Elem())
		return "[]" + s, refs
	case reflect.Map:
		s, refs := jsonType(t.Elem())
		return "{string: " + s + "}", refs
	case reflect.Struct:
		if t.Name() == "" {
			return "object", nil
		}
		return "[" + t.Name() + "](#" + strings.ToLower(t.Name()) + ")", []reflect.Type{t}
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "bool", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Interface:
		return "any", nil
	}
	return t.Kind().String(), nil
}

// mdCell makes a doc comment one table cell: one line, pipes escaped.
func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// fieldComments reads the doc comments of struct fields from the source
// of the packages the types are declared in (by their import path, in
// this module), package by package on first use.
type fieldComments map[string]map[string]string // package path → "Type.Field" → comment

const modulePath = "github.com/mcpbench/mcpbench"

func (fc fieldComments) of(t *testing.T, st reflect.Type, field string) string {
	pkg := st.PkgPath()
	if _, ok := fc[pkg]; !ok {
		fc[pkg] = parseFieldComments(t, pkg)
	}
	if c := fc[pkg][st.Name()+"."+field]; strings.TrimSpace(c) != "" {
		return c
	}
	return schemaNotes[st.Name()+"."+field]
}

// schemaNotes say what a field without a doc comment of its own holds
// (the source's comment wins once there is one).
var schemaNotes = map[string]string{
	"Summary.Tool":              "the mcpbench version that wrote the summary",
	"Summary.Target":            "the endpoint (credentials redacted); with several --url, the first",
	"Summary.Embedded":          "true when the target was the embedded reference server",
	"Summary.Protocol":          "the MCP protocol version negotiated",
	"Summary.Profile":           "the profile's name (\"tool NAME\" with --tool)",
	"Summary.Started":           "when the measured window began",
	"Summary.WarmupS":           "the warm-up before the window, seconds (its results discarded)",
	"Summary.MaxVUs":            "the VU cap (--max-vus; the open model's default: rate × max delay)",
	"Summary.Interrupted":       "a signal or an abort ended the window early",
	"Summary.StopReason":        "why the run stopped before its end (an interrupt, --abort-on-fail)",
	"Summary.Ops":               "one row per op of the mix (or scenario step), as the latency table prints them",
	"Summary.All":               "every op together: the table's \"all\" row",
	"Summary.Sessions":          "the MCP sessions: opened, failed, closed, initialize time",
	"Summary.GETStreams":        "the standalone GET streams (with --get-stream or a profile's get_stream)",
	"Summary.Generator":         "what mcpbench itself cost: CPU, memory, start lag",
	"Warning.ID":                "the stable id (W-START-LAG …): its section of docs/troubleshooting.md",
	"Warning.Text":              "what was seen, with its numbers",
	"Warning.Cause":             "why, as the numbers show it",
	"Warning.Remedy":            "what to do about it",
	"OpSummary.Name":            "the op's label (tools/call:echo, agent#2:call …; \"all\" for the total)",
	"OpSummary.Count":           "completed ops of the measured window (errors included)",
	"OpSummary.Rate":            "completed ops per second",
	"OpSummary.Errors":          "failed ops",
	"OpSummary.ErrorsByClass":   "failed ops by error class (transport, timeout, http-status, …)",
	"OpSummary.Dropped":         "open model: arrivals no VU could start within the max delay",
	"OpSummary.Interrupted":     "ops cut short by the end of the run (kept out of latency)",
	"OpSummary.ThrottleWaitS":   "the seconds VUs waited on Retry-After",
	"OpSummary.OfferedRate":     "the offered ops' rate over the window",
	"OpSummary.TTFB":            "time to first byte, ms",
	"OpSummary.BytesIn":         "response bytes read",
	"OpSummary.BytesOut":        "request bytes sent",
	"OpSummary.Events":          "SSE events read on the op's response streams",
	"OpSummary.Progress":        "progress notifications received",
	"OpSummary.Reinits":         "sessions re-initialized after a 404",
	"OpSummary.Reissues":        "requests re-issued (2026-07-28, or --reissue)",
	"OpSummary.Resumes":         "the resumes of broken response streams",
	"OpSummary.Ledger":          "the replay ledger's verdicts on the op's response streams",
	"MCPSummary.TailWaitS":      "the seconds VUs waited on unterminated streams' tails",
	"Latency.P50":               "50th percentile, ms",
	"Latency.P90":               "90th percentile, ms",
	"Latency.P99":               "99th percentile, ms",
	"Latency.P999":              "99.9th percentile, ms",
	"Latency.Max":               "the maximum, ms",
	"Latency.Mean":              "the mean, ms",
	"SessionSummary.Opened":     "sessions initialized",
	"SessionSummary.Failed":     "sessions whose initialize failed",
	"SessionSummary.Closed":     "sessions closed with DELETE",
	"SessionSummary.CloseFails": "DELETEs that failed or were cut",
	"SessionSummary.Initialize": "initialize time, ms",
	"Generator.CPUSeconds":      "CPU seconds mcpbench used (user + system)",
	"Generator.CPUPerOpUS":      "CPU µs per completed op",
	"Generator.Cores":           "mean cores used over the window",
	"Generator.MaxRSSMB":        "the process's peak resident memory, MB",
	"Generator.NumCPU":          "the machine's cores",
	"Generator.IncludesServer":  "the embedded server ran in the same process, so its cost is in these numbers",
}

func parseFieldComments(t *testing.T, pkg string) map[string]string {
	t.Helper()
	out := map[string]string{}
	rel, ok := strings.CutPrefix(pkg, modulePath)
	if !ok {
		return out // another module's type: no comments here
	}
	dir := filepath.Join("../..", filepath.FromSlash(strings.TrimPrefix(rel, "/")))
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fl := range st.Fields.List {
				text := ""
				switch {
				case fl.Doc != nil:
					text = fl.Doc.Text()
				case fl.Comment != nil:
					text = fl.Comment.Text()
				}
				for _, n := range fl.Names {
					out[ts.Name.Name+"."+n.Name] = text
				}
			}
			return true
		})
	}
	return out
}

func TestDocsSummarySchema(t *testing.T) {
	page, visited := genSummarySchema(t)
	for k := range schemaNotes {
		if !visited[k] {
			t.Errorf("schemaNotes[%q]: summary.json has no such field (renamed? moved?)", k)
		}
	}
	if updateDocs() {
		if err := os.WriteFile(summarySchemaDoc, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s from the summary's types", summarySchemaDoc)
		return
	}
	have, err := os.ReadFile(summarySchemaDoc)
	if err != nil {
		t.Fatalf("%v; generate it with: go test ./cmd/mcpbench -run TestDocsSummarySchema -update", err)
	}
	if string(have) != page {
		t.Errorf("docs/reference/summary-json.md is stale: it differs from the schema the summary's types give (first difference at line %d); regenerate with: go test ./cmd/mcpbench -run TestDocsSummarySchema -update (or MCPBENCH_UPDATE_DOCS=1), and commit it", firstDiffLine(have, []byte(page)))
	}
}
