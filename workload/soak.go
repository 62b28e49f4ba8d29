package workload

import (
	"context"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/metrics"
)

// SoakSpec is a profile's soak: section.
type SoakSpec struct {
	// Checkpoint writes the summary so far this often (default 1 min), so
	// an hours-long run that dies keeps its figures.
	Checkpoint Duration `yaml:"checkpoint"`
}

// CheckpointEvery returns the checkpoint period with its default.
func (s *SoakSpec) CheckpointEvery() time.Duration {
	if s == nil || s.Checkpoint == 0 {
		return time.Minute
	}
	return s.Checkpoint.D()
}

// RunSoak runs a plan as a soak: a long run whose interval rows feed the
// soak verdicts (latency drift, correctness drift, target leak, session
// hygiene; see metrics.SoakVerdicts). opts are the engine's; its
// OnInterval is still called. Cancelling ctx ends the soak early with the
// verdicts of what ran.
func RunSoak(ctx context.Context, pl *Plan, opts Options) (*metrics.Summary, *metrics.Soak, error) {
	var mu sync.Mutex
	var points []metrics.SoakPoint
	inner := opts.OnInterval
	opts.OnInterval = func(p Progress) {
		r := p.Row
		pt := metrics.SoakPoint{T: p.Elapsed.Seconds(), Count: r.All.Count, P99: r.All.P99, Errors: r.All.Errors,
			Faulty: r.All.Faulty, SelfMB: r.Self.RSSMB, Measure: p.Phase == "measure"}
		if r.Target != nil {
			pt.HasTgt, pt.TgtMB, pt.TgtFDs = true, r.Target.RSSMB, r.Target.FDs
		}
		mu.Lock()
		points = append(points, pt)
		mu.Unlock()
		if inner != nil {
			inner(p)
		}
	}
	sum, err := Run(ctx, pl, opts)
	if sum == nil {
		return nil, nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	sk := metrics.SoakVerdicts(points, sum)
	sk.Interrupted, sk.PlannedS = sum.Interrupted, pl.Profile.Duration.D().Seconds()
	return sum, sk, err
}
