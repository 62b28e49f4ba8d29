// Package metrics is the recorder: it records driver results into
// HdrHistograms and counters (and the session, GET-stream and hygiene
// tallies) and merges them per interval (Tick) into the aggregates the
// results package stores. What a results directory is — the summary
// model, intervals, hlog, the Sink interface, ResultsDir, ReadResults,
// MergeResults, Tail — lives in package results; metrics hands it
// results.Interval and results.OpStats values and summarizes its totals
// into results.OpSummary.
//
// It never judges — thresholds, compare, storm waves, sweep and soak
// verdicts live in verdict, sweep and soak — and never prints reports
// (report, plots).
//
// Recording: each VU records into a shard (VUs are striped over a bounded
// number of shards: 4 per core, at most max(4, 65,536 / ops), because a
// run may have thousands of VUs and an op costs ~4 KB in each shard that
// records it). A shard is a mutex and lazily created per-op stats, whose
// histograms are sparse (Hist: they hold what they recorded, where a dense
// HdrHistogram of the range takes 188 KB); contention is low because
// shards outnumber cores. Once per
// interval the collector (Tick) merges every shard into the interval's
// aggregate and the run's total, off the hot path. A row counts ops by
// intended start (so achieved compares with the target rate); its
// response histogram holds the ops that came in during it, which
// ResultsDir restates by intended start in intervals.csv at the end (the
// other histograms go by completion).
//
// Units: histograms hold microseconds (1 µs … 1 h, 3 significant digits);
// reports give milliseconds.
package metrics

import (
	"runtime"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// Shard records results of the VUs striped onto it. Safe for concurrent
// use.
type Shard struct {
	mu  sync.Mutex
	ops []*results.OpStats
	// early counts, per op, the results intended at or after boundary (the
	// end of the interval the collector closes next): they belong to the
	// following interval's row (see Tick).
	early []opCounts
	// earlyResp holds, per op (nil until one), the response times of the
	// results counted in early: they go to the following interval's
	// histogram with their counts, so that a row's percentiles are those
	// of its ops by intended start.
	earlyResp []*results.Hist
	boundary  time.Time
	// open is the start of the interval the collector closes next: a
	// result intended before it is counted in that interval's row as it
	// comes in (the live row), and noted in late, so that the interval of
	// its intended start gets it back (Interval.Moves).
	open time.Time
	late []lateOp
	lag  *hdr.Histogram // start lag: actual start − intended start, µs
	busy time.Duration  // Σ End − Start of the results: the time their requests were in flight
	// offender collects the first faulty streams (see Recorder.Offenders).
	rec *Recorder
}

// opCounts are the counters an interval row attributes to the interval of
// an op's intended start.
type opCounts struct {
	count, errors, dropped int64
	classes                [driver.NumClasses]int64
}

// lateOp is a result (or a drop) that came in after the interval of its
// intended start had closed.
type lateOp struct {
	intended time.Time
	op       int
	class    driver.Class
	dropped  bool
	resp     int64 // response time, µs (0: a drop, or no time recorded)
}

// addTo adds c to o's counters.
func (c *opCounts) addTo(o *results.OpStats) {
	o.Count += c.count
	o.Errors += c.errors
	o.Dropped += c.dropped
	for i, n := range c.classes {
		o.Classes[i] += n
	}
}

// Recorder owns the shards and the aggregates. Safe for concurrent use;
// Tick must be called from one goroutine at a time.
type Recorder struct {
	names  []string
	shards []*Shard

	mu        sync.Mutex
	interval  []*results.OpStats
	all       *results.OpStats
	total     []*results.OpStats
	lastTick  time.Time
	offenders offenders
	lag       *hdr.Histogram
	tl        *results.Timeline
	sessions  sessionTally
	iters     iterTally
	endpoints endpointTally
	subs      subTally // resource subscriptions (mcp.go)
	// checks are, per op, its checks' expressions (checks.go).
	checks [][]string
	// startNS and endsNS are the start of the first interval and the end
	// of each closed one (Unix ns): where a late result's intended start
	// falls (Tick's moves).
	startNS int64
	endsNS  []int64
	// winFrom, winTo bound the measured window for Busy (SetWindow); zero:
	// unbounded. Set before any result is recorded, read-only after.
	winFrom, winTo time.Time
}

// SetWindow bounds the time Busy counts to the measured window [from, to]:
// a request in flight across an edge counts only its part inside, so the
// mean requests in flight it yields (Summary.InFlight) is never above what
// the lanes held. Call it before any result is recorded.
func (r *Recorder) SetWindow(from, to time.Time) { r.winFrom, r.winTo = from, to }

// inWindow is the part of [start, end] inside the window (SetWindow).
func (r *Recorder) inWindow(start, end time.Time) time.Duration {
	if r == nil {
		return end.Sub(start)
	}
	if !r.winFrom.IsZero() && start.Before(r.winFrom) {
		start = r.winFrom
	}
	if !r.winTo.IsZero() && end.After(r.winTo) {
		end = r.winTo
	}
	return max(0, end.Sub(start))
}

// Busy returns the time the recorded results' requests were in flight
// (Start to End: sent until answered, or until they failed or were
// cancelled), summed.
func (r *Recorder) Busy() time.Duration {
	var d time.Duration
	for _, s := range r.shards {
		s.mu.Lock()
		d += s.busy
		s.mu.Unlock()
	}
	return d
}

// Begin sets the start of the first interval (the run's start) and its
// end (zero: one interval until the last Tick).
func (r *Recorder) Begin(start, firstEnd time.Time) {
	r.mu.Lock()
	r.lastTick = start
	r.mu.Unlock()
	r.startNS = start.UnixNano()
	for _, s := range r.shards {
		s.mu.Lock()
		s.boundary, s.open = firstEnd, start
		s.mu.Unlock()
	}
}

// SetTimeline makes every recorded resume attempt count in tl (call it
// before recording starts).
func (r *Recorder) SetTimeline(tl *results.Timeline) { r.tl = tl }

// shardOpSlots bounds shards × ops of a recorder: each op recorded in a
// shard holds ~4 KB there (its counters and three sparse histograms), so
// a profile of many ops gets fewer shards (at least 4): 10,000 ops, 6
// shards, where 4 per core would give a 64-core machine 256 (10 GB).
// Fewer shards cost only lock contention, small beside an op's time.
const shardOpSlots = 1 << 16

// NewRecorder returns a recorder for ops named names (index = Result.Op)
// with shards for up to vus VUs (0: one per core × 4), at most
// max(4, 65,536 / ops).
func NewRecorder(names []string, vus int) *Recorder {
	n := 4 * runtime.GOMAXPROCS(0)
	if vus > 0 && vus < n {
		n = vus
	}
	if len(names) > 0 {
		n = min(n, max(4, shardOpSlots/len(names)))
	}
	r := &Recorder{names: append([]string(nil), names...), lastTick: time.Now()}
	for range n {
		r.shards = append(r.shards, &Shard{ops: make([]*results.OpStats, len(names)), early: make([]opCounts, len(names)), earlyResp: make([]*results.Hist, len(names)), rec: r, lag: results.NewHistogram()})
	}
	r.all = results.NewOpStats()
	r.lag = results.NewHistogram()
	r.interval = make([]*results.OpStats, len(names))
	r.total = make([]*results.OpStats, len(names))
	for i := range names {
		r.interval[i] = results.NewOpStats()
		r.total[i] = results.NewOpStats()
	}
	r.offenders.max = 100
	return r
}

// Names returns the op names.
func (r *Recorder) Names() []string { return r.names }

// Shard returns the shard of VU vu.
func (r *Recorder) Shard(vu int) *Shard { return r.shards[vu%len(r.shards)] }

func us(d time.Duration) int64 {
	v := int64(d / time.Microsecond)
	switch {
	case v < results.HistMin:
		return results.HistMin
	case v > results.HistMax:
		return results.HistMax
	}
	return v
}

// Record adds one result. Results of class canceled (cut by the end of the
// run) count as interrupted and stay out of the latency histograms, the
// error counts and the replay ledger; the work they did (resume attempts,
// capped retry waits, events, notifications, bytes) is counted.
func (s *Shard) Record(res *driver.Result) {
	s.mu.Lock()
	s.busy += s.rec.inWindow(res.Start, res.End)
	o := s.ops[res.Op]
	if o == nil {
		o = results.NewOpStats()
		s.ops[res.Op] = o
	}
	if res.Class == driver.ClassCanceled {
		o.Interrupted++
		work(o, res)
		s.recordResumes(o, res.Resumes)
		s.mu.Unlock()
		return
	}
	if res.Cancelled {
		s.recordCancelled(o, res) // unlocks s.mu
		return
	}
	rh, lateAt := o.Response, -1
	if s.later(res.Intended) {
		rh = s.earlyHist(res.Op)
		c := &s.early[res.Op]
		c.count++
		if res.Class != driver.ClassOK {
			c.errors++
		}
		c.classes[res.Class]++
	} else {
		o.Count++
		if res.Class != driver.ClassOK {
			o.Errors++
		}
		o.Classes[res.Class]++
		if res.Intended.Before(s.open) {
			lateAt = len(s.late)
			s.late = append(s.late, lateOp{intended: res.Intended, op: res.Op, class: res.Class})
		}
	}
	if res.Err != nil && o.Examples[res.Class] == "" {
		o.Examples[res.Class] = res.Err.Error()
	}
	if res.Class == driver.ClassMissingValue { // never sent (a correlated value was missing): no time to record
		s.mu.Unlock()
		return
	}
	if res.Status >= 0 && res.Status < 600 {
		o.Status.Add(res.Status, 1)
	}
	rt := us(res.ResponseTime())
	rh.RecordValue(rt)
	if lateAt >= 0 {
		s.late[lateAt].resp = rt
	}
	if !res.Intended.IsZero() {
		s.lag.RecordValue(us(res.Start.Sub(res.Intended)))
		if IsLateStart(res) {
			o.LateStarts++
		}
	}
	o.Service.RecordValue(us(res.ServiceTime()))
	if t := res.TTFB(); t >= 0 {
		o.TTFB.RecordValue(us(t))
	}
	work(o, res)
	o.Reinits += int64(res.Reinits)
	o.Reissues += int64(res.Reissues)
	if res.Reissues > 0 && res.Class == driver.ClassOK {
		o.ReissuedOK++
	}
	o.Wasted += res.Wasted
	o.InputRounds += int64(res.InputRounds)
	s.recordResumes(o, res.Resumes)
	o.LinksRefused += int64(res.LinksRefused)
	failed := res.Checks.Ran != 0 && s.recordChecks(o, res) // checks.go
	faulty := false
	if res.Ledger.Checked {
		o.Streams++
		if viaLink(res.Resumes) {
			o.StreamsLink++
		}
		for i, c := range res.Ledger.Counts {
			o.Verdicts[i] += int64(c)
		}
		if res.Ledger.Faulty() {
			o.Faulty++
			faulty = true
		}
	}
	s.mu.Unlock()
	if faulty {
		s.rec.offenders.add(s.rec.names[res.Op], res)
	}
	if failed {
		s.rec.offenders.addCheckFailures(s.rec.names[res.Op], s.rec.checkExprs(res.Op), res)
	}
}

// earlyHist is op's histogram of early results' response times (s.mu
// held).
func (s *Shard) earlyHist(op int) *results.Hist {
	h := s.earlyResp[op]
	if h == nil {
		h = results.NewHist()
		s.earlyResp[op] = h
	}
	return h
}

// work counts what an op moved, finished or cut by the run's end: bytes,
// events, progress, notifications and pages, capped retry waits.
func work(o *results.OpStats, res *driver.Result) {
	o.BytesIn += res.BytesIn
	o.BytesOut += res.BytesOut
	o.Events += int64(res.Events)
	o.Progress += int64(res.Progress)
	recordMCP(&o.MCP, res)
	o.RetryCapped.Add(res.RetryCapped)
}

// recordResumes records an op's resume attempts (under s.mu).
func (s *Shard) recordResumes(o *results.OpStats, resumes []driver.Resume) {
	if len(resumes) == 0 {
		return
	}
	o.ResumeHists()
	for i := range resumes {
		rs := &resumes[i]
		o.Resumes++
		if rs.OK {
			o.ResumesOK++
		}
		if results.Early(rs) {
			o.EarlyResume++
		}
		if rs.Link {
			o.ResumesLink++
		}
		s.rec.tl.Record(rs)
		o.Resume.RecordValue(us(rs.TimeToResume))
		o.Wait.RecordValue(us(rs.Delay))
	}
}

// viaLink reports whether a stream was resumed through its rel="stream"
// URL (an accepted attempt there).
func viaLink(rs []driver.Resume) bool {
	for i := range rs {
		if rs[i].Link && rs[i].OK {
			return true
		}
	}
	return false
}

// later reports whether a result intended at t counts in the interval
// after the one the collector closes next. Call it with s.mu held.
func (s *Shard) later(t time.Time) bool { return !s.boundary.IsZero() && !t.Before(s.boundary) }

// Dropped counts an op the schedule could not start: intended is its
// intended start, late how late it was when a VU found it too late to
// send (a lower bound of the response time it would have had).
func (s *Shard) Dropped(op int, intended time.Time, late time.Duration) {
	s.mu.Lock()
	o := s.ops[op]
	if o == nil {
		o = results.NewOpStats()
		s.ops[op] = o
	}
	if s.later(intended) {
		s.early[op].dropped++
	} else {
		o.Dropped++
		if intended.Before(s.open) {
			s.late = append(s.late, lateOp{intended: intended, op: op, dropped: true})
		}
	}
	if o.DropLB == nil {
		o.DropLB = results.NewHist()
	}
	o.DropLB.RecordValue(us(late))
	s.mu.Unlock()
}

// Throttled counts an op answered 429/503 with a Retry-After that its VU
// waited before its next op.
func (s *Shard) Throttled(op int, wait time.Duration) {
	s.mu.Lock()
	if o := s.ops[op]; o != nil {
		o.Throttled++
		o.ThrottleWait += wait
	}
	s.mu.Unlock()
}
