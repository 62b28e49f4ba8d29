package results_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/results"
)

// Stream links (SEP-1335): the summary counts resume attempts sent to a
// rel="stream" URL, streams resumed through one (an accepted attempt), and
// refused cross-origin links; the timeline keeps the storm-caused link
// attempts apart (LinksIn, for the storm analysis);
// a merge of two summaries adds them.
func TestRecorderStreamLinks(t *testing.T) {
	rec := metrics.NewRecorder([]string{"call"}, 1)
	t0 := time.Unix(1000, 0)
	tl := results.NewTimeline(t0, 10*time.Second)
	rec.SetTimeline(tl)
	for i, rs := range [][]driver.Resume{
		{{At: t0.Add(time.Second), Link: true, Storm: true, OK: true, Hint: -1}},                                                         // resumed at the link
		{{At: t0.Add(time.Second), Link: true, Storm: true, Hint: -1}, {At: t0.Add(2 * time.Second), Link: true, Storm: true, Hint: -1}}, // never accepted
		{{At: t0.Add(2 * time.Second), OK: true, Hint: -1}},                                                                              // at the endpoint
		nil, // not cut
	} {
		r := result(0, 0, 0, 10, driver.ClassOK, 200)
		r.Resumes = rs
		r.Ledger.Checked = true
		r.LinksRefused = i % 2 // 2 refused in all
		rec.Shard(0).Record(r)
	}
	rec.Tick(time.Now(), time.Time{})
	ops, _ := rec.Summarize(1)
	o := ops[0]
	if o.Resumes == nil || o.Resumes.Attempts != 4 || o.Resumes.ViaLink != 3 {
		t.Fatalf("resumes %+v: want 4 attempts, 3 via the link", o.Resumes)
	}
	if o.Ledger == nil || o.Ledger.Streams != 4 || o.Ledger.ViaLink != 1 || o.Ledger.LinksRefused != 2 {
		t.Fatalf("ledger %+v: want 4 streams, 1 resumed through its link, 2 links refused", o.Ledger)
	}
	tlAll := int64(0)
	for i := range tl.Len() {
		a, _ := tl.At(i)
		tlAll += a
	}
	bin := int(time.Second / tl.Bin())
	if tlAll != 4 || tl.LinksIn(0, tl.Len()) != 3 || tl.LinksIn(0, bin+1) != 2 || tl.LinksIn(2*bin, tl.Len()) != 1 {
		t.Fatalf("timeline: %d attempts, links %d (first second %d, from 2 s %d); want 4, 3 (2, 1)", tlAll, tl.LinksIn(0, tl.Len()), tl.LinksIn(0, bin+1), tl.LinksIn(2*bin, tl.Len()))
	}
	m := results.SumResumes([]*results.ResumeSummary{o.Resumes, o.Resumes}, nil, nil)
	l := results.SumLedgers([]*results.LedgerSummary{o.Ledger, o.Ledger})
	if m.ViaLink != 6 || l.ViaLink != 2 || l.LinksRefused != 4 {
		t.Fatalf("merged: resumes %+v ledger %+v", m, l)
	}
}

// The reconnect bounds in the summary: capped retry waits and streams
// given up at the resume bound, over shards; an op cut by the run's end
// keeps its resume attempts, capped waits, events and bytes in the counts
// (interrupted, out of latency and errors); a merge of two summaries adds
// the counts and keeps the largest hint and cap.
func TestRecorderResumeBounds(t *testing.T) {
	rec := metrics.NewRecorder([]string{"call"}, 2)
	t0 := time.Unix(1000, 0)
	huge := driver.RetryCap{N: 1, HintMaxMS: 2147483648, Cap: 30 * time.Second}

	cut := result(0, 0, 0, 10, driver.ClassCanceled, 0) // the run's end cut it
	cut.Resumes = []driver.Resume{{At: t0, Hint: 0, OK: true}, {At: t0, Hint: 0, OK: true}}
	cut.RetryCapped = huge
	cut.Events, cut.BytesIn = 3, 300
	rec.Shard(0).Record(cut)

	limited := result(0, 0, 0, 10, driver.ClassResumeLimit, 200)
	limited.Resumes = make([]driver.Resume, 100)
	rec.Shard(1).Record(limited)

	ok := result(0, 0, 0, 10, driver.ClassOK, 200)
	ok.RetryCapped = driver.RetryCap{N: 2, HintMaxMS: 40000, Cap: 30 * time.Second}
	// A capped wait honoured in full is not early, though the hint asked
	// for more; one made before the cap is.
	ok.Resumes = []driver.Resume{{At: t0, Hint: 40000, Capped: true, Waited: 30 * time.Second, Delay: 30 * time.Second, OK: true},
		{At: t0, Hint: 40000, Capped: true, Waited: 30 * time.Second, Delay: 29 * time.Second}}
	rec.Shard(1).Record(ok)

	rec.Tick(time.Now(), time.Time{})
	ops, all := rec.Summarize(1)
	for _, o := range []results.OpSummary{ops[0], all} {
		r := o.Resumes
		if r == nil || r.Attempts != 104 || r.Accepted != 3 || r.Early != 1 || r.RetryCapped != 3 || r.RetryHintMaxMS != 2147483648 || r.RetryCapMS != 30000 || r.Limited != 1 {
			t.Fatalf("%s: resumes %+v: want 104 attempts (3 accepted, 1 early), 3 capped waits (hint 2147483648 ms, cap 30000 ms), 1 stream given up", o.Name, r)
		}
		if o.Count != 2 || o.Errors != 1 || o.Interrupted != 1 || o.Events != 3 || o.BytesIn != 300 || o.ErrorsByClass["resume-limit"] != 1 {
			t.Fatalf("%s: count %d errors %d interrupted %d events %d bytes %d classes %v", o.Name, o.Count, o.Errors, o.Interrupted, o.Events, o.BytesIn, o.ErrorsByClass)
		}
	}
	m := results.SumResumes([]*results.ResumeSummary{all.Resumes, {Attempts: 1, RetryCapped: 1, RetryHintMaxMS: 5, RetryCapMS: 60000, Limited: 2}}, nil, nil)
	if m.Attempts != 105 || m.RetryCapped != 4 || m.RetryHintMaxMS != 2147483648 || m.RetryCapMS != 60000 || m.Limited != 3 {
		t.Fatalf("merged %+v", m)
	}
}

// Past the memory bound for the rows' histograms, a row whose
// percentiles cannot be restated keeps its cells, emptied when none of
// its ops completed, and is counted; a row kept is restated.
func TestIntervalPercentilesUnrestatedPastTheBound(t *testing.T) {
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
	record := func(intended float64, rt time.Duration) {
		end := sec(intended).Add(rt)
		sh.Record(&driver.Result{Op: 0, Intended: sec(intended), Start: sec(intended), FirstByte: end, End: end, Class: driver.ClassOK, Status: 200})
	}
	tick := func(end, next time.Time) {
		iv := rec.Tick(end, next)
		w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Names: names, Phase: results.PhaseMeasure})
	}
	record(0.1, 10*time.Millisecond)
	tick(sec(1), sec(2))
	w.SpendRestateBase()               // the bound reached: row 1's histograms are not kept
	record(0.5, 1200*time.Millisecond) // row 0's, answered during row 1
	tick(sec(2), time.Time{})
	w.End(&results.RunEnd{Summary: &results.Summary{}})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	if got := w.Unrestated(); got != 1 {
		t.Errorf("unrestated %d rows, want 1 (row 1)", got)
	}
	r, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Intervals) != 2 || r.Intervals[0].All.Count != 2 || r.Intervals[0].All.Max < 1200 || r.Intervals[1].All.Count != 0 || r.Intervals[1].All.Max != 0 || r.Intervals[1].Ops["tools/call:a"].P99 != 0 {
		t.Errorf("rows %+v", r.Intervals)
	}
}

// result is metrics_test.go's helper: one recorded op, times in ms from a fixed origin.
func result(op int, intendedMS, startMS, endMS int, class driver.Class, status int) *driver.Result {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := &driver.Result{Op: op, Intended: at(intendedMS), Start: at(startMS), FirstByte: at(startMS + 1), End: at(endMS), Class: class, Status: status}
	if class != driver.ClassOK {
		r.Err = errors.New(class.String())
	}
	return r
}
