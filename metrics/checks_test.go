package metrics

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

var checkExprs = [][]string{{`content.0.text != ""`, "is_error == false"}, nil}

// checkResult is op's result n: check 0 fails every 7th, check 1 every
// 13th (op 0 only; op 1 has no checks).
func checkResult(op, n int, at time.Time) *driver.Result {
	r := &driver.Result{Op: op, Intended: at, Start: at, End: at.Add(time.Millisecond), Class: driver.ClassOK, Status: 200, VU: n % 3, Iteration: int64(n)}
	if op != 0 {
		return r
	}
	r.Checks.Pass(0)
	r.Checks.Pass(1)
	if n%7 == 0 {
		r.Checks.Fail(0, `"" (empty)`)
	}
	if n%13 == 0 {
		r.Checks.Fail(1, "true")
	}
	return r
}

// writeCheckSeg writes a segment of secs one-second intervals of perSec
// results of each op, and returns its failures of each check.
func writeCheckSeg(t *testing.T, dir string, start time.Time, secs, perSec int) (f0, f1 int64) {
	t.Helper()
	rec := NewRecorder(segOps, 4)
	rec.SetChecks(checkExprs)
	rec.Begin(start, start.Add(time.Second))
	w, err := results.NewResultsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	info := &results.RunInfo{Tool: "mcpbench", Target: "http://x/mcp", Profile: "p", Started: start, Ops: segOps}
	w.Start(info)
	n := 0
	for sec := range secs {
		for i := range perSec {
			at := start.Add(time.Duration(sec)*time.Second + time.Duration(i)*time.Second/time.Duration(perSec))
			for op := range 2 {
				rec.Shard(n).Record(checkResult(op, n, at))
			}
			if n%7 == 0 {
				f0++
			}
			if n%13 == 0 {
				f1++
			}
			n++
		}
		end := start.Add(time.Duration(sec+1) * time.Second)
		next := end.Add(time.Second)
		if sec == secs-1 {
			next = time.Time{}
		}
		iv := rec.Tick(end, next)
		w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Phase: results.PhaseMeasure})
	}
	ops, all := rec.Summarize(float64(secs))
	sum := &results.Summary{Tool: "mcpbench test", Target: "http://x/mcp", Profile: "p", Model: "closed", Started: start, DurationS: float64(secs), Ops: ops, All: all, Sessions: rec.Sessions()}
	w.End(&results.RunEnd{Info: info, Summary: sum, Offenders: rec.OffendersFile(), Histograms: rec.Histograms()})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	return f0, f1
}

// Each check's passes and failures are counted exactly across shards and
// intervals, in summary.json, intervals.csv and offenders.json; merging
// segments (--processes children) adds them up.
func TestChecksRecordedAndMerged(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	var dirs []string
	var want0, want1, ops int64
	for i, perSec := range []int{30, 45} {
		d := filepath.Join(dir, string(rune('a'+i)))
		f0, f1 := writeCheckSeg(t, d, t0, 3, perSec)
		res, err := results.ReadResults(d)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(3 * perSec)
		got := res.Summary.Ops[0].Checks
		want := []results.CheckSummary{
			{Check: `content.0.text != ""`, Passed: n - f0, Failed: f0, PassRate: float64(n-f0) / float64(n), FirstFailure: &results.CheckFailure{Seen: `"" (empty)`, Start: t0}},
			{Check: "is_error == false", Passed: n - f1, Failed: f1, PassRate: float64(n-f1) / float64(n), FirstFailure: &results.CheckFailure{Seen: "true", Start: t0}},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("segment %d checks (-want +got):\n%s", i, d)
		}
		if c := res.Summary.Ops[1].Checks; c != nil {
			t.Errorf("op without checks has %+v", c)
		}
		var csv int64
		for _, iv := range res.Intervals {
			csv += iv.Ops[segOps[0]].ChecksFailed
			if iv.All.ChecksFailed != iv.Ops[segOps[0]].ChecksFailed {
				t.Errorf("interval all.checks_failed %d, op %d", iv.All.ChecksFailed, iv.Ops[segOps[0]].ChecksFailed)
			}
		}
		if csv != f0+f1 || res.Offenders.CheckFailures != f0+f1 || len(res.Offenders.FirstChecks) != int(min(f0+f1, 100)) {
			t.Errorf("segment %d: intervals.csv %d failed, offenders %d (%d kept); want %d", i, csv, res.Offenders.CheckFailures, len(res.Offenders.FirstChecks), f0+f1)
		}
		dirs = append(dirs, d)
		want0, want1, ops = want0+f0, want1+f1, ops+n
	}
	m, err := results.MergeResults(dirs)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Summary.Ops[0].Checks
	if len(got) != 2 || got[0].Failed != want0 || got[0].Passed != ops-want0 || got[1].Failed != want1 || got[1].Passed != ops-want1 {
		t.Errorf("merged checks %+v; want failed %d and %d of %d", got, want0, want1, ops)
	}
	if a := m.Summary.All.Checks; len(a) != 2 || a[0].Failed != want0 || a[1].Failed != want1 {
		t.Errorf("merged all-row checks %+v", a)
	}
	if m.Offenders.CheckFailures != want0+want1 {
		t.Errorf("merged offenders %d check failures, want %d", m.Offenders.CheckFailures, want0+want1)
	}
	out := filepath.Join(dir, "merged")
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	res, err := results.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	var csv int64
	for _, iv := range res.Intervals {
		csv += iv.All.ChecksFailed
	}
	if csv != want0+want1 {
		t.Errorf("merged intervals.csv: %d checks failed, want %d", csv, want0+want1)
	}
}
