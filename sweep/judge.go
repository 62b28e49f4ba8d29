package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// StepOf builds a sweep step from a step run's summary and the last
// measured interval row (which carries the process samples taken while
// the step's load and sessions were on), and judges it against the SLO.
// It gives no confidence intervals (see CIOf).
func StepOf(n int, by string, value float64, s *results.Summary, last *results.Row, slo results.SLO) results.SweepStep {
	st := numbersOf(n, by, value, s, last)
	judgeStep(&st, slo)
	return st
}

// numbersOf copies a step run's numbers from its summary and last row.
func numbersOf(n int, by string, value float64, s *results.Summary, last *results.Row) results.SweepStep {
	st := results.SweepStep{N: n, By: by, Value: value, Offered: s.TargetRate, Achieved: s.All.Rate, Count: s.All.Count,
		Errors: s.All.Errors, ErrorRate: s.All.ErrorRate, Dropped: s.Dropped,
		Latency: s.All.Response, Service: s.All.Service, GenCores: s.Generator.Cores, GenCPUOp: s.Generator.CPUPerOpUS,
		Warning: s.Generator.Bottleneck, Interrupted: s.Interrupted, Warnings: s.Warnings, NotApplicable: s.NotApplicable}
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
func judgeStep(st *results.SweepStep, slo results.SLO) {
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
// sweep may stop: p99 over 3 × the results.SLO, errors over 5 × the results.SLO, or under
// 80 % of the offered rate achieved.
func PastKnee(st results.SweepStep, slo results.SLO) bool {
	if st.Pass {
		return false
	}
	return st.Latency.P99 > 3*slo.P99MS || st.ErrorRate > 5*math.Max(slo.ErrorRate, 0.001) ||
		(st.Offered > 0 && st.Achieved < 0.8*st.Offered)
}

// Judge computes the verdict of a sweep's steps: the maximum sustainable
// rate over every passing step (refinements included), the SLO crossing
// as the bracket between the highest passing load and the lowest failing
// load above it, the knee (see knee.go; never above the highest load
// under the SLO), the steps that achieved less than a step at a lower
// load (non-monotone), whether the re-check of the highest passing load
// after an overload failed (hysteresis), the cool-downs, how sure the
// verdict is, and memory per session. Re-check steps count for
// hysteresis only.
func Judge(steps []results.SweepStep, slo results.SLO) results.SweepVerdict {
	var v results.SweepVerdict
	byLoad := judged(steps)
	var pass, fail *results.SweepStep
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
		v.Crossing = &results.Bracket{Lo: pass.Value, Hi: fail.Value, LoStep: pass.N, HiStep: fail.N}
	}
	setKnee(&v, byLoad, slo)
	v.NonMonotone = nonMonotone(byLoad)
	for _, s := range steps {
		if s.Recheck && !s.Interrupted && !s.Pass {
			v.Hysteresis = fmt.Sprintf("step %d re-ran %s after the overload and failed (%s), though an earlier step passed at that load: the server did not recover", s.N,
				FormatLoad(s.Value, s.By), strings.Join(s.Reasons, "; "))
		}
		if c := s.CoolDown; c != nil {
			v.CoolDowns++
			v.CoolDownS = textfmt.Round3(v.CoolDownS + c.Seconds)
			if !c.Settled {
				v.Unsettled++
			}
		}
	}
	v.Confidence = confidence(pass, fail, byLoad, slo)
	if low := lowered(v); low != "" {
		v.Confidence = low
	}
	memoryPerSession(&v, steps)
	return v
}

// nonMonotone names the steps (sorted by load) that achieved more than 2
// % less than a step at a lower load.
func nonMonotone(byLoad []results.SweepStep) []string {
	var out []string
	var best *results.SweepStep
	for i := range byLoad {
		s := &byLoad[i]
		if best != nil && s.Value > best.Value && s.Achieved < 0.98*best.Achieved {
			out = append(out, fmt.Sprintf("step %d at %s achieved %.1f ops/s, less than step %d at %s (%.1f ops/s)", s.N, FormatLoad(s.Value, s.By),
				s.Achieved, best.N, FormatLoad(best.Value, best.By), best.Achieved))
		}
		if best == nil || s.Achieved > best.Achieved {
			best = s
		}
	}
	return out
}

// lowered is the confidence when the sweep's steps contradict one
// another: a failed re-check after an overload, non-monotone steps, a
// cool-down that did not settle ("" when none did).
func lowered(v results.SweepVerdict) string {
	var why []string
	if v.Hysteresis != "" {
		why = append(why, "the re-check of the highest passing load after the overload failed (hysteresis)")
	}
	if n := len(v.NonMonotone); n > 0 {
		why = append(why, fmt.Sprintf("%d step(s) achieved less than a step at a lower load (non-monotone)", n))
	}
	if v.Unsettled > 0 {
		why = append(why, fmt.Sprintf("%d cool-down(s) ran out of time before the server's latency was back to its baseline", v.Unsettled))
	}
	if len(why) == 0 {
		return ""
	}
	return "low: " + strings.Join(why, "; ") + "; the steps depend on what ran before them: re-run the sweep with longer steps, or check the server's recovery"
}

// judged returns the steps that were judged (not interrupted, not
// re-checks), sorted by load.
func judged(steps []results.SweepStep) []results.SweepStep {
	var out []results.SweepStep
	for _, s := range steps {
		if !s.Interrupted && !s.Recheck {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b results.SweepStep) int { return cmpFloat(a.Value, b.Value) })
	return out
}

// confidence says how sure the maximum sustainable rate is: whether the
// SLO lies inside the interval of the highest passing step or of the
// failing step above it.
func confidence(pass, fail *results.SweepStep, steps []results.SweepStep, slo results.SLO) string {
	if len(steps) == 0 {
		return ""
	}
	noCI := pass != nil && pass.P99CI == nil || pass == nil && steps[0].P99CI == nil
	switch {
	case noCI:
		return setting.Say("unknown: steps of fewer than 5 intervals have no confidence interval (use %s 5s or more)", setting.SweepStep)
	case pass == nil:
		s := steps[0]
		if s.Marginal {
			return fmt.Sprintf("marginal: even the lowest step failed, but the SLO lies inside its p99 interval (%s ms)", ciMS(s.P99CI))
		}
		return fmt.Sprintf("sure: the lowest step's p99 interval (%s ms) lies above the SLO's %s ms", ciMS(s.P99CI), textfmt.MS(slo.P99MS))
	case pass.Marginal:
		return fmt.Sprintf("marginal: the SLO lies inside step %d's p99 interval (%s ms): a re-run may fail it; %s 3 or a longer %s narrows the interval", pass.N, ciMS(pass.P99CI), setting.SweepRepeat, setting.SweepStep)
	case fail != nil && fail.Marginal:
		return fmt.Sprintf("marginal: step %d failed, but the SLO lies inside its p99 interval (%s ms): a re-run may pass it", fail.N, ciMS(fail.P99CI))
	case fail != nil && fail.P99CI != nil:
		return fmt.Sprintf("sure: step %d's p99 interval (%s ms) lies under the SLO's %s ms and step %d's (%s ms) %s", pass.N, ciMS(pass.P99CI),
			textfmt.MS(slo.P99MS), fail.N, ciMS(fail.P99CI), map[bool]string{true: "above it", false: "fails on errors or throughput"}[fail.P99CI.Lo > slo.P99MS])
	}
	return fmt.Sprintf("sure: step %d's p99 interval (%s ms) lies under the SLO's %s ms; no step above it failed", pass.N, ciMS(pass.P99CI), textfmt.MS(slo.P99MS))
}

// ciMS formats a latency interval: "28.10–35.30".
func ciMS(c *results.CI) string {
	if c == nil {
		return "-"
	}
	return textfmt.MS(c.Lo) + "–" + textfmt.MS(c.Hi)
}

// memoryPerSession sets the least-squares slope of RSS (MB) on open
// sessions across the steps of a session sweep, in KiB per session, and
// the fits' RSS at zero sessions.
func memoryPerSession(v *results.SweepVerdict, steps []results.SweepStep) {
	if len(steps) < 2 || steps[0].By != results.SweepBySessions {
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
