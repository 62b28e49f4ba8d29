package sweep

import (
	"testing"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/workload"
)

// A step of a rate sweep over a profile without max_vus gets the VU cap
// that Defaults sizes from the step's own rate (rate × max delay), not the
// profile's vus: StepProfile on a profile read from its file (no Defaults
// run yet, as --dry-run and sweep --processes call it) once capped each
// step at vus, so every step above vus/max_delay dropped ops.
func TestStepProfileSizesMaxVUsFromTheStepRate(t *testing.T) {
	p, err := profile.LoadProfile("smoke")
	if err != nil {
		t.Fatal(err)
	}
	p.Sweep = &profile.SweepSpec{From: 100, To: 300, Steps: 2}
	for _, c := range []struct {
		rate float64
		want int
	}{{100, 100}, {300, 300}} {
		sp, err := StepProfile(p, 1, c.rate)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := workload.Compile(sp, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := pl.Profile.MaxVUs; got != c.want {
			t.Errorf("step at %g ops/s: max_vus %d, want %d (rate × 1s max delay)", c.rate, got, c.want)
		}
	}
	// A max_vus the user set is kept (raised to vus only when below it).
	p.MaxVUs = 50
	sp, err := StepProfile(p, 1, 300)
	if err != nil {
		t.Fatal(err)
	}
	if sp.MaxVUs != 50 {
		t.Errorf("a set max_vus: %d, want 50", sp.MaxVUs)
	}
}
