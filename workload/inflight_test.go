package workload

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
)

// --concurrency 4 against a server that answers JSON in 10 ms and sends
// each call's 3 progress notifications on the GET stream 100 ms later: the
// lanes do not wait for them (a lane is free at its response), so the
// session keeps 4 requests in flight — the summary's measured mean says
// so, and the calls are those of 4 lanes back to back — while every late
// notification is still matched to its call and judged misrouted, none
// lost. A lane that waited for them would run a call per 110 ms: 4 × 1 s /
// 110 ms = 36 calls, a mean of 0.36 in flight.
func TestConcurrencyOffersWhatItSays(t *testing.T) {
	const work, late, expect = 10 * time.Millisecond, 100 * time.Millisecond, 3
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		msgs := make(chan any, 1024)
		fake.Handle(mcptest.K("GET", mcptest.Any, "", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.StartSSE()
			w.Flush()
			for {
				select {
				case <-r.Ctx.Done():
					return
				case m := <-msgs:
					w.Events(mcptest.Event{Data: m})
				}
			}
		})
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(work)
			tok := r.ProgressToken()
			w.Result(r, map[string]any{"content": []any{}})
			go func() {
				time.Sleep(late)
				for i := 1; i <= expect; i++ {
					msgs <- mcptest.Progress(tok, float64(i), expect)
				}
			}()
		})
		p := &profile.Profile{Name: "lanes", URL: "http://fake/mcp", VUs: 1, Concurrency: 4, Duration: profile.Duration(time.Second),
			GETStream: true, Protocol: driver.Protocol20251125,
			Ops: []profile.OpSpec{{Method: "tools/call", Tool: "progress", Progress: true, Weight: weight(1), Expect: profile.Expect{Progress: expect}}}}
		sum := runFake(t, p, fake)
		n := sum.All.Count
		if d := cmp.Diff(map[string]int64{"post:misrouted": n * expect}, faults(sum)); d != "" || sum.All.Errors != 0 {
			t.Fatalf("verdicts (-want +got):\n%s errors %v", d, sum.All.ErrorsByClass)
		}
		// 4 lanes × 1 s / 10 ms, less the calls cut at the edges.
		if n < 390 || n > 400 {
			t.Errorf("%d calls completed, want about 400 (4 lanes back to back)", n)
		}
		if sum.Concurrency != 4 || sum.InFlight < 3.9 || sum.InFlight > 4.01 {
			t.Errorf("concurrency %d, measured in flight %.3f: want 4 and about 4", sum.Concurrency, sum.InFlight)
		}
	})
}
