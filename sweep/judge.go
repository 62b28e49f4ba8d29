package sweep

import (
	"fmt"
	"math"
	"slices"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/metrics"
)

// StepOf builds a sweep step from a step run's summary and the last
// measured interval row (which carries the process samples taken while
// the step's load and sessions were on), and judges it against the SLO.
// It gives no confidence intervals (see CIOf).
func StepOf(n int, by string, value float64, s *metrics.Summary, last *metrics.Row, slo metrics.SLO) metrics.SweepStep {
	st := numbersOf(n, by, value, s, last)
	judgeStep(&st, slo)
	return st
}

// numbersOf copies a step run's numbers from its summary and last row.
func numbersOf(n int, by string, value float64, s *metrics.Summary, last *metrics.Row) metrics.SweepStep {
	st := metrics.SweepStep{N: n, By: by, Value: value, Offered: s.TargetRate, Achieved: s.All.Rate, Count: s.All.Count,
		Errors: s.All.Errors, ErrorRate: s.All.ErrorRate, Dropped: s.Dropped,
		Latency: s.All.Response, Service: s.All.Service, GenCores: s.Generator.Cores, GenCPUOp: s.Generator.CPUPerOpUS,
		Warning: s.Generator.Bottleneck, Interrupted: s.Interrupted}
	if l := s.All.Ledger; l != nil {
		st.Faulty = l.Faulty
	}
	if g := s.GETStreams; g != nil && g.Ledger != nil {
		st.Faulty += g.Ledger.Faulty
	}
	if t := s.TargetProc; t != nil && t.Error == "" {
		st.TgtCores, st.TgtCPUOp = t.Cores, t.CPUPerOpUS
	}
	if last != nil {
		st.GenRSSMB, st.Sessions = last.Self.RSSMB, last.Sessions
		if g := s.Generator; g.SettledRSSMB > 0 { // read settled, sessions open
			st.GenRSSMB, st.Sessions = g.SettledRSSMB, g.SettledSessions
		}
		if last.Target != nil {
			st.TgtRSSMB, st.TgtFDs = last.Target.RSSMB, last.Target.FDs
		}
	}
	return st
}

// judgeStep sets a step's reasons, pass and marginal flag from its
// numbers and confidence intervals.
func judgeStep(st *metrics.SweepStep, slo metrics.SLO) {
	st.Reasons = nil
	p99Near := st.P99CI.Contains(slo.P99MS)
	errNear := st.ErrorRateCI.Contains(slo.ErrorRate) && st.ErrorRateCI.Hi > 0
	flips := true // every failed criterion is one the noise could undo
	fail := func(near bool, format string, args ...any) {
		st.Reasons = append(st.Reasons, fmt.Sprintf(format, args...))
		flips = flips && near
	}
	if st.Count == 0 {
		fail(false, "no operation completed")
	}
	if st.Latency.P99 > slo.P99MS {
		fail(p99Near, "p99 %s ms > %s ms", textfmt.MS(st.Latency.P99), textfmt.MS(slo.P99MS))
	}
	if st.ErrorRate > slo.ErrorRate {
		fail(errNear, "error rate %.2f%% > %.2f%%", 100*st.ErrorRate, 100*slo.ErrorRate)
	}
	if slo.ReplayClean && st.Faulty > 0 {
		fail(false, "%d faulty streams", st.Faulty)
	}
	if st.Offered > 0 && st.Achieved < 0.95*st.Offered {
		fail(false, "achieved %.0f/s of %.0f/s offered", st.Achieved, st.Offered)
	}
	st.Pass = len(st.Reasons) == 0 && !st.Interrupted
	// Marginal: a re-run could judge the step the other way — a pass
	// whose p99 or error rate interval reaches over the SLO, or a failure
	// whose every reason lies within its interval.
	if st.Pass {
		st.Marginal = p99Near || errNear
	} else {
		st.Marginal = flips && !st.Interrupted
	}
}

// PastKnee reports whether a failed step is clearly past the knee, so a
// sweep may stop: p99 over 3 × the metrics.SLO, errors over 5 × the metrics.SLO, or under
// 80 % of the offered rate achieved.
func PastKnee(st metrics.SweepStep, slo metrics.SLO) bool {
	if st.Pass {
		return false
	}
	return st.Latency.P99 > 3*slo.P99MS || st.ErrorRate > 5*math.Max(slo.ErrorRate, 0.001) ||
		(st.Offered > 0 && st.Achieved < 0.8*st.Offered)
}

// Judge computes the verdict of a sweep's steps: the maximum sustainable
// rate over every passing step (refinements included), the SLO crossing
// interpolated between the highest passing load and the lowest failing
// load above it (with the interval where the steps' p99 intervals cross
// it), the knee (see knee.go; never above the highest load under the
// SLO), how sure the verdict is, and memory per session.
func Judge(steps []metrics.SweepStep, slo metrics.SLO) metrics.SweepVerdict {
	var v metrics.SweepVerdict
	byLoad := judged(steps)
	var pass, fail *metrics.SweepStep
	for i := range byLoad {
		s := &byLoad[i]
		if s.Pass {
			if s.Achieved > v.MaxSustainable {
				v.MaxSustainable, v.MaxStep = textfmt.Round3(s.Achieved), s.N
			}
			if pass == nil || s.Value > pass.Value {
				pass, fail = s, nil
				v.MaxLoad = s.Value
			}
		} else if pass != nil && fail == nil && s.Value > pass.Value {
			fail = s
		}
	}
	if pass != nil && fail != nil {
		crossing(&v, pass, fail, slo)
	}
	setKnee(&v, byLoad, slo)
	v.Confidence = confidence(pass, fail, byLoad, slo)
	memoryPerSession(&v, steps)
	return v
}

// judged returns the steps that were judged (not interrupted), sorted by
// load.
func judged(steps []metrics.SweepStep) []metrics.SweepStep {
	var out []metrics.SweepStep
	for _, s := range steps {
		if !s.Interrupted {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b metrics.SweepStep) int { return cmpFloat(a.Value, b.Value) })
	return out
}

// crossing interpolates the load where p99 crosses the SLO between the
// highest passing step and the failing one above it, and the interval
// where the steps' p99 interval bounds cross it.
func crossing(v *metrics.SweepVerdict, pass, fail *metrics.SweepStep, slo metrics.SLO) {
	if !(fail.Latency.P99 > pass.Latency.P99 && fail.Latency.P99 > slo.P99MS && pass.Latency.P99 <= slo.P99MS) {
		v.Estimate = pass.Value
		return
	}
	v.Estimate = textfmt.Round3(cross(pass.Value, fail.Value, pass.Latency.P99, fail.Latency.P99, slo.P99MS))
	if pass.P99CI != nil && fail.P99CI != nil {
		v.EstimateCI = &metrics.CI{
			Lo: textfmt.Round3(cross(pass.Value, fail.Value, pass.P99CI.Hi, fail.P99CI.Hi, slo.P99MS)),
			Hi: textfmt.Round3(cross(pass.Value, fail.Value, pass.P99CI.Lo, fail.P99CI.Lo, slo.P99MS)),
		}
	}
}

// cross returns where the line through (x0, y0) and (x1, y1) reaches y,
// clamped to [x0, x1].
func cross(x0, x1, y0, y1, y float64) float64 {
	switch {
	case y0 >= y:
		return x0
	case y1 <= y:
		return x1
	}
	return x0 + (y-y0)/(y1-y0)*(x1-x0)
}

// confidence says how sure the maximum sustainable rate is: whether the
// SLO lies inside the interval of the highest passing step or of the
// failing step above it.
func confidence(pass, fail *metrics.SweepStep, steps []metrics.SweepStep, slo metrics.SLO) string {
	if len(steps) == 0 {
		return ""
	}
	noCI := pass != nil && pass.P99CI == nil || pass == nil && steps[0].P99CI == nil
	switch {
	case noCI:
		return "unknown: steps of fewer than 5 intervals have no confidence interval (use --step 5s or more)"
	case pass == nil:
		s := steps[0]
		if s.Marginal {
			return fmt.Sprintf("marginal: even the lowest step failed, but the SLO lies inside its p99 interval (%s ms)", ciMS(s.P99CI))
		}
		return fmt.Sprintf("sure: the lowest step's p99 interval (%s ms) lies above the SLO's %s ms", ciMS(s.P99CI), textfmt.MS(slo.P99MS))
	case pass.Marginal:
		return fmt.Sprintf("marginal: the SLO lies inside step %d's p99 interval (%s ms): a re-run may fail it; --repeat 3 or a longer --step narrows the interval", pass.N, ciMS(pass.P99CI))
	case fail != nil && fail.Marginal:
		return fmt.Sprintf("marginal: step %d failed, but the SLO lies inside its p99 interval (%s ms): a re-run may pass it", fail.N, ciMS(fail.P99CI))
	case fail != nil && fail.P99CI != nil:
		return fmt.Sprintf("sure: step %d's p99 interval (%s ms) lies under the SLO's %s ms and step %d's (%s ms) %s", pass.N, ciMS(pass.P99CI),
			textfmt.MS(slo.P99MS), fail.N, ciMS(fail.P99CI), map[bool]string{true: "above it", false: "fails on errors or throughput"}[fail.P99CI.Lo > slo.P99MS])
	}
	return fmt.Sprintf("sure: step %d's p99 interval (%s ms) lies under the SLO's %s ms; no step above it failed", pass.N, ciMS(pass.P99CI), textfmt.MS(slo.P99MS))
}

// ciMS formats a latency interval: "28.10–35.30".
func ciMS(c *metrics.CI) string {
	if c == nil {
		return "-"
	}
	return textfmt.MS(c.Lo) + "–" + textfmt.MS(c.Hi)
}

// memoryPerSession sets the least-squares slope of RSS (MB) on open
// sessions across the steps of a session sweep, in KiB per session, and
// the fits' RSS at zero sessions.
func memoryPerSession(v *metrics.SweepVerdict, steps []metrics.SweepStep) {
	if len(steps) < 2 || steps[0].By != metrics.SweepBySessions {
		return
	}
	var xs, tg, gn []float64
	for _, s := range steps {
		if s.Sessions > 0 {
			xs = append(xs, float64(s.Sessions))
			tg = append(tg, s.TgtRSSMB)
			gn = append(gn, s.GenRSSMB)
		}
	}
	if len(xs) < 2 {
		return
	}
	if slices.ContainsFunc(tg, func(v float64) bool { return v > 0 }) {
		slope, at0 := stats.LeastSquaresLine(xs, tg)
		v.TargetKiBPerSession, v.TargetRSSAtZeroMB = textfmt.Round3(slope*1024), textfmt.Round3(at0)
		v.TargetMeasured = true
	}
	slope, at0 := stats.LeastSquaresLine(xs, gn)
	v.GeneratorKiBPerSession, v.GeneratorRSSAtZeroMB = textfmt.Round3(slope*1024), textfmt.Round3(at0)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
