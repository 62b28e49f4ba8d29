package workload

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// Planted overload: 1000 arrivals/s for 6 s on a server that takes 1.5 s
// per call, with at most 40 VUs: most arrivals wait for a VU and are
// dropped when claimed over the 1 s max delay, seconds after their
// intended start. intervals.csv counts every op by its intended start, so
// no interval holds more completed and dropped ops than the schedule made
// due in it (before: one interval took the drops of several, thousands
// in one second of a 1000/s run), the rows add up to the summary's
// totals, exactly, and each row's percentiles are those of its ops by
// intended start (before: by completion, so a row with 0 completed showed
// the late ones' p99, and one with completions none).
func TestIntervalsCountDropsByIntendedStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(1500 * time.Millisecond)
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs, p.Duration = 1000, 40, 40, profile.Duration(6*time.Second)
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		pl, err := Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		w, err := results.NewResultsDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(t.Context(), pl, Options{Sinks: []results.Sink{w}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Err(); err != nil {
			t.Fatal(err)
		}
		if sum.Dropped < 3000 {
			t.Fatalf("dropped %d of 6000: the overload was not planted", sum.Dropped)
		}
		res, err := results.ReadResults(dir)
		if err != nil {
			t.Fatal(err)
		}
		var count, dropped, errs int64
		for i, iv := range res.Intervals {
			due := int64(math.Round(iv.TargetRate * iv.Interval))
			if iv.All.Count+iv.Dropped > due {
				t.Errorf("interval %d (t %.1f s): %d completed + %d dropped > %d arrivals due in it", i, iv.T, iv.All.Count, iv.Dropped, due)
			}
			if iv.Rate > iv.TargetRate+1e-9 && iv.TargetRate > 0 {
				t.Errorf("interval %d: achieved %.1f/s of %.1f/s offered", i, iv.Rate, iv.TargetRate)
			}
			// The percentiles are those of the row's ops by intended start:
			// none without a completed op; with one, each took the fake's
			// 1.5 s after waiting at most the 1 s max delay for a VU.
			op, ok := iv.Ops["tools/call:echo"]
			if !ok {
				t.Fatalf("interval %d: no op tools/call:echo in %v", i, iv.Ops)
			}
			for _, o := range []results.IntervalOpRec{iv.All, op} {
				switch {
				case o.Count == 0 && (o.P50 != 0 || o.P90 != 0 || o.P99 != 0 || o.Max != 0):
					t.Errorf("interval %d (t %.1f s): 0 completed, but p50 %.3f p99 %.3f max %.3f ms", i, iv.T, o.P50, o.P99, o.Max)
				case o.Count > 0 && (o.P50 < 1500 || o.Max > 2503 || o.Max < o.P99):
					t.Errorf("interval %d (t %.1f s): %d completed, p50 %.3f p99 %.3f max %.3f ms; each took 1500 to 2500 ms", i, iv.T, o.Count, o.P50, o.P99, o.Max)
				}
			}
			count, dropped, errs = count+iv.All.Count, dropped+iv.Dropped, errs+iv.All.Errors
		}
		if count != sum.All.Count || dropped != sum.Dropped || errs != sum.All.Errors {
			t.Errorf("rows add up to %d completed, %d dropped, %d errors; the summary says %d, %d, %d", count, dropped, errs, sum.All.Count, sum.Dropped, sum.All.Errors)
		}
	})
}
