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
