package soak

import (
	"fmt"
	"math"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/metrics"
)

// Verdicts judges a soak from its interval points and its summary:
//
//   - latency drift: the Theil–Sen slope of interval p99 over the measured
//     window; fails when it adds more than max(50 % of the median p99,
//     2 ms) over the run;
//   - correctness drift: replay-ledger faults over time; fails on any
//     faulty stream (response or GET streams);
//   - target leak (with a target process): Theil–Sen slopes of its RSS and
//     open files over the last two thirds of the window (the first third
//     is warm-up of caches and stores); fails when RSS grows by more than
//     max(5 % of its median, 8 MB) per hour, or open files by more than
//     max(10, 10 %) per hour;
//   - session hygiene: a deleted session must answer 404; fails on any
//     probe that did not.
func Verdicts(points []metrics.SoakPoint, s *metrics.Summary) *metrics.Soak {
	var m []metrics.SoakPoint
	for _, p := range points {
		if p.Measure {
			m = append(m, p)
		}
	}
	out := &metrics.Soak{Points: points, Pass: true}
	if len(m) > 0 {
		out.DurationS = textfmt.Round3(m[len(m)-1].T - m[0].T)
	}
	add := func(v metrics.SoakVerdict) {
		if v.Checked && !v.Pass {
			out.Pass = false
		}
		if !v.Checked {
			v.Pass = true
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	hours := out.DurationS / 3600

	// metrics.Latency drift.
	{
		var xs, ys []float64
		for _, p := range m {
			if p.Count > 0 {
				xs, ys = append(xs, p.T), append(ys, p.P99)
			}
		}
		v := metrics.SoakVerdict{Name: "latency drift", Unit: "ms/h"}
		if len(xs) >= 10 {
			slope := stats.TheilSen(xs, ys) * 3600
			med := stats.Median(ys)
			drift := slope * hours
			limit := math.Max(0.5*med, 2)
			v.Checked, v.Value, v.Pass = true, textfmt.Round3(slope), drift <= limit
			v.Detail = fmt.Sprintf("interval p99 slope %+.2f ms/h: %+.2f ms over the run (median p99 %s ms; limit %+.2f ms)", slope, drift, textfmt.MS(med), limit)
		} else {
			v.Detail = "too few intervals"
		}
		add(v)
	}

	// Correctness drift.
	{
		var faulty, firstHalf int64
		for i, p := range m {
			faulty += p.Faulty
			if i < len(m)/2 {
				firstHalf += p.Faulty
			}
		}
		var get int64
		if g := s.GETStreams; g != nil && g.Ledger != nil {
			get = g.Ledger.Faulty
		}
		v := metrics.SoakVerdict{Name: "correctness drift", Unit: "faulty streams", Checked: true, Value: float64(faulty + get)}
		v.Pass = faulty+get == 0
		judged := int64(0)
		if l := s.All.Ledger; l != nil {
			judged = l.Streams
		}
		v.Detail = fmt.Sprintf("%d of %d response streams faulty (%d in the first half, %d in the second), %d GET streams faulty", faulty, judged, firstHalf, faulty-firstHalf, get)
		add(v)
	}

	// Target leak.
	{
		var xs, rss, fds []float64
		for _, p := range m {
			if p.HasTgt {
				xs, rss, fds = append(xs, p.T), append(rss, p.TgtMB), append(fds, float64(p.TgtFDs))
			}
		}
		v := metrics.SoakVerdict{Name: "target leak", Unit: "MB/h"}
		if len(xs) >= 15 {
			from := len(xs) / 3
			rs := stats.TheilSen(xs[from:], rss[from:]) * 3600
			fs := stats.TheilSen(xs[from:], fds[from:]) * 3600
			medR, medF := stats.Median(rss[from:]), stats.Median(fds[from:])
			limR, limF := math.Max(0.05*medR, 8), math.Max(10, 0.1*medF)
			v.Checked, v.Value = true, textfmt.Round3(rs)
			v.Pass = rs <= limR && fs <= limF
			v.Detail = fmt.Sprintf("RSS %+.1f MB/h (median %.0f MB, limit %.1f MB/h), open files %+.1f/h (median %.0f, limit %.0f/h), over the last two thirds", rs, medR, limR, fs, medF, limF)
		} else if len(xs) == 0 {
			v.Detail = "not checked: no target process (--target-pid)"
		} else {
			v.Detail = "too few samples"
		}
		add(v)
	}

	// Session hygiene.
	{
		v := metrics.SoakVerdict{Name: "session hygiene", Unit: "faults"}
		if h := s.Sessions.Hygiene; h != nil && h.Probed > 0 {
			v.Checked, v.Value, v.Pass = true, float64(h.Faulty), h.Faulty == 0
			v.Detail = fmt.Sprintf("%d deleted sessions probed: %d still served, %d answered a status other than 404%s", h.Probed, h.Verdicts["deleted-session-accepted"], h.Verdicts["wrong-missing-session-status"], textfmt.Statuses(h.Statuses))
		} else {
			v.Detail = "not checked: no deleted session was probed (a stateless server, or check_deleted off)"
		}
		add(v)
	}
	return out
}
