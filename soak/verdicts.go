package soak

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
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
//     max(10, 10 %) per hour; per session open when the sessions held
//     vary (see targetLeak);
//   - session hygiene: a deleted session must answer 404; fails on any
//     probe that did not.
func Verdicts(points []results.SoakPoint, s *results.Summary) *results.Soak {
	var m, counted []results.SoakPoint
	for _, p := range points {
		if p.Measure {
			m = append(m, p)
		}
		if p.Measure || p.Stopping {
			counted = append(counted, p)
		}
	}
	out := &results.Soak{Points: points, Pass: true}
	if len(m) > 0 {
		out.DurationS = textfmt.Round3(m[len(m)-1].T - m[0].T)
	}
	for _, v := range []results.SoakVerdict{latencyDrift(m, out.DurationS/3600), correctnessDrift(counted, s), targetLeak(m), sessionHygiene(s)} {
		if v.Checked && !v.Pass {
			out.Pass = false
		}
		if !v.Checked {
			v.Pass = false // nothing judged: not judged, never a pass (out.Pass: no verdict failed)
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	return out
}

// latencyDrift fits the Theil–Sen slope of interval p99 over the measured
// points (m) and fails when it adds more than max(50 % of the median p99,
// 2 ms) over the run's hours.
func latencyDrift(m []results.SoakPoint, hours float64) results.SoakVerdict {
	var xs, ys []float64
	for _, p := range m {
		if p.Count > 0 {
			xs, ys = append(xs, p.T), append(ys, p.P99)
		}
	}
	v := results.SoakVerdict{Name: "latency drift", Unit: "ms/h"}
	if len(xs) < 10 {
		v.Detail = fmt.Sprintf("not judged: too few intervals with ops (%d, 10 needed)", len(xs))
		return v
	}
	perS, at0 := stats.TheilSenLine(xs, ys)
	slope := perS * 3600
	med := stats.Median(ys)
	drift := slope * hours
	limit := math.Max(0.5*med, 2)
	v.Checked, v.Value, v.Pass = true, textfmt.Round3(slope), drift <= limit
	v.Detail = fmt.Sprintf("interval p99 slope %+.2f ms/h: %+.2f ms over the run (median p99 %s ms; limit %+.2f ms)", slope, drift, textfmt.MS(med), limit)
	v.Trends = []results.SoakTrend{{Series: results.SoakSeriesP99, SlopePerS: perS, Intercept: at0, FromS: xs[0], ToS: xs[len(xs)-1]}}
	return v
}

// correctnessDrift counts faulty response streams per half of the window
// and faulty GET streams; any fails. m are the points of every measured
// op: the window's and the graceful stop's (ops of the window that ended
// after it), the set the summary counts. It judges what the ledgers
// judged: GET streams that carried no event judged nothing (an external
// server sends none unprompted: the profile's server.tick applies to the
// embedded server only), and with no response stream judged either the
// verdict is not judged (n/a), never a pass over nothing.
func correctnessDrift(m []results.SoakPoint, s *results.Summary) results.SoakVerdict {
	var faulty, firstHalf int64
	for i, p := range m {
		faulty += p.Faulty
		if i < len(m)/2 {
			firstHalf += p.Faulty
		}
	}
	var get, getJudged int64
	getPart := ""
	if g := s.GETStreams; g != nil && g.Opened > 0 {
		if g.Ledger != nil {
			get = g.Ledger.Faulty
		}
		switch {
		case g.Events == 0 && get == 0:
			getPart = fmt.Sprintf("GET streams not judged: the %d opened carried no event", g.Opened)
		case g.Ledger != nil:
			getJudged = g.Ledger.Streams
			getPart = fmt.Sprintf("%d of %d GET streams faulty", get, getJudged)
		}
	}
	judged := int64(0)
	if l := s.All.Ledger; l != nil {
		judged = l.Streams
	}
	v := results.SoakVerdict{Name: "correctness drift", Unit: "faulty streams", Value: float64(faulty + get)}
	if judged == 0 && getJudged == 0 && faulty+get == 0 {
		v.Detail = "not judged: no response stream was judged (JSON answers, or no op completed)"
		if getPart != "" {
			v.Detail += ", and " + getPart
		}
		return v
	}
	v.Checked, v.Pass = true, faulty+get == 0
	v.Detail = fmt.Sprintf("%d of %d response streams faulty (%d in the first half, %d in the second)", faulty, judged, firstHalf, faulty-firstHalf)
	if getPart != "" {
		v.Detail += ", " + getPart
	}
	return v
}

// targetLeak fits Theil–Sen slopes of the target's RSS and open files over
// the last two thirds of the sampled points; it fails when RSS grows by
// more than max(5 % of its median, 8 MB) per hour, or open files by more
// than max(10, 10 %) per hour. A leak is growth per session held: when
// the sessions open vary over those points (an open model whose sessions
// grow; by more than 10 %), it judges RSS and open files per session open
// instead, with the limits divided by the median sessions, so that more
// sessions is not a leak.
func targetLeak(m []results.SoakPoint) results.SoakVerdict {
	var xs, rss, fds, ses []float64
	for _, p := range m {
		if p.HasTgt {
			xs, rss, fds, ses = append(xs, p.T), append(rss, p.TgtMB), append(fds, float64(p.TgtFDs)), append(ses, float64(p.Sessions))
		}
	}
	v := results.SoakVerdict{Name: "target leak", Unit: "MB/h"}
	switch {
	case len(xs) == 0:
		v.Detail = setting.Say("not judged: no target process (%s)", setting.TargetPID)
		return v
	case len(xs) < 15:
		v.Detail = fmt.Sprintf("not judged: too few samples of the target (%d, 15 needed)", len(xs))
		return v
	}
	from := len(xs) / 3
	xs, rss, fds, ses = xs[from:], rss[from:], fds[from:], ses[from:]
	if lo, hi := slices.Min(ses), slices.Max(ses); lo > 0 && hi > 1.1*lo {
		return targetLeakPerSession(v, xs, rss, fds, ses)
	}
	rsS, rs0 := stats.TheilSenLine(xs, rss)
	fsS, fs0 := stats.TheilSenLine(xs, fds)
	rs, fs := rsS*3600, fsS*3600
	medR, medF := stats.Median(rss), stats.Median(fds)
	limR, limF := math.Max(0.05*medR, 8), math.Max(10, 0.1*medF)
	v.Checked, v.Value = true, textfmt.Round3(rs)
	v.Pass = rs <= limR && fs <= limF
	v.Detail = fmt.Sprintf("RSS %+.1f MB/h (median %.0f MB, limit %.1f MB/h), open files %+.1f/h (median %.0f, limit %.0f/h), over the last two thirds", rs, medR, limR, fs, medF, limF)
	last := xs[len(xs)-1]
	v.Trends = []results.SoakTrend{{Series: results.SoakSeriesRSS, SlopePerS: rsS, Intercept: rs0, FromS: xs[0], ToS: last},
		{Series: results.SoakSeriesFDs, SlopePerS: fsS, Intercept: fs0, FromS: xs[0], ToS: last}}
	return v
}

// targetLeakPerSession judges the target's RSS and open files per session
// open (ses, each > 0) over the points at xs: the limits of targetLeak
// divided by the median sessions open (a target that holds the same
// memory per session passes however many sessions it holds).
func targetLeakPerSession(v results.SoakVerdict, xs, rss, fds, ses []float64) results.SoakVerdict {
	rp, fp := make([]float64, len(xs)), make([]float64, len(xs))
	for i := range xs {
		rp[i], fp[i] = rss[i]/ses[i], fds[i]/ses[i]
	}
	rsS, rs0 := stats.TheilSenLine(xs, rp)
	fsS, fs0 := stats.TheilSenLine(xs, fp)
	rs, fs := rsS*3600, fsS*3600
	medS, medR, medF := stats.Median(ses), stats.Median(rp), stats.Median(fp)
	limR, limF := math.Max(0.05*medR, 8/medS), math.Max(10/medS, 0.1*medF)
	v.Unit = "MB/h per session"
	v.Checked, v.Value = true, textfmt.Round3(rs)
	v.Pass = rs <= limR && fs <= limF
	v.Detail = fmt.Sprintf("per session open (%.0f to %.0f sessions, median %.0f): RSS %+.3f MB/h (median %.3f MB, limit %.3f MB/h), open files %+.3f/h (median %.2f, limit %.3f/h), over the last two thirds",
		slices.Min(ses), slices.Max(ses), medS, rs, medR, limR, fs, medF, limF)
	last := xs[len(xs)-1]
	v.Trends = []results.SoakTrend{{Series: results.SoakSeriesRSSPerSession, SlopePerS: rsS, Intercept: rs0, FromS: xs[0], ToS: last},
		{Series: results.SoakSeriesFDsPerSession, SlopePerS: fsS, Intercept: fs0, FromS: xs[0], ToS: last}}
	return v
}

// sessionHygiene fails on any deleted session probed that did not answer
// 404.
func sessionHygiene(s *results.Summary) results.SoakVerdict {
	v := results.SoakVerdict{Name: "session hygiene", Unit: "faults"}
	h := s.Sessions.Hygiene
	if h == nil || h.Probed == 0 {
		v.Detail = "not judged: no deleted session was probed (a stateless server, or check_deleted off)"
		return v
	}
	v.Checked, v.Value, v.Pass = true, float64(h.Faulty), h.Faulty == 0
	v.Detail = fmt.Sprintf("%d deleted sessions probed: %d still served, %d answered a status other than 404%s", h.Probed,
		h.Verdicts[outcome.VerdictDeletedSessionAccepted.String()], h.Verdicts[outcome.VerdictWrongMissingStatus.String()], textfmt.Statuses(h.Statuses))
	return v
}
