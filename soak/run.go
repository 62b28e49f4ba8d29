package soak

import (
	"context"

	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// Run runs a plan as a soak: a long run whose interval rows feed the soak
// verdicts (latency drift, correctness drift, target leak, session
// hygiene; see Verdicts). opts are the engine's, with a sink added that
// keeps the points. Cancelling ctx ends the soak early with the verdicts
// of what ran.
func Run(ctx context.Context, pl *workload.Plan, opts workload.Options) (*results.Summary, *results.Soak, error) {
	c := &Collector{}
	opts.Sinks = append(append([]results.Sink(nil), opts.Sinks...), c)
	sum, err := workload.Run(ctx, pl, opts)
	if sum == nil {
		return nil, nil, err
	}
	return sum, c.Soak(pl, sum), err
}

// Collector is a sink that keeps each interval of a run as a soak point.
// Run feeds one the engine's intervals; a soak run as child processes
// (soak --processes) feeds one the merged intervals (results.Merged.Replay)
// and is judged by Soak the same way. Its methods are called from one
// goroutine at a time (the Sink contract); Soak after the run.
type Collector struct{ points []results.SoakPoint }

var _ results.Sink = (*Collector)(nil)

func (c *Collector) Start(*results.RunInfo) {}
func (c *Collector) End(*results.RunEnd)    {}
func (c *Collector) Interval(p *results.IntervalRecord) {
	r := p.Row
	pt := results.SoakPoint{T: p.Elapsed.Seconds(), Count: r.All.Count, P99: r.All.P99, Errors: r.All.Errors,
		Faulty: r.All.Faulty, SelfMB: r.Self.RSSMB, Measure: p.Phase == results.PhaseMeasure, Stopping: p.Phase == results.PhaseStopping,
		Sessions: p.Sessions}
	if r.Target != nil {
		pt.HasTgt, pt.TgtMB, pt.TgtFDs = true, r.Target.RSSMB, r.Target.FDs
	}
	c.points = append(c.points, pt)
}

// Soak judges the run of plan pl from the points kept and its summary
// (see Verdicts).
func (c *Collector) Soak(pl *workload.Plan, sum *results.Summary) *results.Soak {
	sk := Verdicts(c.points, sum)
	sk.Interrupted, sk.PlannedS = sum.Interrupted, pl.Window.Seconds()
	return sk
}
