package workload

import (
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
)

// watchEngine records the engine of the next run (the worker pool's
// figures) and restores the hook when the test ends.
func watchEngine(t *testing.T) func() *engine {
	var mu sync.Mutex
	var got *engine
	testEngineDone = func(e *engine) { mu.Lock(); got = e; mu.Unlock() }
	t.Cleanup(func() { testEngineDone = nil })
	return func() *engine { mu.Lock(); defer mu.Unlock(); return got }
}

// In the open model an idle session holds no goroutine: 50 sessions at
// 100 ops/s (the server answers at once, in fake time) are run by one or
// two workers, and the ops rotate over the sessions, idle longest first,
// so each session runs exactly its share; no op starts late for want of
// a worker. A goroutine per VU (the old engine) would have run 50, with
// the ops spread by claim order.
func TestOpenModelPoolRotatesIdleSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		engineOf := watchEngine(t)
		fake := mcptest.New()
		var mu sync.Mutex
		calls := map[string]int{}
		inits := 0
		fake.Handle(mcptest.K("POST", mcptest.Any, "initialize", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
			mu.Lock()
			inits++
			w.Header().Set("Mcp-Session-Id", "s"+strconv.Itoa(inits))
			mu.Unlock()
			w.Result(r, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "fake", "version": "0"}})
		})
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			mu.Lock()
			calls[r.Session]++
			mu.Unlock()
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := echoProfile()
		p.VUs, p.MaxVUs, p.Rate, p.Duration = 50, 50, 100, profile.Duration(2*time.Second)
		sum := runFake(t, p, fake)
		if sum.All.Count != 200 || sum.All.Errors != 0 || sum.All.Dropped != 0 {
			t.Fatalf("completed %d (errors %d, dropped %d), want 200 clean", sum.All.Count, sum.All.Errors, sum.All.Dropped)
		}
		if len(calls) != 50 {
			t.Fatalf("%d sessions ran ops, want all 50: %v", len(calls), calls)
		}
		// Round robin: each session runs 4. The sessions join the queue
		// as they get ready, concurrently, and the first op is due at once,
		// so the session that ran it may rejoin the queue ahead of some
		// still getting ready: then it runs 5 and the one that joined last
		// runs 3. Any other spread is a broken rotation.
		spread := map[int]int{}
		for s, n := range calls {
			spread[n]++
			if n < 3 || n > 5 {
				t.Errorf("session %s ran %d ops, want 4 (200 over 50, round robin)", s, n)
			}
		}
		if spread[5] > 1 || spread[3] != spread[5] {
			t.Errorf("ops per session %v (count: sessions), want 4 each, or one 5 and one 3 when the first op's session rejoined the queue early", spread)
		}
		e := engineOf()
		if w := e.peakWorkers.Load(); w < 1 || w > 3 {
			t.Errorf("peak workers %d, want 1 to 3 for 50 idle sessions", w)
		}
		// In fake time an op starts on time to the histogram's 1 µs; one
		// that waited for a worker (watchArrivals: 2 ms overdue) would not.
		if sum.Generator.StartLag.Max > 0.001 {
			t.Errorf("start lag max %.3f ms, want ≤ 0.001: an op waited for a worker", sum.Generator.StartLag.Max)
		}
		if sum.VUs != 50 {
			t.Errorf("VUs %d, want 50", sum.VUs)
		}
	})
}
