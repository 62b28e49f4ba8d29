package soak

import (
	"math"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

func TestVerdicts(t *testing.T) {
	flat := func(float64) float64 { return 5 }
	saw := func(t float64) float64 { return 80 + math.Mod(t, 23) } // GC sawtooth, no trend
	hyg := &results.Summary{Sessions: results.SessionSummary{Hygiene: &results.HygieneSummary{Probed: 100, Verdicts: map[string]int64{}}}}
	get := func(sk *results.Soak, name string) results.SoakVerdict {
		for _, v := range sk.Verdicts {
			if v.Name == name {
				return v
			}
		}
		t.Fatalf("no verdict %s", name)
		return results.SoakVerdict{}
	}

	sk := Verdicts(soakPoints(flat, saw), hyg)
	if !sk.Pass {
		t.Fatalf("a clean soak failed: %+v", sk.Verdicts)
	}

	// The leak fixture: 256 KiB per session at 10 sessions/s = 150 MB/min.
	leak := func(t float64) float64 { return 80 + t*2.5 }
	sk = Verdicts(soakPoints(flat, leak), hyg)
	v := get(sk, "target leak")
	if sk.Pass || v.Pass || math.Abs(v.Value-9000) > 1 || !strings.Contains(v.Detail, "+9000.0 MB/h") {
		t.Fatalf("leak not caught: %+v", v)
	}
	// The line the verdict judged, for the chart: 80 MB + 2.5 MB/s over
	// the last two thirds (from 201 s).
	if tr := v.Trends; len(tr) != 2 || tr[0].Series != results.SoakSeriesRSS || math.Abs(tr[0].SlopePerS-2.5) > 1e-9 ||
		math.Abs(tr[0].Intercept-80) > 1e-6 || tr[0].FromS != 201 || tr[0].ToS != 600 || tr[1].SlopePerS != 0 || tr[1].Intercept != 30 {
		t.Fatalf("trends %+v", tr)
	}

	// results.Latency that doubles over the run.
	drift := func(t float64) float64 { return 5 + 5*t/600 }
	sk = Verdicts(soakPoints(drift, saw), hyg)
	if v := get(sk, "latency drift"); v.Pass || math.Abs(v.Value-30) > 0.1 {
		t.Fatalf("drift not caught: %+v", v)
	}

	// Faulty streams and hygiene faults.
	ps := soakPoints(flat, saw)
	ps[400].Faulty = 2
	bad := &results.Summary{Sessions: results.SessionSummary{Hygiene: &results.HygieneSummary{Probed: 100, Faulty: 3, Verdicts: map[string]int64{"wrong-missing-session-status": 3}, Statuses: map[string]int64{"400": 3}}}}
	sk = Verdicts(ps, bad)
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
	sk = Verdicts(ps, hyg)
	if v := get(sk, "target leak"); v.Checked || v.Pass || !sk.Pass {
		t.Fatalf("no target: %+v pass %v", v, sk.Pass)
	}
}

// soakPoints makes 10 minutes of 1 s points.
func soakPoints(p99 func(t float64) float64, rss func(t float64) float64) []results.SoakPoint {
	var ps []results.SoakPoint
	for i := 1; i <= 600; i++ {
		t := float64(i)
		ps = append(ps, results.SoakPoint{T: t, Count: 300, P99: p99(t), TgtMB: rss(t), TgtFDs: 30, HasTgt: true, Measure: true})
	}
	return ps
}
