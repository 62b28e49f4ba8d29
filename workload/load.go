package workload

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Open reports whether the profile uses the open model (an arrival rate).
func (p *Profile) Open() bool { return p.Model == "open" || (p.Model == "" && p.Rate > 0) }

// Window is the measured window: the stages' total, or Duration.
func (p *Profile) Window() time.Duration {
	if len(p.Stages) == 0 {
		return p.Duration.D()
	}
	var d time.Duration
	for _, s := range p.Stages {
		d += s.Duration.D()
	}
	return d
}

// ramp is the stages as a ramp from start, after a flat warm-up.
func (p *Profile) ramp(start float64) Ramp {
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
func (pl *Plan) compileLoad(p *Profile) {
	pl.Name = p.Name
	pl.Open = p.Open()
	pl.VUs, pl.MaxVUs, pl.PeakVUs = p.VUs, p.MaxVUs, p.peakVUs()
	pl.Concurrency = max(p.Concurrency, 1)
	pl.Rate = p.Rate
	pl.Staged, pl.StagesText = len(p.Stages) > 0, p.stagesText()
	pl.Schedule = p.schedule()
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
func (p *Profile) schedule() Schedule {
	switch {
	case p.Open() && len(p.Stages) > 0:
		return p.ramp(p.Rate)
	case p.Open():
		return Constant{PerSec: p.Rate, Duration: p.Warmup.D() + p.Window()}
	case len(p.Stages) > 0:
		return p.ramp(float64(p.VUs))
	}
	return nil
}

// stagesText describes the stages: "0 → 500/s over 10s → 2000/s over
// 10s" ("" without stages).
func (p *Profile) stagesText() string {
	if len(p.Stages) == 0 {
		return ""
	}
	unit, start := "/s", p.Rate
	if !p.Open() {
		unit, start = " VUs", float64(p.VUs)
	}
	out := strconv.FormatFloat(start, 'g', -1, 64)
	for _, st := range p.Stages {
		out += " → " + strconv.FormatFloat(st.Target, 'g', -1, 64) + unit + " over " + st.Duration.D().String()
	}
	return out
}

// peakRate is the highest arrival rate asked for.
func (p *Profile) peakRate() float64 {
	if len(p.Stages) > 0 {
		return p.ramp(p.Rate).Peak()
	}
	return p.Rate
}

// peakVUs is the most VUs active at once in the closed model.
func (p *Profile) peakVUs() int {
	if p.Open() || len(p.Stages) == 0 {
		return p.VUs
	}
	return int(p.ramp(float64(p.VUs)).Peak() + 0.5)
}

// opName is the default label of an op.
func (o *OpSpec) opName() string {
	if o.Name != "" {
		return o.Name
	}
	switch o.Method {
	case "tools/call":
		return o.Method + ":" + o.Tool
	case "prompts/get":
		return o.Method + ":" + o.Prompt
	case "resources/read":
		return o.Method + ":" + o.URI
	}
	return o.moreName()
}

// params renders the op's JSON-RPC params (without _meta).
func (o *OpSpec) params() (json.RawMessage, error) {
	var v map[string]any
	switch o.Method {
	case "tools/call":
		v = map[string]any{"name": o.Tool, "arguments": orEmpty(o.Arguments)}
	case "prompts/get":
		args := map[string]string{}
		for k, a := range o.Arguments {
			args[k] = fmt.Sprint(a) // prompt arguments are strings
		}
		v = map[string]any{"name": o.Prompt, "arguments": args}
	case "resources/read":
		v = map[string]any{"uri": o.URI}
	default:
		return o.moreParams()
	}
	return json.Marshal(v)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
