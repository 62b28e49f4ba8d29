package soak

import (
	"context"

	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/workload"
)

// Run runs a plan as a soak: a long run whose interval rows feed the soak
// verdicts (latency drift, correctness drift, target leak, session
// hygiene; see Verdicts). opts are the engine's, with a sink added that
// keeps the points. Cancelling ctx ends the soak early with the verdicts
// of what ran.
func Run(ctx context.Context, pl *workload.Plan, opts workload.Options) (*metrics.Summary, *metrics.Soak, error) {
	pc := &pointCollector{}
	opts.Sinks = append(append([]metrics.Sink(nil), opts.Sinks...), pc)
	sum, err := workload.Run(ctx, pl, opts)
	if sum == nil {
		return nil, nil, err
	}
	sk := Verdicts(pc.points, sum)
	sk.Interrupted, sk.PlannedS = sum.Interrupted, pl.Profile.Window().Seconds()
	return sum, sk, err
}

// pointCollector keeps each interval as a soak point. The engine calls it
// from one goroutine at a time and Run reads it after the run.
type pointCollector struct{ points []metrics.SoakPoint }

func (c *pointCollector) Start(*metrics.RunInfo) {}
func (c *pointCollector) End(*metrics.RunEnd)    {}
func (c *pointCollector) Interval(p *metrics.IntervalRecord) {
	r := p.Row
	pt := metrics.SoakPoint{T: p.Elapsed.Seconds(), Count: r.All.Count, P99: r.All.P99, Errors: r.All.Errors,
		Faulty: r.All.Faulty, SelfMB: r.Self.RSSMB, Measure: p.Phase == metrics.PhaseMeasure}
	if r.Target != nil {
		pt.HasTgt, pt.TgtMB, pt.TgtFDs = true, r.Target.RSSMB, r.Target.FDs
	}
	c.points = append(c.points, pt)
}
