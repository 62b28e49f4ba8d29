package profile

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

// StagesText describes the stages: "0 → 500/s over 10s → 2000/s over
// 10s" ("" without stages).
func (p *Profile) StagesText() string {
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

// peakOf is the peak of the stages ramped from start (the warm-up holds
// start): start or the highest stage target.
func (p *Profile) peakOf(start float64) float64 {
	peak := start
	for _, s := range p.Stages {
		peak = max(peak, s.Target)
	}
	return peak
}

// PeakRate is the highest arrival rate asked for.
func (p *Profile) PeakRate() float64 {
	if len(p.Stages) > 0 {
		return p.peakOf(p.Rate)
	}
	return p.Rate
}

// PeakVUs is the most VUs active at once in the closed model.
func (p *Profile) PeakVUs() int {
	if p.Open() || len(p.Stages) == 0 {
		return p.VUs
	}
	return int(p.peakOf(float64(p.VUs)) + 0.5)
}

// OpName is the default label of an op.
func (o *OpSpec) OpName() string {
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

// Params renders the op's JSON-RPC params (without _meta).
func (o *OpSpec) Params() (json.RawMessage, error) {
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
