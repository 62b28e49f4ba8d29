package workload

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// benchSSE is the benchmarks' minimal SSE server (mcptest.BenchSSE).
var benchSSE = mcptest.BenchSSE

// BenchmarkArguments is the driver's hot path (one tools/call with a
// progress token, answered over SSE in-process; allocations include the
// server's) with arguments of the same shape fixed, templated, drawn from
// a CSV file, and through a full text/template (printf). Fixed and
// templated must be within 10 % in allocations per op.
func BenchmarkArguments(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(benchSSE))
	defer ts.Close()
	csvFile := filepath.Join(b.TempDir(), "users.csv")
	if err := os.WriteFile(csvFile, []byte("user,city\nann,Zürich\nbob,Berlin\ncy,Lyon\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"fixed", map[string]any{"text": "hello-17", "n": 42, "id": "5b0f3c3e-8f0e-4d1a-9c61-0d6f4b2a7e19", "user": "ann"}},
		{"templated", map[string]any{"text": "hello-{{seq}}", "n": "{{rand_int 1 100}}", "id": "{{uuid}}", "user": "{{rand_string 3}}"}},
		{"data", map[string]any{"text": "hello-{{seq}}", "n": "{{rand_int 1 100}}", "id": "{{uuid}}", "user": "{{.user}}"}},
		{"printf", map[string]any{"text": `{{printf "hello-%d" seq}}`, "n": 42, "id": "5b0f3c3e-8f0e-4d1a-9c61-0d6f4b2a7e19", "user": "ann"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := argProfile("echo", c.args)
			p.URL, p.Ops[0].Progress, p.Data = ts.URL, true, &argtmpl.DataSpec{File: csvFile}
			pl, err := Compile(p, nil)
			if err != nil {
				b.Fatal(err)
			}
			op := pl.Ops[0]
			s, err := driver.NewSession(&pl.Driver, 1)
			if err != nil {
				b.Fatal(err)
			}
			var res driver.Result
			if err := s.Initialize(b.Context(), &res); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var it int64
			for b.Loop() {
				res.Reset()
				res.VU, res.Iteration = 1, it
				it++
				s.Do(b.Context(), op, &res)
				if res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}

// BenchmarkRender is Op.Render alone: the cost templated arguments add to
// a request.
func BenchmarkRender(b *testing.B) {
	p := argProfile("echo", map[string]any{"text": "hello-{{seq}}", "n": "{{rand_int 1 100}}", "id": "{{uuid}}", "user": "{{rand_string 3}}"})
	pl, err := Compile(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	op := pl.Ops[0]
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	var it int64
	for b.Loop() {
		buf = op.Render(buf[:0], driver.RenderContext{VU: 1, Iteration: it})
		it++
	}
}
