package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/results"
)

// intervals makes 30 measured one-second intervals of one op whose p99
// is scale × a lognormal draw, with a warm-up and a partial stopping
// interval that the test must leave out.
func intervals(rng *rand.Rand, scale float64) []results.IntervalRec {
	var out []results.IntervalRec
	mk := func(phase results.Phase, length, p99 float64) results.IntervalRec {
		o := results.IntervalOpRec{Count: 100, P50: p99 / 3, P90: p99 / 2, P99: p99, Max: 2 * p99}
		return results.IntervalRec{Interval: length, Phase: phase, All: o, Ops: map[string]results.IntervalOpRec{"op": o}}
	}
	out = append(out, mk(results.PhaseWarmup, 1, 1000))
	for range 30 {
		out = append(out, mk(results.PhaseMeasure, 1, scale*math.Exp(0.1*rng.NormFloat64())))
	}
	return append(out, mk(results.PhaseStopping, 0.2, 1000))
}

// A planted 20 % rise of p99 is beyond the noise; two runs of one
// distribution are within it; the p-value is the Mann–Whitney test of
// exactly the measured intervals.
func TestAddNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	a, same, slower := intervals(rng, 10), intervals(rng, 10), intervals(rng, 12)
	sa := &results.Summary{Ops: []results.OpSummary{{Name: "op"}}}
	get := func(c []OpCompare, op, metric string) Delta {
		for _, o := range c {
			for _, d := range o.Deltas {
				if o.Name == op && d.Metric == metric {
					return d
				}
			}
		}
		t.Fatalf("no %s %s", op, metric)
		return Delta{}
	}
	c := Compare(sa, sa)
	AddNoise(c, a, slower)
	d := get(c, "op", "p99")
	var xa, xb []float64
	for _, iv := range a[1:31] {
		xa = append(xa, iv.Ops["op"].P99)
	}
	for _, iv := range slower[1:31] {
		xb = append(xb, iv.Ops["op"].P99)
	}
	want, _ := stats.MannWhitney(xa, xb)
	if d.P == nil || *d.P != want || !d.Beyond || want > 1e-6 {
		t.Fatalf("planted +20%%: p %v (want %v), beyond %v", d.P, want, d.Beyond)
	}
	if get(c, "op", "service_p99").P != nil || get(c, "op", "faulty_streams").P != nil {
		t.Fatal("a metric without intervals was tested")
	}
	c = Compare(sa, sa)
	AddNoise(c, a, same)
	if d := get(c, "all", "p99"); d.P == nil || d.Beyond {
		t.Fatalf("same distribution: p %v beyond %v", *d.P, d.Beyond)
	}
	if d := get(c, "all", "rate"); d.P == nil || *d.P != 1 || d.Beyond {
		t.Fatalf("equal rates: p %v beyond %v", d.P, d.Beyond)
	}
}

func TestCompareSweeps(t *testing.T) {
	step := func(n int, v, p99, lo, hi float64) results.SweepStep {
		return results.SweepStep{N: n, Value: v, Latency: results.Latency{P99: p99}, P99CI: &results.CI{Lo: lo, Hi: hi}}
	}
	a := &results.Sweep{By: "rate", Results: []results.SweepStep{step(1, 500, 2, 1.8, 2.2), step(2, 1000, 5, 4, 6)},
		Verdict: results.SweepVerdict{MaxSustainable: 990, MaxLoad: 1000, Knee: 800, KneeStep: 1, KneeRate: 800, KneeCI: &results.CI{Lo: 700, Hi: 900}}}
	b := &results.Sweep{By: "rate", Results: []results.SweepStep{step(1, 500, 2.1, 1.9, 2.3), step(2, 1000, 9, 8, 10), step(3, 1500, 30, 25, 35)},
		Verdict: results.SweepVerdict{MaxSustainable: 940, MaxLoad: 1000, Knee: 600, KneeStep: 1, KneeRate: 600, KneeCI: &results.CI{Lo: 550, Hi: 650}}}
	c := CompareSweeps(a, b)
	row := func(rows []SweepRow, name string) SweepRow {
		for _, r := range rows {
			if r.Name == name {
				return r
			}
		}
		t.Fatalf("no row %s", name)
		return SweepRow{}
	}
	if r := row(c.Verdict, "knee"); r.Beyond == nil || !*r.Beyond || r.Abs != -200 || r.Rel != -0.25 {
		t.Fatalf("knee %+v", r)
	}
	// The steps both sweeps ran (500 and 1000/s) agree (neither passed):
	// the bracket figures are within the noise, from those steps.
	if r := row(c.Verdict, "max_sustainable_rate"); r.Beyond == nil || *r.Beyond || r.Abs != -50 ||
		r.Why != "at the 2 load(s) both measured with intervals, the steps agree or their p99 intervals overlap" {
		t.Fatalf("max sustainable %+v", r)
	}
	if len(c.Steps) != 2 || c.Steps[0].Beyond == nil || *c.Steps[0].Beyond || !*c.Steps[1].Beyond {
		t.Fatalf("steps %+v", c.Steps)
	}
	// Neither sweep has a bracket (no failing step above the highest
	// passing one in A): the crossing is not in both, max_load not judged.
	if r := row(c.Verdict, "slo_crossing"); r.InA || r.InB || r.Beyond != nil {
		t.Fatalf("slo_crossing %+v", r)
	}
	// Brackets 0.4 % apart overlap: within.
	a.Verdict.Crossing = &results.Bracket{Lo: 2643, Hi: 2777, LoStep: 3, HiStep: 4}
	b.Verdict.Crossing = &results.Bracket{Lo: 2653, Hi: 2790, LoStep: 3, HiStep: 4}
	if r := row(CompareSweeps(a, b).Verdict, "slo_crossing"); !r.Bracket || r.Beyond == nil || *r.Beyond || r.A != 2643 || r.B != 2653 {
		t.Fatalf("overlapping brackets %+v", r)
	}
	// Brackets apart, but the steps at the loads both ran agree: within
	// (before: "beyond (brackets apart)").
	b.Verdict.Crossing = &results.Bracket{Lo: 2800, Hi: 2900, LoStep: 3, HiStep: 4}
	if r := row(CompareSweeps(a, b).Verdict, "slo_crossing"); r.Beyond == nil || *r.Beyond {
		t.Fatalf("brackets apart, steps agree %+v", r)
	}
	// At 1000/s A passed (p99 4–6 ms) and B failed (8–10 ms): beyond,
	// that load named.
	a.Results[1].Pass = true
	if r := row(CompareSweeps(a, b).Verdict, "slo_crossing"); r.Beyond == nil || !*r.Beyond || r.Why != "at 1000 ops/s A passed and B failed, their p99 intervals apart" {
		t.Fatalf("a common load apart %+v", r)
	}
	// Their p99 intervals overlapping there: within.
	b.Results[1].P99CI = &results.CI{Lo: 5.5, Hi: 10}
	if r := row(CompareSweeps(a, b).Verdict, "slo_crossing"); r.Beyond == nil || *r.Beyond {
		t.Fatalf("a common load, intervals overlap %+v", r)
	}
	// No interval at any common load and brackets apart: not judged.
	b.Results[0].P99CI, b.Results[1].P99CI = nil, nil
	if r := row(CompareSweeps(a, b).Verdict, "slo_crossing"); r.Beyond != nil || !strings.HasPrefix(r.Why, "brackets apart, but no load both sweeps measured") {
		t.Fatalf("no intervals %+v", r)
	}
	// B's confidence is low: no verdict figure is judged, the knee
	// included, and the row says why.
	b.Verdict.Confidence = "low: 2 step(s) achieved less than a step at a lower load (non-monotone)"
	for _, r := range CompareSweeps(a, b).Verdict {
		if r.InA && r.InB && (r.Beyond != nil || r.Why != "B's confidence is low (its steps depend on what ran before them)") {
			t.Fatalf("low confidence %+v", r)
		}
	}
	l, err := ParseSweepLimit("max_sustainable_rate<-10%")
	if err != nil {
		t.Fatal(err)
	}
	if r := l.Evaluate(c); len(r) != 1 || !r[0].Pass || r[0].Text != "max_sustainable_rate 990.0 → 940.0 (-5.1%) within max_sustainable_rate<-10%" {
		t.Fatalf("%+v", r)
	}
	l, _ = ParseSweepLimit("max_sustainable_rate<-5%")
	if r := l.Evaluate(c); r[0].Pass {
		t.Fatalf("%+v", r)
	}
	l, _ = ParseSweepLimit("knee<-100")
	if r := l.Evaluate(c); r[0].Pass {
		t.Fatalf("%+v", r)
	}
	if _, err := ParseSweepLimit("p99>+10%"); err == nil {
		t.Fatal("p99 accepted as a sweep figure")
	}
}
