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

// BenchmarkOpenModel is the engine's cost per op in the open model: b.N
// tools/call ops at 4000/s over 64 sessions against a minimal in-process
// SSE server (mcptest.BenchSSE), loopback TCP. It reports the process's
// CPU per completed op (client and server together: compare runs of one
// machine) besides the wall time. Run: go test ./workload -run xxx -bench
// OpenModel -benchtime 20000x -count 6
func BenchmarkOpenModel(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(mcptest.BenchSSE))
	defer srv.Close()
	const rate = 4000
	p := echoProfile()
	p.URL, p.Rate, p.VUs, p.MaxVUs = srv.URL+"/mcp", rate, 64, 64
	p.Duration = profile.Duration(time.Duration(b.N) * time.Second / rate)
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
	if n < int64(b.N)*9/10 || sum.All.Errors > 0 {
		b.Fatalf("%d ops completed (%d errors) of %d", n, sum.All.Errors, b.N)
	}
	b.ReportMetric(float64(u1.CPU-u0.CPU)/float64(time.Microsecond)/float64(n), "µs-cpu/op")
}
