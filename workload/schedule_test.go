package workload

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/profile"
)

func TestConstantPace(t *testing.T) {
	c := Constant{PerSec: 4, Duration: time.Second}
	for _, tt := range []struct {
		elapsed time.Duration
		hits    uint64
		wait    time.Duration
		stop    bool
	}{
		{0, 0, 0, false},
		{0, 1, 250 * time.Millisecond, false},
		{100 * time.Millisecond, 1, 150 * time.Millisecond, false},
		{600 * time.Millisecond, 1, -350 * time.Millisecond, false}, // late: due at 250 ms
		{900 * time.Millisecond, 3, -150 * time.Millisecond, false},
		{900 * time.Millisecond, 4, 0, true},
	} {
		wait, stop := c.Pace(tt.elapsed, tt.hits)
		if wait != tt.wait || stop != tt.stop {
			t.Errorf("Pace(%v, %d) = %v %v, want %v %v", tt.elapsed, tt.hits, wait, stop, tt.wait, tt.stop)
		}
	}
	if c.Rate(500*time.Millisecond) != 4 || c.Rate(time.Second) != 0 {
		t.Fatal("rate")
	}
}

// The ramp issues exactly the area under its rate curve, at the right times.
func TestRampPace(t *testing.T) {
	r := Ramp{Start: 0, Stages: []Stage{{Duration: 10 * time.Second, Target: 100}, {Duration: 10 * time.Second, Target: 100}}}
	// Area: 500 in the ramp, 1000 at the plateau.
	var hits uint64
	for {
		_, stop := r.Pace(0, hits)
		if stop {
			break
		}
		hits++
	}
	if hits != 1500 {
		t.Fatalf("ramp issued %d ops, want 1500", hits)
	}
	// Op 500 is due when the ramp ends (t = 10 s); op 125 at t = 5 s (area t²·5).
	for h, want := range map[uint64]time.Duration{125: 5 * time.Second, 500: 10 * time.Second, 1000: 15 * time.Second} {
		wait, _ := r.Pace(0, h)
		if math.Abs(float64(wait-want)) > float64(time.Millisecond) {
			t.Errorf("op %d due at %v, want %v", h, wait, want)
		}
	}
	if got := r.Rate(5 * time.Second); got != 50 {
		t.Fatalf("rate at 5s = %v", got)
	}
}

// TestParseStage: k6's DURATION:TARGET, and an error naming the part that
// is wrong.
func TestParseStage(t *testing.T) {
	st, err := profile.ParseStage(" 1m30s : 2500.5 ")
	if err != nil || st.Duration.D() != 90*time.Second || st.Target != 2500.5 {
		t.Fatalf("ParseStage = %+v, %v", st, err)
	}
	for in, want := range map[string]string{
		"10s":     "want DURATION:TARGET",
		"soon:5":  `duration "soon"`,
		"-1s:5":   `duration "-1s"`,
		"10s:x":   `target "x"`,
		"10s:-1":  `target "-1"`,
		"10s:Inf": `target "Inf"`,
	} {
		if _, err := profile.ParseStage(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseStage(%q) = %v, want an error with %q", in, err, want)
		}
	}
}
