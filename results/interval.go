package results

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
)

// Timeline counts reconnect attempts in 10 ms bins from the start of a
// run, for reconnect-storm analysis: all of them, and apart those a storm
// wave's cut caused (outcome.Resume.Storm). Safe for concurrent use; Add is
// one or two atomic increments per bin kept.
type Timeline struct {
	start time.Time
	bin   time.Duration
	all   []atomic.Int64
	early []atomic.Int64
	count atomic.Int64

	storm      []atomic.Int64 // attempts after a storm's cut
	stormEarly []atomic.Int64

	linkOnce sync.Once
	link     []atomic.Int64 // attempts sent to a rel="stream" URL (timeline_links.go)
}

// TimelineBin is the resolution of a Timeline.
const TimelineBin = 10 * time.Millisecond

// NewTimeline returns a timeline with bins covering span from start (16
// bytes per 10 ms); with span 0 it only counts.
func NewTimeline(start time.Time, span time.Duration) *Timeline {
	n := 0
	if span > 0 {
		n = int(span/TimelineBin) + 1
	}
	return &Timeline{start: start, bin: TimelineBin, all: make([]atomic.Int64, n), early: make([]atomic.Int64, n),
		storm: make([]atomic.Int64, n), stormEarly: make([]atomic.Int64, n)}
}

// Record counts the reconnect attempt r: at r.At, early per Early, and
// among the storm's when r.Storm (and among those sent to a rel="stream"
// URL when r.Link too: LinksIn).
func (tl *Timeline) Record(r *outcome.Resume) {
	if tl == nil {
		return
	}
	early := Early(r)
	tl.Add(r.At, early)
	i := int(r.At.Sub(tl.start) / tl.bin)
	if !r.Storm || i < 0 || i >= len(tl.storm) {
		return
	}
	if r.Link {
		tl.AddLink(r.At) // a storm's attempt sent to a rel="stream" URL
	}
	tl.storm[i].Add(1)
	if early {
		tl.stormEarly[i].Add(1)
	}
}

// Add counts one reconnect attempt made at t; early marks one made before
// the server's retry hint had passed. Attempts outside the span are
// dropped.
func (tl *Timeline) Add(t time.Time, early bool) {
	if tl == nil {
		return
	}
	tl.count.Add(1)
	i := int(t.Sub(tl.start) / tl.bin)
	if i < 0 || i >= len(tl.all) {
		return
	}
	tl.all[i].Add(1)
	if early {
		tl.early[i].Add(1)
	}
}

// Start returns the time the timeline's first bin begins at.
func (tl *Timeline) Start() time.Time { return tl.start }

// Bin returns the width of a bin.
func (tl *Timeline) Bin() time.Duration { return tl.bin }

// Len returns the number of bins (0: the timeline only counts).
func (tl *Timeline) Len() int { return len(tl.all) }

// At returns the attempts, and the early ones, in bin i.
func (tl *Timeline) At(i int) (all, early int64) { return tl.all[i].Load(), tl.early[i].Load() }

// StormAt returns the attempts a storm's cut caused, and the early ones
// among them, in bin i (a subset of At's).
func (tl *Timeline) StormAt(i int) (all, early int64) {
	return tl.storm[i].Load(), tl.stormEarly[i].Load()
}

// Total returns the attempts counted so far.
func (tl *Timeline) Total() int64 {
	if tl == nil {
		return 0
	}
	return tl.count.Load()
}

// CountMove gives counts back to the interval of their ops' intended
// start: they were counted in the row of the interval To (the one open
// when the ops completed or were dropped) and belong to the row of the
// interval From, which had closed. From and To are the intervals' ends.
type CountMove struct {
	From, To               time.Time
	Op                     int // index in the recorder's names
	Count, Errors, Dropped int64
	Classes                [outcome.NumClasses]int64
	// Resp holds the response times (µs) of the moved completed ops: they
	// are in To's histogram and belong in From's (nil when none).
	Resp *Hist
}

// Row is one interval of a run: what intervals.csv holds.
type Row struct {
	Start, End time.Time
	TargetRate float64 // ops/s asked for (open model), 0 otherwise
	Rate       float64 // completed ops/s
	Ops        []RowOp // per op, in the recorder's order
	All        RowOp
	Reconnects int64 // resume attempts (response and GET streams)
	VUs        int64
	Sessions   int64
	Streams    int64 // GET streams open
	Dropped    int64
	Self       ProcRow  // mcpbench itself
	Target     *ProcRow // the target process (--target-pid), nil when not sampled
}

// RowOp is one op's numbers over an interval (latencies in ms).
type RowOp struct {
	Count, Errors, Resumes, Dropped int64
	Faulty                          int64                     // streams the replay ledger found faulty
	Classes                         [outcome.NumClasses]int64 // by error class
	P50, P90, P99, Max              float64
	SvcP50                          float64 // service time p50 (ms)
	ChecksFailed                    int64   // failed checks (checks.go), by completion
	// Timed counts the response times the interval's histogram holds (its
	// ops by intended start that completed by its Tick (metrics.Recorder.Tick), and those of
	// earlier intervals that came in during it: see metrics.Recorder.Tick): P50…Max are
	// theirs, and intervals.csv leaves them empty when it is 0 (no op
	// completed: no percentile, not 0). ResultsDir restates them at End by
	// intended start.
	Timed int64
}

// RowOf summarizes an interval.
func RowOf(iv Interval) Row {
	r := Row{Start: iv.Start, End: iv.End}
	secs := iv.End.Sub(iv.Start).Seconds()
	row := func(o *OpStats) RowOp {
		l := LatencyOf(o.Response)
		ro := RowOp{Count: o.Count, Errors: o.Errors, Resumes: o.Resumes, Dropped: o.Dropped, Faulty: o.Faulty, P50: l.P50, P90: l.P90, P99: l.P99, Max: l.Max, Timed: o.Response.TotalCount()}
		if o.Count > 0 {
			ro.SvcP50 = textfmt.Round3(float64(o.Service.ValueAtQuantile(50)) / 1000)
		}
		copy(ro.Classes[:], o.Classes[:])
		_, ro.ChecksFailed = checksFailed(o.Checks)
		return ro
	}
	for _, o := range iv.Ops {
		r.Ops = append(r.Ops, row(o))
	}
	r.All = row(iv.All)
	if secs > 0 {
		r.Rate = textfmt.Round3(float64(iv.All.Count) / secs)
	}
	r.Dropped = iv.All.Dropped
	return r
}

// Early reports a reconnect attempt made before the server's retry hint
// had passed since the break (SEP-1699: the client MUST wait it); for a
// hint cut to the driver's cap (Resume.Capped), before the capped wait.
func Early(r *outcome.Resume) bool {
	if r.Capped {
		return r.Delay < r.Waited
	}
	return r.Hint >= 0 && r.Delay < time.Duration(r.Hint)*time.Millisecond
}
