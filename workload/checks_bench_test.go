package workload

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// BenchmarkOpenModelOneCheck is BenchmarkOpenModel with one check on the
// op (content.0.text == "hello", which mcptest.BenchSSE answers): its
// added cost per op, against BenchmarkOpenModel run beside it.
func BenchmarkOpenModelOneCheck(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(mcptest.BenchSSE))
	defer srv.Close()
	const rate = 4000
	p := echoProfile()
	p.URL, p.Rate, p.VUs, p.MaxVUs = srv.URL+"/mcp", rate, 64, 64
	p.Duration = profile.Duration(time.Duration(b.N) * time.Second / rate)
	p.Ops[0].Checks = []string{`content.0.text == "hello"`}
	pl, err := Compile(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	u0 := results.ReadUsage()
	sum, err := Run(b.Context(), pl, Options{})
	u1 := results.ReadUsage()
	if err != nil {
		b.Fatal(err)
	}
	n := sum.All.Count
	if n < int64(b.N)*9/10 || sum.All.Errors > 0 || (n > 0 && (len(sum.Ops[0].Checks) != 1 || sum.Ops[0].Checks[0].Failed != 0 || sum.Ops[0].Checks[0].Passed != n)) {
		b.Fatalf("%d ops completed (%d errors) of %d; checks %+v", n, sum.All.Errors, b.N, sum.Ops[0].Checks)
	}
	b.ReportMetric(float64(u1.CPU-u0.CPU)/float64(time.Microsecond)/float64(n), "µs-cpu/op")
}
