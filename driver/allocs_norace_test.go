//go:build !race

package driver_test

import (
	"testing"

	"github.com/mcpbench/mcpbench/driver"
)

// TestToolsCallAllocs holds the hot path's allocations per tools/call
// (with a progress token) to the ceilings: ≤ 12 answered over SSE,
// ≤ 8 answered with JSON. rawServer allocates nothing per request, so the
// count is the client's. (Not under -race, which drops sync.Pool items at
// random.)
func TestToolsCallAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		json bool
		max  float64
	}{{"sse", false, 12}, {"json", true, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startRawServer(t, tc.json)
			s, err := driver.NewSession(&driver.Config{URL: srv.url()}, 1)
			if err != nil {
				t.Fatal(err)
			}
			var res driver.Result
			if err := s.Initialize(t.Context(), &res); err != nil {
				t.Fatal(err)
			}
			o, _ := driver.NewOp("", "tools/call", []byte(`{"name":"echo","arguments":{"text":"hello"}}`), true)
			call := func() {
				res.Reset()
				s.Do(t.Context(), o, &res)
				if res.Err != nil {
					t.Fatal(res.Err)
				}
			}
			call() // buffers and the connection made
			if n := testing.AllocsPerRun(200, call); n > tc.max {
				t.Errorf("%.1f allocations per call, want ≤ %.0f", n, tc.max)
			} else {
				t.Logf("%.1f allocations per call (ceiling %.0f)", n, tc.max)
			}
			s.Close(t.Context())
		})
	}
}
