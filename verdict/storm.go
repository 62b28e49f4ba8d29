package verdict

import (
	"math"
	"slices"
	"time"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// Storms analyses each storm wave from the reconnect timeline and the
// interval rows. A wave's attempts are the reconnects its cuts caused
// (those the timeline holds as the storm's: after a break a storm cut),
// from the wave to the next one or the end; the other reconnects in that
// span are counted apart (Normal), with the normal rate of the 10 s
// before the cut (NormalPerSec): a server whose streams end on their own
// re-opens them all the time, storm or not. An interval is in the pre-storm range when its p99 is at
// most max(1.1 × the pre-storm envelope, envelope + 1 ms) — the envelope is
// the second highest interval p99 of the 10 s before the cut — and its
// error rate at most the pre-storm rate + 1 %. Recovery is
// the start of the first of two in-range intervals in a row at or after
// the wave's first reconnect, measured from the cut; 0 when the intervals
// around the wave never left the range.
func Storms(waves []time.Time, tl *results.Timeline, rows []results.Row) []results.Wave {
	var out []results.Wave
	for wi, at := range waves {
		w := results.Wave{AtS: textfmt.Round3(at.Sub(tl.Start()).Seconds()), RecoveryS: -1}
		from := int(at.Sub(tl.Start()) / tl.Bin())
		to := tl.Len()
		if wi+1 < len(waves) {
			to = min(to, int(waves[wi+1].Sub(tl.Start())/tl.Bin()))
		}
		from = max(from, 0)
		var counts []int64
		for i := from; i < to; i++ {
			c, e := tl.StormAt(i)
			all, _ := tl.At(i)
			counts = append(counts, c)
			w.Attempts += c
			w.Early += e
			w.Normal += all - c
		}
		w.NormalPerSec = normalRate(tl, from)
		if w.Attempts > 0 {
			binMS := float64(tl.Bin() / time.Millisecond)
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
			window := int(100 * time.Millisecond / tl.Bin())
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
		w.ViaLink = tl.LinksIn(from, to) // resumes sent to a rel="stream" URL (SEP-1335)
		w.BaseP99MS, w.BaseErrors = baseline(rows, at)
		onset := at.Add(time.Duration(w.FirstMS) * time.Millisecond)
		waveEnd := at.Add(time.Duration(w.LastMS)*time.Millisecond + tl.Bin())
		rec := recovery(rows, onset, waveEnd, w.BaseP99MS, w.BaseErrors)
		end := waveEnd // the wave's impact runs from the cut to here
		switch {
		case rec < 0:
			w.RecoveryS, end = -1, time.Time{}
		case rec == 0:
			w.RecoveryS = 0
		default:
			end = onset.Add(rec)
			w.RecoveryS = textfmt.Round3(end.Sub(at).Seconds())
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

// normalRate is the rate (per second) of the reconnects no storm caused
// in the 10 s before bin upTo (from the timeline's start when shorter).
func normalRate(tl *results.Timeline, upTo int) float64 {
	lo := max(0, upTo-int(10*time.Second/tl.Bin()))
	upTo = min(upTo, tl.Len())
	if upTo <= lo {
		return 0
	}
	var n int64
	for i := lo; i < upTo; i++ {
		all, _ := tl.At(i)
		storm, _ := tl.StormAt(i)
		n += all - storm
	}
	return textfmt.Round3(float64(n) / (time.Duration(upTo-lo) * tl.Bin()).Seconds())
}

// baseline is the pre-storm range from the 10 s before t (the run's first
// interval, often slow with start-up, left out): the second highest
// interval p99 when there are five intervals or more (one outlier is
// noise), else the highest; and the error rate.
func baseline(rows []results.Row, t time.Time) (p99, errRate float64) {
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
func recovery(rows []results.Row, onset, waveEnd time.Time, baseP99, baseErr float64) time.Duration {
	limit := math.Max(2*baseP99, baseP99+5)
	degraded := func(r results.Row) bool {
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
