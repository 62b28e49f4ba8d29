package metrics

import (
	"math"
	"strings"
	"testing"
)

func TestTheilSen(t *testing.T) {
	var x, y []float64
	for i := range 100 {
		x = append(x, float64(i))
		y = append(y, 3*float64(i)+5)
	}
	y[10], y[50] = 1e6, -1e6 // outliers do not move it
	if s := TheilSen(x, y); math.Abs(s-3) > 1e-9 {
		t.Fatalf("slope %v, want 3", s)
	}
	// A GC-like sawtooth on a flat trend has slope ~0.
	x, y = nil, nil
	for i := range 1000 {
		x = append(x, float64(i))
		y = append(y, 100+float64(i%37))
	}
	if s := TheilSen(x, y); math.Abs(s) > 0.05 {
		t.Fatalf("sawtooth slope %v, want ~0", s)
	}
}

// soakPoints makes 10 minutes of 1 s points.
func soakPoints(p99 func(t float64) float64, rss func(t float64) float64) []SoakPoint {
	var ps []SoakPoint
	for i := 1; i <= 600; i++ {
		t := float64(i)
		ps = append(ps, SoakPoint{T: t, Count: 300, P99: p99(t), TgtMB: rss(t), TgtFDs: 30, HasTgt: true, Measure: true})
	}
	return ps
}

func TestSoakVerdicts(t *testing.T) {
	flat := func(float64) float64 { return 5 }
	saw := func(t float64) float64 { return 80 + math.Mod(t, 23) } // GC sawtooth, no trend
	hyg := &Summary{Sessions: SessionSummary{Hygiene: &HygieneSummary{Probed: 100, Verdicts: map[string]int64{}}}}
	get := func(sk *Soak, name string) SoakVerdict {
		for _, v := range sk.Verdicts {
			if v.Name == name {
				return v
			}
		}
		t.Fatalf("no verdict %s", name)
		return SoakVerdict{}
	}

	sk := SoakVerdicts(soakPoints(flat, saw), hyg)
	if !sk.Pass {
		t.Fatalf("a clean soak failed: %+v", sk.Verdicts)
	}

	// The leak fixture: 256 KiB per session at 10 sessions/s = 150 MB/min.
	leak := func(t float64) float64 { return 80 + t*2.5 }
	sk = SoakVerdicts(soakPoints(flat, leak), hyg)
	v := get(sk, "target leak")
	if sk.Pass || v.Pass || math.Abs(v.Value-9000) > 1 || !strings.Contains(v.Detail, "+9000.0 MB/h") {
		t.Fatalf("leak not caught: %+v", v)
	}

	// Latency that doubles over the run.
	drift := func(t float64) float64 { return 5 + 5*t/600 }
	sk = SoakVerdicts(soakPoints(drift, saw), hyg)
	if v := get(sk, "latency drift"); v.Pass || math.Abs(v.Value-30) > 0.1 {
		t.Fatalf("drift not caught: %+v", v)
	}

	// Faulty streams and hygiene faults.
	ps := soakPoints(flat, saw)
	ps[400].Faulty = 2
	bad := &Summary{Sessions: SessionSummary{Hygiene: &HygieneSummary{Probed: 100, Faulty: 3, Verdicts: map[string]int64{"wrong-missing-session-status": 3}, Statuses: map[string]int64{"400": 3}}}}
	sk = SoakVerdicts(ps, bad)
	if v := get(sk, "correctness drift"); v.Pass || v.Value != 2 {
		t.Fatalf("faults: %+v", v)
	}
	if v := get(sk, "session hygiene"); v.Pass || v.Value != 3 {
		t.Fatalf("hygiene: %+v", v)
	}

	// Without a target process the leak verdict does not apply.
	for i := range ps {
		ps[i].HasTgt = false
		ps[i].Faulty = 0
	}
	sk = SoakVerdicts(ps, hyg)
	if v := get(sk, "target leak"); v.Checked || !v.Pass || !sk.Pass {
		t.Fatalf("no target: %+v pass %v", v, sk.Pass)
	}
}

func TestSweepJudge(t *testing.T) {
	slo := SLO{P99MS: 50, ErrorRate: 1, ReplayClean: true}
	mk := func(n int, v, ach, p99, errRate float64) SweepStep {
		st := SweepStep{N: n, By: "rate", Value: v, Offered: v, Achieved: ach, ErrorRate: errRate, Count: 1000, Latency: Latency{P99: p99}}
		s := &Summary{TargetRate: v, All: OpSummary{Rate: ach, Count: 1000, ErrorRate: errRate / 100, Response: Latency{P99: p99}}}
		got := StepOf(n, "rate", v, s, nil, slo)
		st.Pass, st.Reasons = got.Pass, got.Reasons
		return st
	}
	steps := []SweepStep{mk(1, 500, 500, 4, 0), mk(2, 1000, 1000, 4.5, 0), mk(3, 1500, 1500, 12, 0), mk(4, 2000, 1990, 40, 0), mk(5, 2500, 2100, 400, 3)}
	if !steps[3].Pass || steps[4].Pass || !PastKnee(steps[4], slo) {
		t.Fatalf("steps %+v", steps)
	}
	v := Judge(steps, slo)
	if v.MaxSustainable != 1990 || v.MaxStep != 4 || v.KneeStep != 2 || v.Knee != 1000 {
		t.Fatalf("verdict %+v", v)
	}
	// p99 40 → 400 between 2000 and 2500: 50 ms is crossed at 2000 + 10/360 × 500.
	if math.Abs(v.Estimate-(2000+10.0/360*500)) > 0.01 {
		t.Fatalf("estimate %v", v.Estimate)
	}
	// Memory per session: the slope across steps.
	ss := []SweepStep{{By: "sessions", Sessions: 1000, TgtRSSMB: 50, GenRSSMB: 40}, {By: "sessions", Sessions: 3000, TgtRSSMB: 90, GenRSSMB: 60}, {By: "sessions", Sessions: 5000, TgtRSSMB: 130, GenRSSMB: 80}}
	v = Judge(ss, slo)
	if math.Abs(v.TargetKiBPerSession-20.48) > 0.01 || math.Abs(v.GeneratorKiBPerSession-10.24) > 0.01 {
		t.Fatalf("per session %+v", v)
	}
}
