package workload

import (
	"testing"

	"github.com/mcpbench/mcpbench/profile"
)

func TestAutoProcs(t *testing.T) {
	open := func(rate float64) *profile.Profile { return &profile.Profile{Rate: rate} }
	tests := []struct {
		name     string
		p        *profile.Profile
		embedded bool
		cpus     int
		want     int
	}{
		{"2000/s fits one P", open(2000), false, 2, 1},
		{"8000/s needs three, capped at the cores", open(8000), false, 2, 2},
		{"8000/s on 8 cores", open(8000), false, 8, 3},
		{"embedded server keeps every core", open(2000), true, 2, 0},
		{"closed model keeps every core", open(0), false, 2, 0},
		{"rate sweep sized for its top step", &profile.Profile{Rate: 100, Sweep: &profile.SweepSpec{By: "rate", From: 500, To: 8000}}, false, 8, 3},
		{"VU sweep keeps every core", &profile.Profile{Rate: 100, Sweep: &profile.SweepSpec{By: "vus", From: 10, To: 100}}, false, 8, 0},
		{"session sweep sized for its rate", &profile.Profile{Rate: 100, Sweep: &profile.SweepSpec{By: "sessions", From: 1000, To: 5000}}, false, 8, 1},
	}
	for _, tt := range tests {
		if got, _ := AutoProcs(tt.p, tt.embedded, tt.cpus); got != tt.want {
			t.Errorf("%s: %d Ps, want %d", tt.name, got, tt.want)
		}
	}
}

// A segment gets the Ps of its share of the rate; the whole test, a
// sweep and the embedded server keep what the process has.
func TestSegmentProcs(t *testing.T) {
	quarter, err := ParseSegment("1/4", "")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ParseSegment("", "")
	if err != nil {
		t.Fatal(err)
	}
	p := &profile.Profile{Rate: 20000}
	tests := []struct {
		name     string
		p        *profile.Profile
		seg      *Segment
		embedded bool
		want     int
	}{
		{"a quarter of 20000/s needs two", p, quarter, false, 2},
		{"the whole test keeps its Ps", p, whole, false, 0},
		{"the embedded server keeps every core", p, quarter, true, 0},
		{"a sweep keeps its Ps", &profile.Profile{Rate: 20000, Sweep: &profile.SweepSpec{By: "rate", From: 500, To: 8000}}, quarter, false, 0},
	}
	for _, tt := range tests {
		if got := SegmentProcs(tt.p, tt.seg, tt.embedded, 16); got != tt.want {
			t.Errorf("%s: %d Ps, want %d", tt.name, got, tt.want)
		}
	}
}
