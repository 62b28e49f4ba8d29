package textfmt

import "testing"

// One format per unit, the same in every table and limit line.
func TestValue(t *testing.T) {
	for _, c := range []struct {
		v          float64
		unit, want string
	}{
		{1.29512, "ms", "1.295"}, {25.391, "ms", "25.39"}, {1150, "ms", "1150.0"}, {12345, "ms", "12345"},
		{0.5, "%", "0.50"}, {10531.04, "ops/s", "10531.0"}, {12, "", "12"}, {3.25, "", "3.250"},
	} {
		if got := Value(c.v, c.unit); got != c.want {
			t.Errorf("Value(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	if got := SignedValue(-0.25, "ms"); got != "-0.250" {
		t.Errorf("SignedValue(-0.25) = %q", got)
	}
	if got := SignedValue(3, "ops/s"); got != "+3.0" {
		t.Errorf("SignedValue(3) = %q", got)
	}
}
