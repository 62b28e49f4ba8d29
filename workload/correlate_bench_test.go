package workload

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
)

// BenchmarkCorrelate is an iteration of two tools/call steps through the
// driver (in-process SSE server; allocations include the server's): the
// second sends a fixed text ("fixed"), or the first's content.0.text read
// with {{step}} ("step": the first keeps it through Op.Inspect, the
// second renders it). The difference is what correlation costs.
func BenchmarkCorrelate(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(benchSSE))
	defer ts.Close()
	for _, c := range []struct{ name, text string }{{"fixed", "hello"}, {"step", `{{step "a" "content.0.text"}}`}} {
		b.Run(c.name, func(b *testing.B) {
			p := &profile.Profile{URL: ts.URL, VUs: 1, Protocol: driver.Protocol20251125, Ops: []profile.OpSpec{
				{Name: "a", Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": "hello"}},
				{Name: "b", Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": c.text}},
			}, Scenario: []profile.StepSpec{{Op: "a"}, {Op: "b"}}}
			pl, err := Compile(p, nil)
			if err != nil {
				b.Fatal(err)
			}
			pl.corr.start()
			vv := pl.corr.forVU(1)
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
				for op := range 2 {
					if err := pl.corr.before(vv, op); err != nil {
						b.Fatal(err)
					}
					res.Reset()
					res.VU, res.Iteration = 1, it
					it++
					s.Do(b.Context(), pl.Ops[op], &res)
					if res.Err != nil {
						b.Fatal(res.Err)
					}
					pl.corr.after(vv, op, res.Class)
				}
			}
			if c.name == "step" && string(vv.vals[0].Raw) != `"hello"` {
				b.Fatalf("kept %q", vv.vals[0].Raw)
			}
		})
	}
}
