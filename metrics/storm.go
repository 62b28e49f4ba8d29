package metrics

import (
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// Timeline counts reconnect attempts in 10 ms bins from the start of a
// run, for reconnect-storm analysis. Safe for concurrent use; Add is one
// atomic increment.
type Timeline struct {
	start time.Time
	bin   time.Duration
	all   []atomic.Int64
	early []atomic.Int64
	count atomic.Int64
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
	return &Timeline{start: start, bin: TimelineBin, all: make([]atomic.Int64, n), early: make([]atomic.Int64, n)}
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

// Total returns the attempts counted so far.
func (tl *Timeline) Total() int64 {
	if tl == nil {
		return 0
	}
	return tl.count.Load()
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
	Faulty                          int64                    // streams the replay ledger found faulty
	Classes                         [driver.NumClasses]int64 // by error class
	P50, P90, P99, Max              float64
	SvcP50                          float64 // service time p50 (ms)
}

// RowOf summarizes an interval.
func RowOf(iv Interval) Row {
	r := Row{Start: iv.Start, End: iv.End}
	secs := iv.End.Sub(iv.Start).Seconds()
	row := func(o *OpStats) RowOp {
		l := LatencyOf(o.Response)
		ro := RowOp{Count: o.Count, Errors: o.Errors, Resumes: o.Resumes, Dropped: o.Dropped, Faulty: o.Faulty, P50: l.P50, P90: l.P90, P99: l.P99, Max: l.Max}
		if o.Count > 0 {
			ro.SvcP50 = round3(float64(o.Service.ValueAtQuantile(50)) / 1000)
		}
		copy(ro.Classes[:], o.Classes[:])
		return ro
	}
	for _, o := range iv.Ops {
		r.Ops = append(r.Ops, row(o))
	}
	r.All = row(iv.All)
	if secs > 0 {
		r.Rate = round3(float64(iv.All.Count) / secs)
	}
	r.Dropped = iv.All.Dropped
	return r
}

// Wave is the analysis of one storm: every open stream cut at once.
type Wave struct {
	AtS        float64 `json:"at_s"`        // since the start of the run
	Attempts   int64   `json:"attempts"`    // reconnect attempts until the next wave or the end
	Early      int64   `json:"early"`       // of which before the retry hint had passed
	PeakPerSec float64 `json:"peak_per_s"`  // most attempts in any 100 ms window, per second
	FirstMS    float64 `json:"first_ms"`    // first attempt, after the wave
	P50MS      float64 `json:"p50_ms"`      // half of the attempts were made by then
	P95MS      float64 `json:"p95_ms"`      // 95 %
	LastMS     float64 `json:"last_ms"`     // last attempt
	SpreadMS   float64 `json:"spread_ms"`   // p95 − first: how long the wave lasted
	Errors     int64   `json:"errors"`      // op errors from the wave to recovery (or the end)
	PeakP99MS  float64 `json:"peak_p99_ms"` // the worst interval p99 from the wave to recovery
	RecoveryS  float64 `json:"recovery_s"`  // from the cut to the end of the degraded intervals after the wave; 0: none degraded; -1: degraded to the end
	BaseP99MS  float64 `json:"base_p99_ms"` // pre-storm envelope: the second highest interval p99 of the 10 s before
	BaseErrors float64 `json:"base_error_rate"`
}

// Storms analyses each storm wave from the reconnect timeline and the
// interval rows. An interval is in the pre-storm range when its p99 is at
// most max(1.1 × the pre-storm envelope, envelope + 1 ms) — the envelope is
// the second highest interval p99 of the 10 s before the cut — and its
// error rate at most the pre-storm rate + 1 %. Recovery is
// the start of the first of two in-range intervals in a row at or after
// the wave's first reconnect, measured from the cut; 0 when the intervals
// around the wave never left the range.
func Storms(waves []time.Time, tl *Timeline, rows []Row) []Wave {
	var out []Wave
	for wi, at := range waves {
		w := Wave{AtS: round3(at.Sub(tl.start).Seconds()), RecoveryS: -1}
		from := int(at.Sub(tl.start) / tl.bin)
		to := len(tl.all)
		if wi+1 < len(waves) {
			to = min(to, int(waves[wi+1].Sub(tl.start)/tl.bin))
		}
		from = max(from, 0)
		var counts []int64
		for i := from; i < to; i++ {
			c := tl.all[i].Load()
			counts = append(counts, c)
			w.Attempts += c
			w.Early += tl.early[i].Load()
		}
		if w.Attempts > 0 {
			binMS := float64(tl.bin / time.Millisecond)
			var cum int64
			first, p50, p95, last := -1, -1, -1, 0
			for i, c := range counts {
				if c == 0 {
					continue
				}
				if first < 0 {
					first = i
				}
				last = i
				cum += c
				if p50 < 0 && cum*2 >= w.Attempts {
					p50 = i
				}
				if p95 < 0 && cum*100 >= w.Attempts*95 {
					p95 = i
				}
			}
			w.FirstMS, w.P50MS, w.P95MS, w.LastMS = float64(first)*binMS, float64(p50)*binMS, float64(p95)*binMS, float64(last)*binMS
			w.SpreadMS = w.P95MS - w.FirstMS + binMS
			window := int(100 * time.Millisecond / tl.bin)
			var run, peak int64
			for i, c := range counts {
				run += c
				if i >= window {
					run -= counts[i-window]
				}
				peak = max(peak, run)
			}
			w.PeakPerSec = float64(peak) * float64(time.Second/(100*time.Millisecond))
		}
		w.BaseP99MS, w.BaseErrors = baseline(rows, at)
		onset := at.Add(time.Duration(w.FirstMS) * time.Millisecond)
		waveEnd := at.Add(time.Duration(w.LastMS)*time.Millisecond + tl.bin)
		rec := recovery(rows, onset, waveEnd, w.BaseP99MS, w.BaseErrors)
		end := waveEnd // the wave's impact runs from the cut to here
		switch {
		case rec < 0:
			w.RecoveryS, end = -1, time.Time{}
		case rec == 0:
			w.RecoveryS = 0
		default:
			end = onset.Add(rec)
			w.RecoveryS = round3(end.Sub(at).Seconds())
		}
		for _, r := range rows {
			if r.End.After(at) && (end.IsZero() || r.Start.Before(end)) {
				w.Errors += r.All.Errors
				w.PeakP99MS = math.Max(w.PeakP99MS, r.All.P99)
			}
		}
		out = append(out, w)
	}
	return out
}

// baseline is the pre-storm range from the 10 s before t (the run's first
// interval, often slow with start-up, left out): the second highest
// interval p99 when there are five intervals or more (one outlier is
// noise), else the highest; and the error rate.
func baseline(rows []Row, t time.Time) (p99, errRate float64) {
	var p99s []float64
	var count, errs int64
	for i, r := range rows {
		if i == 0 || r.End.After(t) || !r.End.After(t.Add(-10*time.Second)) || r.All.Count == 0 {
			continue
		}
		p99s = append(p99s, r.All.P99)
		count += r.All.Count
		errs += r.All.Errors
	}
	if count == 0 {
		return 0, 0
	}
	slices.Sort(p99s)
	p99 = p99s[len(p99s)-1]
	if len(p99s) >= 5 {
		p99 = p99s[len(p99s)-2]
	}
	return p99, float64(errs) / float64(count)
}

// recovery returns how long after the wave's onset the run was back: the
// end of the unbroken run of degraded intervals that starts with the
// intervals overlapping the wave [onset, waveEnd) (0 when none of them is
// degraded), or -1 when the run ends degraded. An interval is degraded when its p99 exceeds
// max(2 × the pre-storm envelope, envelope + 5 ms) or its error rate the
// pre-storm rate + 1 %: single noisy intervals later on do not count.
func recovery(rows []Row, onset, waveEnd time.Time, baseP99, baseErr float64) time.Duration {
	limit := math.Max(2*baseP99, baseP99+5)
	degraded := func(r Row) bool {
		if r.All.Count == 0 {
			return false
		}
		errRate := float64(r.All.Errors) / float64(r.All.Count)
		return r.All.P99 > limit || errRate > baseErr+0.01
	}
	last := time.Time{}
	for _, r := range rows {
		if !r.End.After(onset) {
			continue
		}
		if degraded(r) {
			last = r.End
			continue
		}
		if !r.Start.Before(waveEnd) || !last.IsZero() {
			break // past the wave, or the degraded run is over
		}
	}
	switch {
	case last.IsZero():
		return 0
	case !last.Before(rows[len(rows)-1].End):
		return -1
	}
	return last.Sub(onset)
}
