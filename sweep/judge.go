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
// the step's load and sessions were on).
func StepOf(n int, by string, value float64, s *metrics.Summary, last *metrics.Row, slo metrics.SLO) metrics.SweepStep {
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
	if st.Count == 0 {
		st.Reasons = append(st.Reasons, "no operation completed")
	}
	if st.Latency.P99 > slo.P99MS {
		st.Reasons = append(st.Reasons, fmt.Sprintf("p99 %s ms > %s ms", textfmt.MS(st.Latency.P99), textfmt.MS(slo.P99MS)))
	}
	if st.ErrorRate > slo.ErrorRate {
		st.Reasons = append(st.Reasons, fmt.Sprintf("error rate %.2f%% > %.2f%%", 100*st.ErrorRate, 100*slo.ErrorRate))
	}
	if slo.ReplayClean && st.Faulty > 0 {
		st.Reasons = append(st.Reasons, fmt.Sprintf("%d faulty streams", st.Faulty))
	}
	if st.Offered > 0 && st.Achieved < 0.95*st.Offered {
		st.Reasons = append(st.Reasons, fmt.Sprintf("achieved %.0f/s of %.0f/s offered", st.Achieved, st.Offered))
	}
	st.Pass = len(st.Reasons) == 0 && !st.Interrupted
	return st
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
// rate over every passing step (refinements included), the metrics.SLO crossing
// interpolated between the highest passing load and the lowest failing
// load above it, and the knee on the main ladder.
func Judge(steps []metrics.SweepStep, slo metrics.SLO) metrics.SweepVerdict {
	var v metrics.SweepVerdict
	byLoad := slices.Clone(steps)
	slices.SortStableFunc(byLoad, func(a, b metrics.SweepStep) int { return cmpFloat(a.Value, b.Value) })
	var pass, fail *metrics.SweepStep
	for i := range byLoad {
		s := &byLoad[i]
		if s.Interrupted {
			continue
		}
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
		if fail.Latency.P99 > pass.Latency.P99 && fail.Latency.P99 > slo.P99MS && pass.Latency.P99 <= slo.P99MS {
			f := (slo.P99MS - pass.Latency.P99) / (fail.Latency.P99 - pass.Latency.P99)
			v.Estimate = textfmt.Round3(pass.Value + f*(fail.Value-pass.Value))
		} else {
			v.Estimate = pass.Value
		}
	}
	// The knee, on the main ladder: the step before the first one whose p99
	// at least doubles from the step before it (and rises by more than
	// max(1 ms, metrics.SLO p99 / 10)):
	// latency's growth turns steep there.
	var ladder []metrics.SweepStep
	for _, s := range steps {
		if !s.Refine && !s.Interrupted {
			ladder = append(ladder, s)
		}
	}
	// A rise smaller than a tenth of the metrics.SLO's p99 (and than 1 ms) is
	// sampling noise at these latencies, not a knee.
	minRise := max(1, slo.P99MS/10)
	for i := 1; i < len(ladder); i++ {
		prev, cur := ladder[i-1].Latency.P99, ladder[i].Latency.P99
		if cur >= 2*prev && cur > prev+minRise {
			v.Knee, v.KneeStep = ladder[i-1].Value, ladder[i-1].N
			break
		}
	}
	// Memory per session: least-squares slope of RSS (MB) on sessions.
	if len(steps) >= 2 && steps[0].By == metrics.SweepBySessions {
		xs := make([]float64, 0, len(steps))
		tg, gn := []float64{}, []float64{}
		for _, s := range steps {
			if s.Sessions > 0 {
				xs = append(xs, float64(s.Sessions))
				tg = append(tg, s.TgtRSSMB)
				gn = append(gn, s.GenRSSMB)
			}
		}
		if len(xs) >= 2 {
			if slices.ContainsFunc(tg, func(v float64) bool { return v > 0 }) {
				v.TargetKiBPerSession = textfmt.Round3(stats.LeastSquares(xs, tg) * 1024)
			}
			v.GeneratorKiBPerSession = textfmt.Round3(stats.LeastSquares(xs, gn) * 1024)
		}
	}
	return v
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
