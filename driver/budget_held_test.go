package driver_test

import (
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// What the memory budget reports is what a large answer holds: every byte
// a session allocates to read one (a valid answer, with and without its
// Content-Length) is within what it reserved, so the summary's "peak in
// use" is not a third of the truth. Allocation is counted from a collected
// heap (runtime.MemStats.TotalAlloc: a bound on what the read can hold).
func TestLargeAnswerHeldWithinReservation(t *testing.T) {
	const limit = 16 << 20
	tests := []struct {
		name string
		size int
		cl   bool
	}{
		{"Content-Length", 12 << 20, true},
		{"chunked", 12 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"`
			tail := `"}]}}`
			body := []byte(head + strings.Repeat("y", tt.size-len(head)-len(tail)) + tail)
			fake := mcptest.New()
			fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tt.cl {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				}
				w.Write(body)
			})
			ts := httptest.NewServer(fake)
			defer ts.Close()
			budget := driver.NewBudget(2 * limit)
			cfg := &driver.Config{URL: ts.URL + "/mcp", Budget: budget, MaxMessageBytes: limit}
			s, _ := driver.NewSession(cfg, 0)
			var init driver.Result
			if err := s.Initialize(t.Context(), &init); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&before)
			var res driver.Result
			s.Do(t.Context(), callEcho(t), &res)
			runtime.ReadMemStats(&after)
			if res.Err != nil {
				t.Fatalf("a valid %d-byte answer: %v", tt.size, res.Err)
			}
			alloc := int64(after.TotalAlloc - before.TotalAlloc)
			st := budget.Stats()
			const slack = 1 << 20 // the HTTP exchange, the fake server, the session's small buffers
			if st.Peak < int64(tt.size) || alloc > st.Peak+slack {
				t.Fatalf("read a %d MiB answer allocating %.1f MiB, with %.1f MiB reserved: the budget must cover what is held",
					tt.size>>20, float64(alloc)/(1<<20), float64(st.Peak)/(1<<20))
			}
		})
	}
}
