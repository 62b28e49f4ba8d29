package metrics

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// Planted: four 1 s intervals, two ops. Op a: interval 0 has 3 ops
// answered in it (10, 20, 30 ms) and 2 answered late, during interval 2
// (2000 ms) and interval 3 (2700 ms); interval 1 has one answered during
// interval 3 (2000 ms); interval 2 one intended at its start that was
// answered before interval 1's Tick (40 ms: counted in interval 2 by its
// intended start) and one answered in it (50 ms). Op b: one in interval 1
// (100 ms). Interval 3 has no op of its own. Every row's counts and
// percentiles (per op and "all") are those of its ops by intended start:
// row 0 {10, 20, 30, 2000, 2700}, row 1 {2000 | 100}, row 2 {40, 50}, row 3
// none (empty cells). Before, the percentiles went by completion: row 1
// (2 completed) had op a's empty, row 3 (0 completed) p99 2700 ms.
func TestIntervalPercentilesByIntendedStart(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	sec := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	names := []string{"tools/call:a", "tools/call:b"}
	rec := NewRecorder(names, 1)
	rec.Begin(start, sec(1))
	dir := t.TempDir()
	w, err := results.NewResultsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Start(&results.RunInfo{Tool: "mcpbench", Started: start, Ops: names})
	sh := rec.Shard(0)
	truth := [4][2][]time.Duration{} // by intended interval and op
	record := func(op int, intended time.Time, rt time.Duration) {
		end := intended.Add(rt)
		sh.Record(&driver.Result{Op: op, Intended: intended, Start: intended, FirstByte: end, End: end, Class: driver.ClassOK, Status: 200})
		truth[int(intended.Sub(start)/time.Second)][op] = append(truth[int(intended.Sub(start)/time.Second)][op], rt)
	}
	tick := func(end, next time.Time) {
		iv := rec.Tick(end, next)
		w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Names: names, Phase: results.PhaseMeasure})
	}
	record(0, sec(0.1), ms(10))
	record(0, sec(0.2), ms(20))
	record(0, sec(0.3), ms(30))
	tick(sec(1), sec(2))
	record(1, sec(1.2), ms(100))
	record(0, sec(2), ms(40)) // intended at interval 2's start, answered before interval 1's Tick
	tick(sec(2), sec(3))
	record(0, sec(2.1), ms(50))
	record(0, sec(0.5), ms(2000)) // interval 0's, answered during interval 2
	tick(sec(3), sec(4))
	record(0, sec(0.6), ms(2700)) // interval 0's, answered during interval 3
	record(0, sec(1.5), ms(2000)) // interval 1's, answered during interval 3
	tick(sec(4), time.Time{})
	ops, all := rec.Summarize(4)
	w.End(&results.RunEnd{Summary: &results.Summary{Ops: ops, All: all}})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Intervals) != 4 {
		t.Fatalf("%d intervals, want 4", len(r.Intervals))
	}
	lat := func(ds []time.Duration) (int64, results.Latency) {
		h := results.NewHist()
		for _, d := range ds {
			h.RecordValue(us(d))
		}
		return h.TotalCount(), results.LatencyOf(h)
	}
	check := func(i int, what string, got results.IntervalOpRec, ds []time.Duration) {
		n, l := lat(ds)
		if got.Count != n || got.P50 != l.P50 || got.P90 != l.P90 || got.P99 != l.P99 || got.Max != l.Max {
			t.Errorf("interval %d %s: count %d p50 %.3f p90 %.3f p99 %.3f max %.3f; its ops by intended start: %d, %.3f %.3f %.3f %.3f",
				i, what, got.Count, got.P50, got.P90, got.P99, got.Max, n, l.P50, l.P90, l.P99, l.Max)
		}
		if (got.Count == 0) != (got.Max == 0) {
			t.Errorf("interval %d %s: %d completed, max %.3f", i, what, got.Count, got.Max)
		}
	}
	var sum int64
	for i, iv := range r.Intervals {
		check(i, "all", iv.All, append(append([]time.Duration(nil), truth[i][0]...), truth[i][1]...))
		for op, name := range names {
			check(i, name, iv.Ops[name], truth[i][op])
		}
		sum += iv.All.Count
	}
	if mx := r.Intervals[0].All.Max; mx < 2700 || mx > 2702 {
		t.Errorf("interval 0 max %.3f ms, want the 2700 ms op's", r.Intervals[0].All.Max)
	}
	if sum != all.Count || all.Count != 9 {
		t.Errorf("rows add up to %d completed; the totals %d (want 9)", sum, all.Count)
	}
	data := readFile(t, filepath.Join(dir, results.FileIntervals))
	col := map[string]int{}
	for i, h := range data[0] {
		col[h] = i
	}
	for _, c := range []string{"all.p50_ms", "all.p99_ms", "all.max_ms", "op:tools/call:a.p99_ms", "op:tools/call:b.max_ms"} {
		if v := data[4][col[c]]; v != "" {
			t.Errorf("interval 3 %s = %q, want empty (no op of its own)", c, v)
		}
	}
	// The whole run's histogram holds every op once.
	total := results.NewHist()
	for _, o := range rec.Total() {
		total.Merge(o.Response)
	}
	if total.TotalCount() != 9 || total.Max() < 2_700_000 {
		t.Errorf("run total: %d values, max %d µs; want 9, the 2700 ms op's", total.TotalCount(), total.Max())
	}
}
