package metrics

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// Busy counts only the part of each request's flight inside the measured
// window: an op that straddles the window's start or end adds its inside
// part alone, so the mean requests in flight cannot read above the lanes
// (with 200 ms calls over a 6 s window it read 4.06 for 4 lanes).
func TestBusyCountsInsideTheWindowOnly(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := NewRecorder([]string{"op"}, 1)
	r.SetWindow(t0, t0.Add(time.Second))
	for _, span := range [][2]time.Duration{
		{-500 * time.Millisecond, 500 * time.Millisecond},  // across the start: 500 ms inside
		{200 * time.Millisecond, 300 * time.Millisecond},   // inside: 100 ms
		{900 * time.Millisecond, 1400 * time.Millisecond},  // across the end: 100 ms inside
		{1100 * time.Millisecond, 1200 * time.Millisecond}, // after: none
	} {
		r.Shard(0).Record(&driver.Result{Op: 0, Start: t0.Add(span[0]), End: t0.Add(span[1])})
	}
	if got, want := r.Busy(), 700*time.Millisecond; got != want {
		t.Errorf("busy %v, want %v", got, want)
	}
	// Without a window (SetWindow never called) every flight counts whole.
	u := NewRecorder([]string{"op"}, 1)
	u.Shard(0).Record(&driver.Result{Op: 0, Start: t0, End: t0.Add(time.Second)})
	if got := u.Busy(); got != time.Second {
		t.Errorf("no window: busy %v, want 1s", got)
	}
}
