package sweep

import (
	"math"
	"testing"

	"github.com/mcpbench/mcpbench/metrics"
)

func TestSweepJudge(t *testing.T) {
	slo := metrics.SLO{P99MS: 50, ErrorRate: 1, ReplayClean: true}
	mk := func(n int, v, ach, p99, errRate float64) metrics.SweepStep {
		st := metrics.SweepStep{N: n, By: "rate", Value: v, Offered: v, Achieved: ach, ErrorRate: errRate, Count: 1000, Latency: metrics.Latency{P99: p99}}
		s := &metrics.Summary{TargetRate: v, All: metrics.OpSummary{Rate: ach, Count: 1000, ErrorRate: errRate / 100, Response: metrics.Latency{P99: p99}}}
		got := StepOf(n, "rate", v, s, nil, slo)
		st.Pass, st.Reasons = got.Pass, got.Reasons
		return st
	}
	steps := []metrics.SweepStep{mk(1, 500, 500, 4, 0), mk(2, 1000, 1000, 4.5, 0), mk(3, 1500, 1500, 12, 0), mk(4, 2000, 1990, 40, 0), mk(5, 2500, 2100, 400, 3)}
	if !steps[3].Pass || steps[4].Pass || !PastKnee(steps[4], slo) {
		t.Fatalf("steps %+v", steps)
	}
	v := Judge(steps, slo)
	// The knee: baseline 4.5 ms (the median of the lowest third, 500 and
	// 1000/s), threshold max(9, 4.5 + 5) = 9.5 ms, reached between 1000
	// (4.5 ms) and 1500/s (12 ms), in log p99: 1000 + 500·ln(9.5/4.5)/ln(12/4.5).
	knee := 1000 + 500*math.Log(9.5/4.5)/math.Log(12/4.5)
	if v.MaxSustainable != 1990 || v.MaxStep != 4 || v.KneeStep != 2 || math.Abs(v.Knee-knee) > 0.001 || v.KneeBaseline != 4.5 || v.KneeThreshold != 9.5 || v.KneeCapped {
		t.Fatalf("verdict %+v, want knee %v", v, knee)
	}
	// p99 40 → 400 between 2000 and 2500: 50 ms is crossed at 2000 + 10/360 × 500.
	if math.Abs(v.Estimate-(2000+10.0/360*500)) > 0.01 {
		t.Fatalf("estimate %v", v.Estimate)
	}
	// Memory per session: the slope across steps.
	ss := []metrics.SweepStep{{By: "sessions", Sessions: 1000, TgtRSSMB: 50, GenRSSMB: 40}, {By: "sessions", Sessions: 3000, TgtRSSMB: 90, GenRSSMB: 60}, {By: "sessions", Sessions: 5000, TgtRSSMB: 130, GenRSSMB: 80}}
	v = Judge(ss, slo)
	if math.Abs(v.TargetKiBPerSession-20.48) > 0.01 || math.Abs(v.GeneratorKiBPerSession-10.24) > 0.01 {
		t.Fatalf("per session %+v", v)
	}
}

// Marginal: a pass whose interval reaches over the SLO, or a failure
// whose every reason lies within its interval — never one that fails on
// something the noise cannot undo.
func TestMarginal(t *testing.T) {
	slo := metrics.SLO{P99MS: 50, ErrorRate: 0.01}
	for _, c := range []struct {
		name           string
		p99, lo, hi    float64
		errRate, errHi float64
		pass, marginal bool
	}{
		{"clear pass", 30, 25, 35, 0, 0, true, false},
		{"pass near the SLO", 45, 40, 55, 0, 0, true, true},
		{"fail near the SLO", 55, 45, 60, 0, 0, false, true},
		{"clear fail", 80, 70, 95, 0, 0, false, false},
		{"fails on errors, p99 near", 48, 40, 60, 1, 1, false, false},
		{"fails on errors near the SLO", 30, 25, 35, 0.012, 0.02, false, true},
	} {
		st := metrics.SweepStep{Count: 1000, Latency: metrics.Latency{P99: c.p99}, P99CI: &metrics.CI{Lo: c.lo, Hi: c.hi},
			ErrorRate: c.errRate, ErrorRateCI: &metrics.CI{Lo: c.errRate / 2, Hi: c.errHi}}
		judgeStep(&st, slo)
		if st.Pass != c.pass || st.Marginal != c.marginal {
			t.Errorf("%s: pass %v marginal %v, want %v %v (%v)", c.name, st.Pass, st.Marginal, c.pass, c.marginal, st.Reasons)
		}
	}
}
