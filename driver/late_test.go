package driver_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// A server that answers JSON at once and sends the request's progress on
// the GET stream 100 ms later: with SettleBeside the lane is free at the
// response (Do returns then, Result.Pending set), the late progress is
// still matched to its request and judged (misrouted, none lost) when the
// Result is settled beside the lane, and 4 lanes run 4 requests at once.
// Without it (the control) each lane waits for the progress.
func TestSettleBesideFreesTheLane(t *testing.T) {
	const lanes, calls, expect = 4, 5, 3
	const lateBy = 100 * time.Millisecond
	for _, beside := range []bool{false, true} {
		name := map[bool]string{false: "waits", true: "beside"}[beside]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := mcptest.New()
				msgs := make(chan any, 64)
				getWith(fake, msgs)
				fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
					tok := r.ProgressToken()
					w.Result(r, okText("ok"))
					go func() {
						time.Sleep(lateBy)
						for i := 1; i <= expect; i++ {
							msgs <- mcptest.Progress(tok, float64(i), expect)
						}
					}()
				})
				s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.SettleBeside = beside })
				defer stop()
				if err := s.OpenStream(t.Context()); err != nil {
					t.Fatal(err)
				}
				o := callEcho(t)
				o.ExpectProgress = expect
				start := time.Now()
				var mu sync.Mutex
				var settled []*driver.Result
				var wg, settles sync.WaitGroup
				for _, l := range s.Lanes(lanes) {
					wg.Go(func() {
						var res driver.Result
						for range calls {
							res.Reset()
							l.Do(t.Context(), o, &res)
							if res.Pending == nil {
								mu.Lock()
								settled = append(settled, res.Clone())
								mu.Unlock()
								continue
							}
							r := res.Clone()
							settles.Go(func() {
								r.Settle()
								mu.Lock()
								settled = append(settled, r)
								mu.Unlock()
							})
						}
					})
				}
				wg.Wait()
				lanesDone := time.Since(start)
				settles.Wait()
				var sum [driver.NumVerdicts]int
				for _, r := range settled {
					if r.Err != nil {
						t.Fatalf("error %v", r.Err)
					}
					for v, c := range r.Ledger.Counts {
						sum[v] += c
					}
				}
				want := driver.VerdictMap(counts(driver.VerdictMisrouted, lanes*calls*expect))
				if d := cmp.Diff(want, driver.VerdictMap(sum)); d != "" {
					t.Errorf("verdicts (-want +got):\n%s", d)
				}
				if len(settled) != lanes*calls {
					t.Errorf("%d results, want %d", len(settled), lanes*calls)
				}
				if beside {
					// Fake time: the answers take no time, so a lane that never
					// waits finishes its calls at once.
					if lanesDone != 0 {
						t.Errorf("the lanes took %v: want 0, nothing held them", lanesDone)
					}
				} else if want := calls * lateBy; lanesDone < want {
					t.Errorf("control: the lanes took %v, want each held %v per call", lanesDone, lateBy)
				}
				s.Close(t.Context())
			})
		})
	}
}
