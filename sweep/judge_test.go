package sweep

import (
	"math"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

func TestSweepJudge(t *testing.T) {
	slo := results.SLO{P99MS: 50, ErrorRate: 1, ReplayClean: true}
	mk := func(n int, v, ach, p99, errRate float64) results.SweepStep {
		st := results.SweepStep{N: n, By: "rate", Value: v, Offered: v, Achieved: ach, ErrorRate: errRate, Count: 1000, Latency: results.Latency{P99: p99}}
		s := &results.Summary{TargetRate: v, All: results.OpSummary{Rate: ach, Count: 1000, ErrorRate: errRate / 100, Response: results.Latency{P99: p99}}}
		got := StepOf(n, "rate", v, s, nil, slo)
		st.Pass, st.Reasons = got.Pass, got.Reasons
		return st
	}
	steps := []results.SweepStep{mk(1, 500, 500, 4, 0), mk(2, 1000, 1000, 4.5, 0), mk(3, 1500, 1500, 12, 0), mk(4, 2000, 1990, 40, 0), mk(5, 2500, 2100, 400, 3)}
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
	// p99 40 → 400 between 2000 and 2500: the SLO is crossed in that
	// bracket, no point of it more likely than another.
	if b := v.Crossing; b == nil || *b != (results.Bracket{Lo: 2000, Hi: 2500, LoStep: 4, HiStep: 5}) {
		t.Fatalf("crossing %+v", v.Crossing)
	}
	if len(v.NonMonotone) != 0 || v.Hysteresis != "" || v.Confidence != "unknown: steps of fewer than 5 intervals have no confidence interval (use profile.SweepSpec.Step 5s or more)" {
		t.Fatalf("clean sweep: non-monotone %q hysteresis %q confidence %q", v.NonMonotone, v.Hysteresis, v.Confidence)
	}
	// Memory per session: the slope across steps.
	ss := []results.SweepStep{{By: "sessions", Sessions: 1000, TgtRSSMB: 50, GenRSSMB: 40}, {By: "sessions", Sessions: 3000, TgtRSSMB: 90, GenRSSMB: 60}, {By: "sessions", Sessions: 5000, TgtRSSMB: 130, GenRSSMB: 80}}
	v = Judge(ss, slo)
	if math.Abs(v.TargetKiBPerSession-20.48) > 0.01 || math.Abs(v.GeneratorKiBPerSession-10.24) > 0.01 {
		t.Fatalf("per session %+v", v)
	}
}

// Marginal: a pass whose interval reaches over the SLO, or a failure
// whose every reason lies within its interval — never one that fails on
// something the noise cannot undo.
func TestMarginal(t *testing.T) {
	slo := results.SLO{P99MS: 50, ErrorRate: 0.01}
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
		st := results.SweepStep{Count: 1000, Latency: results.Latency{P99: c.p99}, P99CI: &results.CI{Lo: c.lo, Hi: c.hi},
			ErrorRate: c.errRate, ErrorRateCI: &results.CI{Lo: c.errRate / 2, Hi: c.errHi}}
		judgeStep(&st, slo)
		if st.Pass != c.pass || st.Marginal != c.marginal {
			t.Errorf("%s: pass %v marginal %v, want %v %v (%v)", c.name, st.Pass, st.Marginal, c.pass, c.marginal, st.Reasons)
		}
	}
}

// The sweep: a pass at 2643/s (p99 23 ms), a failure at 2777/s
// (p99 1.6 s), bisect steps inside that achieved less than the passing
// step below them, and a re-check of 2643/s after the overload that
// failed. The crossing is the bracket the steps measured (narrowed by
// the bisect step inside it), both contradictions are named, and the
// confidence is low.
func TestJudgeNonMonotoneAndHysteresis(t *testing.T) {
	slo := results.SLO{P99MS: 50, ErrorRate: 0.01}
	ci := func(p99 float64) *results.CI { return &results.CI{Lo: 0.9 * p99, Hi: 1.1 * p99} }
	mk := func(n int, v, ach, p99 float64) results.SweepStep {
		st := results.SweepStep{N: n, By: "rate", Value: v, Offered: v, Achieved: ach, Count: 10000, Latency: results.Latency{P99: p99}, P99CI: ci(p99)}
		judgeStep(&st, slo)
		return st
	}
	steps := []results.SweepStep{mk(1, 1000, 1000, 5), mk(2, 2000, 2000, 9), mk(3, 2643, 2643, 23), mk(4, 2777, 1900, 1600)}
	clean := Judge(steps, slo)
	if b := clean.Crossing; b == nil || b.Lo != 2643 || b.Hi != 2777 || len(clean.NonMonotone) != 1 || clean.Hysteresis != "" {
		t.Fatalf("before the bisect: %+v", clean)
	}
	// Step 4 collapsed under the overload to less than step 2 at 2000/s.
	if want := "step 4 at 2777 ops/s achieved 1900.0 ops/s, less than step 3 at 2643 ops/s (2643.0 ops/s)"; clean.NonMonotone[0] != want {
		t.Fatalf("non-monotone %q, want %q", clean.NonMonotone[0], want)
	}
	bisect := mk(5, 2710, 2500, 300)
	bisect.Refine = true
	recheck := mk(6, 2643, 2600, 80)
	recheck.Recheck = true
	recheck.CoolDown = &results.CoolDown{Probes: 30, Seconds: 30, P50MS: 12, Baseline: 1, Settled: false}
	v := Judge(append(steps, bisect, recheck), slo)
	if b := v.Crossing; b == nil || *b != (results.Bracket{Lo: 2643, Hi: 2710, LoStep: 3, HiStep: 5}) {
		t.Fatalf("crossing %+v: want 2643–2710, narrowed by the bisect step", v.Crossing)
	}
	if len(v.NonMonotone) != 2 || v.NonMonotone[0] != "step 5 at 2710 ops/s achieved 2500.0 ops/s, less than step 3 at 2643 ops/s (2643.0 ops/s)" {
		t.Fatalf("non-monotone %q", v.NonMonotone)
	}
	if want := "step 6 re-ran 2643 ops/s after the overload and failed (p99 80.00 ms > 50.00 ms), though an earlier step passed at that load: the server did not recover"; v.Hysteresis != want {
		t.Fatalf("hysteresis %q\nwant %q", v.Hysteresis, want)
	}
	if v.CoolDowns != 1 || v.Unsettled != 1 || v.CoolDownS != 30 || v.MaxSustainable != 2643 {
		t.Fatalf("verdict %+v", v)
	}
	want := "low: the re-check of the highest passing load after the overload failed (hysteresis); 2 step(s) achieved less than a step at a lower load (non-monotone); " +
		"1 cool-down(s) ran out of time before the server's latency was back to its baseline; the steps depend on what ran before them: re-run the sweep with longer steps, or check the server's recovery"
	if v.Confidence != want {
		t.Fatalf("confidence %q", v.Confidence)
	}
}
