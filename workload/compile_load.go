package workload

import "github.com/mcpbench/mcpbench/profile"

// ramp is the stages as a ramp from start, after a flat warm-up.
func ramp(p *profile.Profile, start float64) Ramp {
	r := Ramp{Start: start, Stages: []Stage{{Duration: p.Warmup.D(), Target: start}}}
	for _, s := range p.Stages {
		r.Stages = append(r.Stages, Stage{Duration: s.Duration.D(), Target: s.Target})
	}
	return r
}

// compileLoad sets the plan's load model and run settings from p (after
// Defaults and validation): the model, the VUs, the times, the schedule,
// churn, the deleted-session check and the fault plan. The engine reads
// these, never the profile.
func (pl *Plan) compileLoad(p *profile.Profile) {
	pl.Name = p.Name
	pl.Open = p.Open()
	pl.VUs, pl.MaxVUs, pl.PeakVUs = p.VUs, p.MaxVUs, p.PeakVUs()
	pl.Concurrency = max(p.Concurrency, 1)
	pl.Rate = p.Rate
	pl.Staged, pl.StagesText = len(p.Stages) > 0, p.StagesText()
	pl.Schedule = schedule(p)
	pl.Warmup, pl.Window, pl.GracefulStop = p.Warmup.D(), p.Window(), p.GracefulStop.D()
	pl.ThinkTime, pl.MaxDelay = p.ThinkTime.D(), p.MaxDelay.D()
	pl.GETStream, pl.Seed = p.GETStream, p.Seed
	pl.ChurnRate, pl.CheckDeleted = p.Churn.Rate, p.CheckDeleted
	if !p.Chaos.Empty() {
		c := *p.Chaos
		pl.Chaos = &c
	}
}

// schedule is the run's schedule (built once, by compileLoad): arrivals
// (open model: constant, or the stages' ramp), active VUs (closed model
// with stages), or nil (closed model: every VU active).
func schedule(p *profile.Profile) Schedule {
	switch {
	case p.Open() && len(p.Stages) > 0:
		return ramp(p, p.Rate)
	case p.Open():
		return Constant{PerSec: p.Rate, Duration: p.Warmup.D() + p.Window()}
	case len(p.Stages) > 0:
		return ramp(p, float64(p.VUs))
	}
	return nil
}
