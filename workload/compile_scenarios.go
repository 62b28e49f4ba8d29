package workload

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
)

// Scenario is a compiled scenario.
type Scenario struct {
	Name   string
	Weight int
	Steps  []Step
}

// Step is a compiled step: Op indexes Plan.Ops (each step has an op of
// its own, named "<scenario>#<n>:<op>", so its latency is reported apart).
type Step struct {
	Op       int
	Think    time.Duration
	Repeat   int
	Parallel int
}

// compileScenarios builds the plan's scenarios: each step gets its own
// op (a copy of the op it names, renamed), so per-step latency is kept.
func (pl *Plan) compileScenarios(p *profile.Profile, ops []profile.OpSpec, args []*argtmpl.Op) error {
	total := 0
	for _, sc := range p.ScenarioList() {
		w := profile.WeightOr1(sc.Weight)
		if w == 0 {
			continue
		}
		s := Scenario{Name: sc.Name, Weight: w}
		for j, st := range sc.Steps {
			i := p.OpIndex(st.Op)
			op, err := pl.buildOp(&ops[i], fmt.Sprintf("%s#%d:%s", sc.Name, j+1, st.Op), args[i])
			if err != nil {
				return fmt.Errorf("ops[%d].arguments: %w", i, err)
			}
			s.Steps = append(s.Steps, Step{Op: len(pl.Ops), Think: st.Think.D(), Repeat: max(st.Repeat, 1), Parallel: max(st.Parallel, 1)})
			pl.Ops = append(pl.Ops, op)
			pl.Names = append(pl.Names, op.Name)
		}
		pl.correlate(&sc, &s, args, p) // {{step}} (correlate.go)
		total += w
		pl.Scenarios = append(pl.Scenarios, s)
		pl.scum = append(pl.scum, total)
	}
	return nil
}

// buildOp compiles an op spec (expanded) into a driver op named name,
// rendered by a when its arguments are templates (args.go; nil: fixed).
func (pl *Plan) buildOp(o *profile.OpSpec, name string, a *argtmpl.Op) (*driver.Op, error) {
	params, err := o.Params()
	if err != nil {
		return nil, err
	}
	op, err := driver.NewOp(name, o.Method, params, o.Progress)
	if err != nil {
		return nil, err
	}
	op.ExpectProgress = o.Expect.Progress
	o.ApplyMore(op) // cancel, pagination, subscriptions (mcpops.go)
	// checks (checks.go)
	pl.attachChecks(op, o, name)
	if a != nil {
		op.Render = a.Render              // templated arguments (args.go)
		if !slices.Contains(pl.args, a) { // two steps may name one op
			pl.args = append(pl.args, a)
		}
		if a.DynName() {
			pl.dynNames = append(pl.dynNames, name)
		}
	}
	return op, nil
}

// MaxParallel is the most requests a step of the plan fires at once (1
// without scenarios): the lanes a VU's session needs.
func (pl *Plan) MaxParallel() int {
	n := 1
	for _, sc := range pl.Scenarios {
		for _, st := range sc.Steps {
			n = max(n, st.Parallel)
		}
	}
	return n
}

// scenarioFor chooses the scenario of arrival slot h (open model), the
// same whichever VU runs it; pickScenario draws one (closed model).
func (pl *Plan) scenarioFor(h uint64) int {
	return searchCum(pl.scum, int(mix(h, pl.Seed)%uint64(pl.scum[len(pl.scum)-1])))
}
