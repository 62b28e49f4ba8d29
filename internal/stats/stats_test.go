package stats

import (
	"math"
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

func TestMannWhitney(t *testing.T) {
	a := []float64{1.1, 1.2, 1.0, 1.3, 1.15, 1.05, 1.25, 1.1, 1.2, 1.0}
	b := []float64{1.6, 1.7, 1.5, 1.8, 1.65, 1.55, 1.75, 1.6, 1.7, 1.5}
	if p, ok := MannWhitney(a, b); !ok || p > 0.001 {
		t.Fatalf("shifted samples: p %v ok %v", p, ok)
	}
	if p, ok := MannWhitney(a, a); !ok || p < 0.9 {
		t.Fatalf("same samples: p %v ok %v", p, ok)
	}
	if p, ok := MannWhitney([]float64{2, 2}, []float64{2, 2, 2}); !ok || p != 1 {
		t.Fatalf("equal values: p %v ok %v", p, ok)
	}
	if _, ok := MannWhitney(nil, a); ok {
		t.Fatal("empty sample tested")
	}
}

func TestTheilSenLine(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4, 5}
	y := []float64{1, 3, 5, 70, 9, 11} // y = 1 + 2x, one outlier
	s, c := TheilSenLine(x, y)
	if s != 2 || c != 1 {
		t.Fatalf("slope %v intercept %v", s, c)
	}
}
