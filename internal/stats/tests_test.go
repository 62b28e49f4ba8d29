package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Welch: a planted 5 % higher throughput over 10 intervals of 1 %
// spread is beyond the noise with an interval around +50/s; two samples
// of one distribution are within it; flat samples compare exactly.
func TestWelch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	draw := func(mean float64) []float64 {
		var v []float64
		for range 10 {
			v = append(v, mean*(1+0.01*rng.NormFloat64()))
		}
		return v
	}
	a, same, higher := draw(1000), draw(1000), draw(1050)
	d, ci, p, ok := Welch(a, higher, 0.95)
	if !ok || p >= 0.001 || ci.Lo <= 0 || ci.Lo > 50 || ci.Hi < 50 || d < 40 || d > 60 {
		t.Fatalf("planted +5%%: diff %v ci %+v p %v ok %v", d, ci, p, ok)
	}
	if _, ci, p, ok := Welch(a, same, 0.95); !ok || p < 0.05 || ci.Lo > 0 || ci.Hi < 0 {
		t.Fatalf("same distribution: ci %+v p %v", ci, p)
	}
	if d, ci, p, ok := Welch([]float64{727, 727, 727}, []float64{1000, 1000, 1000}, 0.95); !ok || d != 273 || p != 0 || ci != (CI{273, 273}) {
		t.Fatalf("flat, different: %v %+v %v %v", d, ci, p, ok)
	}
	if _, _, p, ok := Welch([]float64{5, 5}, []float64{5, 5}, 0.95); !ok || p != 1 {
		t.Fatalf("flat, equal: p %v", p)
	}
	if _, _, _, ok := Welch([]float64{1}, []float64{1, 2}, 0.95); ok {
		t.Fatal("a sample of one tested")
	}
	// The t quantile: 2.228 for 10 degrees of freedom at 97.5 %.
	if _, ci, _, _ := Welch([]float64{0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2}, []float64{0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2}, 0.95); math.Abs(ci.Hi-2.074*math.Sqrt(2*(12.0/11)/12)) > 1e-3 {
		t.Fatalf("ci %+v", ci)
	}
}

// TwoProportions: 27 % against 0 % of a thousand arrivals is beyond the
// noise; 1 % against 1.1 % of a thousand is not; none in both is p = 1.
func TestTwoProportions(t *testing.T) {
	if p, ok := TwoProportions(270, 1000, 0, 1000); !ok || p > 1e-10 {
		t.Fatalf("27%% vs 0%%: p %v", p)
	}
	if p, ok := TwoProportions(10, 1000, 11, 1000); !ok || p < 0.5 {
		t.Fatalf("1%% vs 1.1%%: p %v", p)
	}
	if p, ok := TwoProportions(0, 1000, 0, 500); !ok || p != 1 {
		t.Fatalf("none: p %v", p)
	}
	if _, ok := TwoProportions(0, 0, 1, 10); ok {
		t.Fatal("no arrivals tested")
	}
	// z = 0.1 / √(0.25·0.75·2/200) = 2.309: p = 0.0209.
	if p, _ := TwoProportions(40, 200, 60, 200); math.Abs(p-0.0209) > 0.0001 {
		t.Fatalf("20%% vs 30%% of 200: p %v", p)
	}
}

func TestMannWhitneyMinP(t *testing.T) {
	if p := MannWhitneyMinP(3, 3); math.Abs(p-0.1) > 1e-12 {
		t.Fatalf("3 vs 3: %v", p)
	}
	if p := MannWhitneyMinP(10, 10); math.Abs(p-2.0/184756) > 1e-12 {
		t.Fatalf("10 vs 10: %v", p)
	}
	// The exact test reaches it: 3 below 3.
	if p, _ := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6}); math.Abs(p-MannWhitneyMinP(3, 3)) > 1e-9 {
		t.Fatalf("exact 3 vs 3: %v", p)
	}
}
