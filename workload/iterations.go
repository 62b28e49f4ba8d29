package workload

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Shared iterations (--iterations N, k6's shared-iterations executor): the
// closed model's VUs share N iterations of the measured window (an
// iteration is an op of the mix, or one iteration of a scenario), each VU
// claiming the next one before it starts it; once all are claimed a VU
// stops, and the measured window ends when the last one completes. The
// warm-up, when there is one, runs as usual and claims none. The duration
// caps the run (default profile.DefaultIterationsCap): the summary notes how many
// were done when it ran out first. An execution segment (--segment,
// --processes) runs its share of N (Segment.Count), so the segments
// together run exactly N.

// iterationCount is a run's claimed and completed shared iterations.
type iterationCount struct {
	share   int64 // this segment's iterations (0: no --iterations)
	claimed atomic.Int64
	done    atomic.Int64
	doneAt  atomic.Pointer[time.Time] // when the last completed
}

// startIterations sets the segment's share of the plan's iterations.
func (e *engine) startIterations() {
	if e.pl.Iterations > 0 {
		e.iters.share = int64(e.opts.Segment.Count(e.pl.Iterations))
	}
}

// claimIteration claims the next shared iteration for an op about to
// start at now: claimed is false without --iterations and during the
// warm-up (nothing to claim); all is true when every one is claimed (the
// VU stops).
func (e *engine) claimIteration(now time.Time) (claimed, all bool) {
	if e.iters.share == 0 || now.Before(e.warmEnd) {
		return false, false
	}
	if e.iters.claimed.Add(1) > e.iters.share {
		return false, true
	}
	return true, false
}

// iterationDone counts a claimed iteration completed; the last one ends
// the measured window now.
func (e *engine) iterationDone() {
	if e.iters.done.Add(1) != e.iters.share {
		return
	}
	now := time.Now()
	e.iters.doneAt.Store(&now)
	e.stoppedAt.CompareAndSwap(nil, &now) // the measured window ends here (measuredEnd)
	e.stopAdmit()
}

// iterationsNote says how the shared iterations went ("" without).
func (e *engine) iterationsNote() string {
	s := e.iters.share
	if s == 0 {
		return ""
	}
	if at := e.iters.doneAt.Load(); at != nil {
		return fmt.Sprintf("iterations: all %d done in %.3gs of the measured window", s, at.Sub(e.warmEnd).Seconds())
	}
	return fmt.Sprintf("iterations: %d of %d done when the duration (%v, the cap) ran out", e.iters.done.Load(), s, e.pl.Window)
}
