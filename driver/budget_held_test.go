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

// Large answers of about one size with a Content-Length reuse one buffer
// kept by the budget, not a new one each left to the collector (60 MiB
// answers reached 385 MiB of RSS against a 128 MiB budget): after the
// first, four more 4 MiB answers (sizes differing by their id's digits)
// allocate less than one of them; a session's answer is intact each time.
func TestSizedAnswersReuseTheirBuffer(t *testing.T) {
	const size = 4 << 20
	fill := []byte(strings.Repeat("f", size-100)) // made once: the server allocates nothing large per answer
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		head := `{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{"content":[{"type":"text","text":"`
		tail := `"}]}}`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(fill)+len(tail)))
		w.Write([]byte(head))
		w.Write(fill)
		w.Write([]byte(tail))
	})
	ts := httptest.NewServer(fake)
	defer ts.Close()
	budget := driver.NewBudget(16 << 20)
	s, _ := driver.NewSession(&driver.Config{URL: ts.URL + "/mcp", Budget: budget, MaxMessageBytes: 8 << 20}, 0)
	var init driver.Result
	if err := s.Initialize(t.Context(), &init); err != nil {
		t.Fatal(err)
	}
	call := func() {
		var res driver.Result
		s.Do(t.Context(), callEcho(t), &res)
		if res.Err != nil || res.BytesIn < size-100 {
			t.Fatalf("answer: %v, %d bytes", res.Err, res.BytesIn)
		}
	}
	call()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 4 {
		call()
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size {
		t.Fatalf("4 more answers of %d MiB allocated %.1f MiB: want their buffer reused", size>>20, float64(alloc)/(1<<20))
	}
	if st := budget.Stats(); st.Peak > 16<<20 || st.Peak < size-100 {
		t.Fatalf("budget peak %d", st.Peak)
	}
}
