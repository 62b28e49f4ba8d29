package driver_test

import (
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// BenchmarkIdleSessionMemory measures what an idle session with a GET
// stream costs the client: b.N sessions are opened (initialize, one tool
// call, the GET stream) against the server at $MCPBENCH_MEM_URL (a
// separate `mcpbench serve` process, so its memory is not counted), then
// live heap and goroutine stacks after a GC are divided by b.N. Skipped
// without the variable. Run: MCPBENCH_MEM_URL=http://127.0.0.1:18095/mcp
// go test ./driver -run xxx -bench IdleSessionMemory -benchtime 2000x
// stackKiB/session is the goroutine stacks' part (an idle GET stream's
// goroutine: 2 KiB). With MCPBENCH_MEM_PROF=FILE it also writes the live
// heap's profile (add -memprofilerate 1 for every allocation) and the
// goroutines' stacks (FILE.goroutines) while the sessions are open.
func BenchmarkIdleSessionMemory(b *testing.B) {
	url := os.Getenv("MCPBENCH_MEM_URL")
	if url == "" {
		b.Skip("set MCPBENCH_MEM_URL to a separate server's endpoint")
	}
	cfg := &driver.Config{URL: url, RequestTimeout: 10 * time.Second}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	op, _ := driver.NewOp("echo", "tools/call", []byte(`{"name":"echo","arguments":{"text":"hi"}}`), false)
	live := func() (total, stacks uint64) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse, m.StackInuse
	}
	before, stacksBefore := live()
	sessions := make([]*driver.Session, 0, b.N)
	for i := range b.N {
		s, _ := driver.NewSession(cfg, i)
		var res driver.Result
		if err := s.Initialize(b.Context(), &res); err != nil {
			b.Fatal(err)
		}
		s.Do(b.Context(), op, &res)
		if err := s.OpenStream(b.Context()); err != nil {
			b.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	after, stacksAfter := live()
	if f := os.Getenv("MCPBENCH_MEM_PROF"); f != "" {
		w, _ := os.Create(f)
		pprof.Lookup("heap").WriteTo(w, 0)
		w.Close()
		w, _ = os.Create(f + ".goroutines")
		pprof.Lookup("goroutine").WriteTo(w, 1)
		w.Close()
	}
	b.ReportMetric(float64(after-before)/float64(b.N)/1024, "KiB/session")
	b.ReportMetric(float64(stacksAfter-stacksBefore)/float64(b.N)/1024, "stackKiB/session")
	b.StopTimer()
	for _, s := range sessions {
		s.Close(b.Context())
	}
}
