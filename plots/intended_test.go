package plots

import (
	"math"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/results"
)

// The latency chart draws each interval's percentiles of its ops by
// intended start, as intervals.csv holds them once the run ended: planted,
// interval 0's ops answered during intervals 2 and 3 (2000, 2700 ms) and
// interval 1's during interval 3 (2000 ms). p99 and max are drawn at
// intervals 0, 1 and 2 (each has completed ops) with their rows' values,
// and interval 3, which has none of its own, is a gap (before: drawn at
// 2700 ms, with interval 1 a gap).
func TestLatencyChartByIntendedStart(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	sec := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	names := []string{"tools/call:a"}
	rec := metrics.NewRecorder(names, 1)
	rec.Begin(start, sec(1))
	dir := t.TempDir()
	w, err := results.NewResultsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Start(&results.RunInfo{Tool: "mcpbench", Started: start, Ops: names})
	sh := rec.Shard(0)
	record := func(intended float64, ms int) {
		end := sec(intended).Add(time.Duration(ms) * time.Millisecond)
		sh.Record(&driver.Result{Op: 0, Intended: sec(intended), Start: sec(intended), FirstByte: end, End: end, Class: driver.ClassOK, Status: 200})
	}
	tick := func(end, next time.Time) {
		iv := rec.Tick(end, next)
		w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Names: names, Phase: results.PhaseMeasure})
	}
	record(0.1, 10)
	record(0.2, 20)
	tick(sec(1), sec(2))
	tick(sec(2), sec(3))
	record(2.1, 30)
	record(0.5, 2000)
	tick(sec(3), sec(4))
	record(0.6, 2700)
	record(1.5, 2000)
	tick(sec(4), time.Time{})
	ops, all := rec.Summarize(4)
	w.End(&results.RunEnd{Summary: &results.Summary{Ops: ops, All: all}})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	res, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := LatencyOverTime(res, "")
	if err != nil {
		t.Fatal(err)
	}
	wantCount := []int64{4, 1, 1, 0}
	for i, iv := range res.Intervals {
		if iv.All.Count != wantCount[i] {
			t.Fatalf("interval %d: %d completed, want %d", i, iv.All.Count, wantCount[i])
		}
	}
	seen := 0
	for _, d := range c.Panels[0].drawn {
		if d.name != "p99" && d.name != "max" {
			continue
		}
		seen++
		at := map[float64]float64{}
		for _, seg := range d.segs {
			for _, p := range seg {
				at[p.X] = p.Y
			}
		}
		for i, iv := range res.Intervals {
			mid := iv.T - iv.Interval/2
			y, drawn := at[mid]
			v := iv.All.P99
			if d.name == "max" {
				v = iv.All.Max
			}
			switch {
			case iv.All.Count == 0 && drawn:
				t.Errorf("%s: interval %d has no completed op, drawn at %.3f", d.name, i, y)
			case iv.All.Count > 0 && !drawn:
				t.Errorf("%s: interval %d (%d completed, %s %.3f ms) is a gap", d.name, i, iv.All.Count, d.name, v)
			case drawn && y != v && math.Abs(y-math.Log10(v)) > 1e-9:
				t.Errorf("%s: interval %d drawn at %.3f, its row says %.3f ms", d.name, i, y, v)
			}
		}
		if d.name == "max" && (at[0.5] < 2700 && math.Abs(at[0.5]-math.Log10(res.Intervals[0].All.Max)) > 1e-9 || res.Intervals[0].All.Max < 2700) {
			t.Errorf("interval 0's max %.3f ms: want its 2700 ms op's", res.Intervals[0].All.Max)
		}
	}
	if seen != 2 {
		t.Fatalf("%d of the p99 and max series drawn", seen)
	}
}
