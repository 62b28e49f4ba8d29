package metrics

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// Planted: three 1 s intervals; interval 0 has 10 arrivals, of which 4
// complete in it, 3 complete (one failed) during interval 2 and 3 are
// dropped during interval 2; interval 1 has 5 arrivals, all completed in
// it; interval 2 none of its own. The live rows count them where they
// came in (interval 2: 3 completed, 3 dropped, rate 3/s); intervals.csv,
// once End restated it, by intended start: interval 0 7 completed (1
// error) and 3 dropped, interval 1 5, interval 2 0 (rate 0). The
// percentiles follow the counts: interval 2 has none (empty cells), the
// 3 late ones' are interval 0's. The rows add up to the totals.
func TestIntervalsCountByIntendedStart(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	sec := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	names := []string{"tools/call:echo"}
	rec := NewRecorder(names, 1)
	rec.Begin(start, sec(1))
	dir := t.TempDir()
	w, err := results.NewResultsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Start(&results.RunInfo{Tool: "mcpbench", Started: start, Ops: names})
	res := func(intended, end time.Time, class driver.Class) *driver.Result {
		return &driver.Result{Op: 0, Intended: intended, Start: intended, FirstByte: end, End: end, Class: class, Status: 200}
	}
	sink := func(end, next time.Time) results.Interval {
		iv := rec.Tick(end, next)
		r := &results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Names: names, Phase: results.PhaseMeasure}
		w.Interval(r)
		return iv
	}
	sh := rec.Shard(0)
	for i := range 4 {
		sh.Record(res(sec(0.1*float64(i)), sec(0.1*float64(i)+0.05), driver.ClassOK))
	}
	sink(sec(1), sec(2))
	for i := range 5 {
		sh.Record(res(sec(1+0.1*float64(i)), sec(1.05+0.1*float64(i)), driver.ClassOK))
	}
	iv1 := sink(sec(2), sec(3))
	if len(iv1.Moves) != 0 {
		t.Fatalf("interval 1 moves %+v, want none", iv1.Moves)
	}
	sh.Record(res(sec(0.5), sec(2.5), driver.ClassOK))
	sh.Record(res(sec(0.6), sec(2.6), driver.ClassOK))
	sh.Record(res(sec(0.7), sec(2.7), driver.ClassHTTPStatus))
	for i := range 3 {
		sh.Dropped(0, sec(0.8+0.05*float64(i)), 2*time.Second)
	}
	iv2 := sink(sec(3), time.Time{})
	if len(iv2.Moves) != 1 || iv2.Moves[0].Count != 3 || iv2.Moves[0].Errors != 1 || iv2.Moves[0].Dropped != 3 || !iv2.Moves[0].From.Equal(sec(1)) || !iv2.Moves[0].To.Equal(sec(3)) {
		t.Fatalf("interval 2 moves %+v, want 3 completed (1 error) and 3 dropped from the interval ending at 1 s", iv2.Moves)
	}
	if iv2.All.Count != 3 || iv2.All.Dropped != 3 { // the live row: where they came in
		t.Fatalf("live row: count %d dropped %d, want 3, 3", iv2.All.Count, iv2.All.Dropped)
	}
	ops, all := rec.Summarize(3)
	w.End(&results.RunEnd{Summary: &results.Summary{Ops: ops, All: all, Dropped: all.Dropped}})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		count, errors, dropped int64
		rate                   float64
		p99                    bool
	}
	wants := []want{{7, 1, 3, 7, true}, {5, 0, 0, 5, true}, {0, 0, 0, 0, false}}
	if len(r.Intervals) != 3 {
		t.Fatalf("%d intervals, want 3", len(r.Intervals))
	}
	var sumCount, sumDropped, sumErrors int64
	for i, iv := range r.Intervals {
		got := want{iv.All.Count, iv.All.Errors, iv.Dropped, iv.Rate, iv.All.P99 > 0}
		if got != wants[i] {
			t.Errorf("interval %d: %+v, want %+v", i, got, wants[i])
		}
		if op := iv.Ops["tools/call:echo"]; op.Count != iv.All.Count || op.Errors != iv.All.Errors {
			t.Errorf("interval %d: op row %+v, all %+v", i, op, iv.All)
		}
		sumCount, sumDropped, sumErrors = sumCount+iv.All.Count, sumDropped+iv.Dropped, sumErrors+iv.All.Errors
	}
	if r.Intervals[0].ErrorsByClass[driver.ClassHTTPStatus.String()] != 1 || r.Intervals[2].ErrorsByClass[driver.ClassHTTPStatus.String()] != 0 {
		t.Errorf("errors by class: %v, %v", r.Intervals[0].ErrorsByClass, r.Intervals[2].ErrorsByClass)
	}
	if sumCount != all.Count || sumDropped != all.Dropped || sumErrors != all.Errors || all.Count != 12 || all.Dropped != 3 {
		t.Errorf("rows add up to %d completed, %d dropped, %d errors; totals %d, %d, %d (want 12, 3, 1)", sumCount, sumDropped, sumErrors, all.Count, all.Dropped, all.Errors)
	}
}

// An interval where no op completed has empty percentile cells in
// intervals.csv (not 0.000), and reads back as 0 (none).
func TestIntervalWithoutCompletionsHasNoPercentiles(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	names := []string{"tools/call:echo"}
	rec := NewRecorder(names, 1)
	rec.Begin(start, start.Add(time.Second))
	dir := t.TempDir()
	w, _ := results.NewResultsDir(dir)
	w.Start(&results.RunInfo{Tool: "mcpbench", Started: start, Ops: names})
	rec.Shard(0).Dropped(0, start.Add(100*time.Millisecond), time.Second) // dropped in its own interval: no completion
	iv := rec.Tick(start.Add(time.Second), time.Time{})
	w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Names: names, Phase: results.PhaseMeasure})
	w.End(&results.RunEnd{Summary: &results.Summary{}})
	data := readFile(t, filepath.Join(dir, results.FileIntervals))
	col := map[string]int{}
	for i, h := range data[0] {
		col[h] = i
	}
	for _, c := range []string{"all.p50_ms", "all.p99_ms", "all.max_ms", "op:tools/call:echo.p99_ms"} {
		if v := data[1][col[c]]; v != "" {
			t.Errorf("%s = %q, want empty", c, v)
		}
	}
	if v := data[1][col["dropped"]]; v != "1" {
		t.Errorf("dropped %q, want 1", v)
	}
}

func readFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
