package metrics

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// segRun is a synthetic segment run for merge tests: ops a and b over
// secs one-second intervals from start, each op a result of the latency
// lat(i) (ms) intended at a known time, written by a ResultsDir as a run
// writes it.
type segRun struct {
	dir      string
	start    time.Time
	seg      *results.SegmentInfo
	secs     int
	perSec   int
	lat      func(i int) int        // ms
	errEvery int                    // every errEvery-th op fails (0: none)
	crash    bool                   // stop before End: no summary.json, summary.hlog
	faulty   int64                  // faulty streams per interval (op a's)
	settled  float64                // the generator's settled RSS (MB), one MB per session
	target   *results.TargetSummary // the target process sampled
}

var segOps = []string{"tools/call:a", "tools/call:b"}

// write runs it; truth gets every response time recorded (µs).
func (s segRun) write(t *testing.T, truth *hdr.Histogram) {
	t.Helper()
	rec := NewRecorder(segOps, 4)
	rec.Begin(s.start, s.start.Add(time.Second))
	w, err := results.NewResultsDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	info := &results.RunInfo{Tool: "mcpbench", Target: "http://x/mcp", Profile: "p", Started: s.start, Ops: segOps, Segment: s.seg,
		Spec: map[string]any{"Thresholds": []string{"p99<1s"}}}
	w.Start(info)
	n := 0
	for sec := range s.secs {
		for i := range s.perSec {
			intended := s.start.Add(time.Duration(sec)*time.Second + time.Duration(i)*time.Second/time.Duration(s.perSec))
			lat := time.Duration(s.lat(n)) * time.Millisecond
			r := &driver.Result{Op: n % 2, Intended: intended, Start: intended, FirstByte: intended.Add(lat / 2), End: intended.Add(lat), Class: driver.ClassOK, Status: 200}
			if s.errEvery > 0 && n%s.errEvery == 0 {
				r.Class, r.Err, r.Status = driver.ClassHTTPStatus, errors.New("HTTP 500"), 500
			}
			rec.Shard(n).Record(r)
			truth.RecordValue(lat.Microseconds())
			n++
		}
		end := s.start.Add(time.Duration(sec+1) * time.Second)
		next := end.Add(time.Second)
		if sec == s.secs-1 {
			next = time.Time{}
		}
		iv := rec.Tick(end, next)
		row := results.RowOf(iv)
		row.All.Faulty, row.Ops[0].Faulty = s.faulty, s.faulty
		w.Interval(&results.IntervalRecord{Interval: iv, Row: row, Phase: results.PhaseMeasure})
	}
	if s.crash {
		return
	}
	ops, all := rec.Summarize(float64(s.secs))
	sum := &results.Summary{Tool: "mcpbench test", Target: "http://x/mcp", Profile: "p", Model: "open", Started: s.start, DurationS: float64(s.secs),
		TargetRate: float64(s.perSec), Rate: all.Rate, Ops: ops, All: all, Segment: s.seg, VUs: 3, MaxVUs: 5, Sessions: rec.Sessions(),
		Generator: results.Generator{CPUSeconds: 1.5, Cores: 0.5, MaxRSSMB: 40, SettledRSSMB: s.settled, SettledSessions: int64(s.settled)}, TargetProc: s.target}
	w.End(&results.RunEnd{Info: info, Summary: sum, Histograms: rec.Histograms()})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
}

func seg(i, n int, seq string) *results.SegmentInfo {
	return &results.SegmentInfo{Segment: []string{"0:1/3", "1/3:2/3", "2/3:1"}[i], Sequence: seq, Index: i, Count: n}
}

// Three segments of random latencies, one of them started 300 ms after
// the others: the merged percentiles are those of one histogram of every
// sample (never averaged), counts and errors add up, each segment's
// generator cost is kept, the window is the union of theirs, and each
// segment's intervals land in the merged interval of their wall-clock end.
func TestMergeExact(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 21, 6, 0, 0, 250_000_000, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	truth := results.NewHistogram()
	var runs []segRun
	for i := range 3 {
		start := t0
		if i == 2 {
			start = t0.Add(300 * time.Millisecond)
		}
		scale := []int{5, 50, 500}[i] // very different distributions: averaging percentiles would be far off
		r := segRun{dir: filepath.Join(dir, string(rune('a'+i))), start: start, seg: seg(i, 3, "0,1/3,2/3,1"), secs: 3, perSec: 40 + 10*i,
			lat: func(int) int { return 1 + rng.IntN(scale) }, errEvery: 7}
		r.write(t, truth)
		runs = append(runs, r)
	}
	m, err := results.MergeResults([]string{runs[0].dir, runs[1].dir, runs[2].dir})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Summary
	if want := int64(3 * (40 + 50 + 60)); s.All.Count != want {
		t.Fatalf("merged %d ops, want %d", s.All.Count, want)
	}
	if got, want := s.All.Response, results.LatencyOf(truth); got != want {
		t.Errorf("merged response time %+v, all samples %+v", got, want)
	}
	var errs int64
	for _, run := range runs {
		r, err := results.ReadResults(run.dir)
		if err != nil {
			t.Fatal(err)
		}
		errs += r.Summary.All.Errors
	}
	if s.All.Errors != errs || s.All.ErrorsByClass["http-status"] != errs || s.All.Status["500"] != errs {
		t.Errorf("errors %d by class %v status %v; segments had %d", s.All.Errors, s.All.ErrorsByClass, s.All.Status, errs)
	}
	if s.DurationS != 3.3 || s.Rate != textfmt.Round3(float64(s.All.Count)/3.3) {
		t.Errorf("window %v s, rate %v: want the union of the windows, 3.3 s", s.DurationS, s.Rate)
	}
	if len(s.Segments) != 3 || s.Segments[2].Generator.CPUSeconds != 1.5 || s.Generator.CPUSeconds != 4.5 || s.Generator.Cores != 1.5 || s.VUs != 9 {
		t.Errorf("segments %+v, generator %+v, VUs %d", s.Segments, s.Generator, s.VUs)
	}
	if s.All.TTFB.Max == 0 || s.All.TTFB.Max >= s.All.Response.Max {
		t.Errorf("ttfb %+v: want it from summary.hlog (half the response time)", s.All.TTFB)
	}
	out := filepath.Join(dir, "merged")
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	res, err := results.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int64
	for _, iv := range res.Intervals {
		counts = append(counts, iv.All.Count)
	}
	// Segments a and b end their intervals at 1, 2, 3 s; c (started 0.3 s
	// later) at 1.3, 2.3, 3.3 s: merged intervals 2, 3, 4.
	if d := cmp.Diff([]int64{40 + 50, 40 + 50 + 60, 40 + 50 + 60, 60}, counts); d != "" {
		t.Errorf("merged interval counts (-want +got):\n%s", d)
	}
	if got, _ := res.Quantile("all", "response", 99); got != results.LatencyOf(truth).P99 {
		t.Errorf("merged hlog p99 %v, all samples %v", got, results.LatencyOf(truth).P99)
	}
	if res.Summary == nil || res.Summary.All.Count != s.All.Count || res.Run == nil || len(res.Run.Merged) != 3 {
		t.Errorf("merged summary.json / run.json not written as merged")
	}
}

// A segment given twice, or results of different tests, are refused.
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(3000, 0)
	truth := results.NewHistogram()
	a := segRun{dir: filepath.Join(dir, "a"), start: t0, seg: seg(0, 3, "0,1/3,2/3,1"), secs: 1, perSec: 10, lat: func(int) int { return 3 }}
	a.write(t, truth)
	if _, err := results.MergeResults([]string{a.dir, a.dir}); !errors.Is(err, results.ErrNotSegments) || !strings.Contains(err.Error(), "twice") {
		t.Errorf("the same segment twice: %v", err)
	}
	other := filepath.Join(dir, "other")
	w, _ := results.NewResultsDir(other)
	w.Start(&results.RunInfo{Started: t0, Ops: []string{"ping"}, Segment: seg(1, 3, "0,1/3,2/3,1")})
	w.End(&results.RunEnd{Summary: &results.Summary{Started: t0}})
	if _, err := results.MergeResults([]string{a.dir, other}); !errors.Is(err, results.ErrNotSegments) || !strings.Contains(err.Error(), "ran ops") {
		t.Errorf("different ops: %v", err)
	}
	if _, err := results.MergeResults([]string{filepath.Join(dir, "none")}); err == nil {
		t.Error("a missing directory: no error")
	}
}

// A segment that crashed (no summary.json, no summary.hlog) is merged from
// its interval files, and the notes say so; segments that do not cover the
// test are merged with a note saying what share they are.
func TestMergeCrashedAndPartial(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(4000, 0)
	truth := results.NewHistogram()
	a := segRun{dir: filepath.Join(dir, "a"), start: t0, seg: seg(0, 3, "0,1/3,2/3,1"), secs: 2, perSec: 10, lat: func(i int) int { return 2 + i%5 }}
	b := segRun{dir: filepath.Join(dir, "b"), start: t0, seg: seg(1, 3, "0,1/3,2/3,1"), secs: 2, perSec: 10, lat: func(i int) int { return 20 + i%5 }, crash: true}
	a.write(t, truth)
	b.write(t, truth)
	m, err := results.MergeResults([]string{a.dir, b.dir})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Summary
	if s.All.Count != 40 || s.All.Response != results.LatencyOf(truth) {
		t.Errorf("merged %d ops, response %+v; want 40 and %+v", s.All.Count, s.All.Response, results.LatencyOf(truth))
	}
	notes := strings.Join(s.Notes, "\n")
	for _, want := range []string{"only 2 of the 3 segments", b.dir + " has no summary.json", b.dir + " has no summary.hlog"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !s.Interrupted || s.Segments[1].Missing == nil {
		t.Errorf("interrupted %v, missing %v", s.Interrupted, s.Segments[1].Missing)
	}
}

// An interval whose ops all count in the next one (intended at or after
// its end) still logs the histograms of what completed in it: at half an
// op per second, every interval's ops were due at its end.
func TestHlogKeepsHistogramsOfIntervalsWithoutCount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	rec := NewRecorder([]string{"op"}, 1)
	t0 := time.Unix(5000, 0)
	rec.Begin(t0, t0.Add(time.Second))
	w, _ := results.NewResultsDir(dir)
	w.Start(&results.RunInfo{Started: t0, Ops: []string{"op"}})
	for k := 1; k <= 4; k++ {
		end := t0.Add(time.Duration(k) * time.Second)
		if k%2 == 0 { // due at the interval's end, completed before its Tick
			rec.Shard(0).Record(&driver.Result{Intended: end, Start: end, End: end.Add(3 * time.Millisecond), Class: driver.ClassOK, Status: 200})
		}
		next := end.Add(time.Second)
		if k == 4 {
			next = time.Time{}
		}
		iv := rec.Tick(end, next)
		w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Phase: results.PhaseMeasure})
	}
	w.End(&results.RunEnd{Summary: &results.Summary{Started: t0}})
	res, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	var count int64
	for _, iv := range res.Intervals {
		count += iv.All.Count
	}
	if h := res.Histograms["op.response"]; h == nil || h.TotalCount() != 2 || count != 2 {
		t.Fatalf("%d ops counted, %v in histograms.hlog: want both", count, h)
	}
}

// histograms.hlog keeps its times to the millisecond: the library's own
// header lines drop the start's fraction of a second, which shifted every
// interval read back.
func TestHlogTimesKeepMilliseconds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	t0 := time.Unix(6000, 505_000_000)
	truth := results.NewHistogram()
	segRun{dir: dir, start: t0, secs: 2, perSec: 4, lat: func(int) int { return 1 }}.write(t, truth)
	res, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Series["tools/call:a.response"] {
		if (h.EndTimeMs()-t0.UnixMilli())%1000 != 0 {
			t.Fatalf("interval ends at %d ms, %d ms after the start: want whole seconds", h.EndTimeMs(), h.EndTimeMs()-t0.UnixMilli())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, results.FileHistogram)); !strings.Contains(string(b), "BaseTime: 6000.505") {
		t.Errorf("header:\n%.300s", b)
	}
}

// Tail follows a directory being written: an interval appears once its
// row is complete, with the response times logged for it.
func TestTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	tail := results.NewTail(dir)
	if err := tail.Poll(); err != nil || len(tail.Rows()) != 0 {
		t.Fatalf("before the run: %v, %d rows", err, len(tail.Rows()))
	}
	rec := NewRecorder([]string{"a", "b"}, 1)
	t0 := time.Unix(7000, 250_000_000)
	rec.Begin(t0, t0.Add(time.Second))
	w, _ := results.NewResultsDir(dir)
	w.Start(&results.RunInfo{Started: t0, Ops: []string{"a", "b"}})
	for k := 1; k <= 3; k++ {
		end := t0.Add(time.Duration(k) * time.Second)
		for i := range k * 10 {
			at := end.Add(-time.Second + time.Duration(i)*time.Millisecond)
			rec.Shard(0).Record(&driver.Result{Op: i % 2, Intended: at, Start: at, End: at.Add(time.Duration(k) * time.Millisecond), Class: driver.ClassOK})
		}
		iv := rec.Tick(end, end.Add(time.Second))
		w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Phase: results.PhaseMeasure})
		if err := tail.Poll(); err != nil {
			t.Fatal(err)
		}
		rows := tail.Rows()
		if len(rows) != k || rows[k-1].Count != int64(k*10) || !rows[k-1].End.Equal(end) {
			t.Fatalf("after interval %d: %+v", k, rows)
		}
		h := tail.TakeResponse(end)
		if h == nil || h.TotalCount() != int64(k*10) || h.Max() < int64(k*1000) {
			t.Fatalf("interval %d: response times %v", k, h)
		}
	}
}

// recordSink keeps what a sink is handed.
type recordSink struct {
	starts, ends int
	recs         []results.IntervalRecord
	resp, svc    []int64 // each interval's response- and service-time samples
	p99          []float64
	end          *results.RunEnd
}

func (r *recordSink) Start(*results.RunInfo) { r.starts++ }
func (r *recordSink) Interval(rec *results.IntervalRecord) {
	r.recs = append(r.recs, *rec)
	r.resp = append(r.resp, rec.Interval.All.Response.TotalCount())
	r.svc = append(r.svc, rec.Interval.All.Service.TotalCount())
	r.p99 = append(r.p99, results.LatencyOf(rec.Interval.All.Response).P99)
}
func (r *recordSink) End(e *results.RunEnd) { r.ends++; r.end = e }

// Replay hands sinks the merged run as a run hands them its own: each
// interval with its phase, the time since the start, the gauges and the
// faulty streams summed, and histograms holding every sample of the
// segments' intervals; the summary sums the settled memory (and its
// sessions) of the segments, and the target's CPU per op is over the
// merged ops, not the first segment's.
func TestMergeReplay(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(8000, 0)
	tgt := &results.TargetSummary{PID: 42, CPUSeconds: 0.6, CPUPerOpUS: 99999, Cores: 0.3}
	a := segRun{dir: filepath.Join(dir, "a"), start: t0, seg: seg(0, 3, "0,1/3,2/3,1"), secs: 3, perSec: 10, lat: func(i int) int { return 1 + i%7 }, faulty: 1, settled: 30, target: tgt}
	b := segRun{dir: filepath.Join(dir, "b"), start: t0, seg: seg(1, 3, "0,1/3,2/3,1"), secs: 3, perSec: 20, lat: func(i int) int { return 40 + i%3 }, faulty: 2, settled: 50}
	truth := results.NewHistogram()
	a.write(t, truth)
	b.write(t, truth)
	m, err := results.MergeResults([]string{a.dir, b.dir})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Summary.Generator
	if g.SettledRSSMB != 80 || g.SettledSessions != 80 {
		t.Errorf("settled %v MB with %d sessions: want the segments' 30+50", g.SettledRSSMB, g.SettledSessions)
	}
	if tp := m.Summary.TargetProc; tp == nil || tp.PID != 42 || tp.CPUPerOpUS != 6666.7 {
		t.Errorf("target %+v: want segment a's, its CPU per op over the 90 merged ops", tp)
	}
	var rs recordSink
	m.Replay(&rs)
	if rs.starts != 1 || rs.ends != 1 || rs.end.Summary != m.Summary || len(rs.recs) != 3 {
		t.Fatalf("replay: %d starts, %d ends, %d intervals", rs.starts, rs.ends, len(rs.recs))
	}
	for k, rec := range rs.recs {
		if rec.Phase != results.PhaseMeasure || rec.Elapsed != time.Duration(k+1)*time.Second || rec.Row.All.Count != 30 || rec.Row.All.Faulty != 3 || rec.Row.Ops[0].Faulty != 3 {
			t.Errorf("interval %d: phase %s, elapsed %v, %d ops, %d faulty (op a %d): want measure, %d s, 30, 3, 3", k, rec.Phase, rec.Elapsed, rec.Row.All.Count, rec.Row.All.Faulty, rec.Row.Ops[0].Faulty, k+1)
		}
		if rs.resp[k] != 30 || rs.svc[k] != 30 || rs.p99[k] != rec.Row.All.P99 {
			t.Errorf("interval %d: histograms of %d/%d samples, p99 %v (row %v)", k, rs.resp[k], rs.svc[k], rs.p99[k], rec.Row.All.P99)
		}
	}
	if rem := rs.recs[0].Remaining; rem != 2*time.Second {
		t.Errorf("remaining after the first interval %v, want 2s", rem)
	}
	// The faulty column round-trips through intervals.csv.
	res, err := results.ReadResults(a.dir)
	if err != nil || res.Intervals[0].All.Faulty != 1 || res.Intervals[0].Ops["tools/call:a"].Faulty != 1 {
		t.Errorf("intervals.csv faulty: %v %+v", err, res.Intervals)
	}
}
