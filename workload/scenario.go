package workload

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
)

// Scenarios: ordered steps a VU runs per iteration, as an agent does
// (list tools → call → read a resource …), k6 style. A profile gives one
// (scenario: a list of steps) or several named ones with weights
// (scenarios:); each iteration runs one, chosen by weight. Steps name
// entries of ops:, which is then the library of operations rather than a
// weighted mix (the mix is not run).

// ScenarioSpec is one named scenario.
type ScenarioSpec struct {
	Name string `yaml:"name"`
	// Weight: how often an iteration runs this scenario relative to the
	// others (default 1; 0 leaves it out).
	Weight *int       `yaml:"weight"`
	Steps  []StepSpec `yaml:"steps"`
}

// StepSpec is one step of a scenario.
type StepSpec struct {
	// Op names an entry of ops: (its name, or its default name such as
	// tools/call:echo).
	Op string `yaml:"op"`
	// Name is how later steps read its result ({{step "name" "path"}};
	// default: Op).
	Name string `yaml:"name"`
	// Think is a pause after the step (part of the iteration's time).
	Think Duration `yaml:"think"`
	// Repeat runs the step this many times in a row (default 1).
	Repeat int `yaml:"repeat"`
	// Parallel fires this many requests of the op at once, each on its own
	// lane of the VU's session (default 1); the step ends when all have.
	Parallel int `yaml:"parallel"`
}

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

// scenarios returns the profile's scenarios as written: scenario: as one
// named after the profile, or scenarios:.
func (p *Profile) scenarios() []ScenarioSpec {
	if len(p.Scenario) > 0 {
		one := 1
		return []ScenarioSpec{{Name: cmpOrName(p.Name), Weight: &one, Steps: p.Scenario}}
	}
	return p.Scenarios
}

func cmpOrName(n string) string {
	if n == "" {
		return "scenario"
	}
	return n
}

// HasScenarios reports whether the profile runs scenarios instead of the
// op mix.
func (p *Profile) HasScenarios() bool { return len(p.Scenario) > 0 || len(p.Scenarios) > 0 }

// validateScenarios checks scenario: and scenarios:.
func (p *Profile) validateScenarios() []error {
	var errs problems
	if len(p.Scenario) > 0 && len(p.Scenarios) > 0 {
		errs.add("scenario: give either scenario (one list of steps) or scenarios (named, with weights), not both")
	}
	if p.HasScenarios() && p.Concurrency > 1 {
		errs.add("concurrency: %d with scenarios: a scenario's steps set their own parallelism (parallel: N)", p.Concurrency)
	}
	field := "scenarios"
	if len(p.Scenario) > 0 {
		field = "scenario"
	}
	total, names := 0, map[string]bool{}
	for i, sc := range p.scenarios() {
		f := fmt.Sprintf("%s[%d]", field, i)
		steps := f + ".steps"
		if field == "scenario" {
			f, steps = "scenario", "scenario"
		} else if sc.Name == "" {
			errs.add("%s.name: required", f)
		} else if names[sc.Name] {
			errs.add("%s.name: %q used twice", f, sc.Name)
		}
		names[sc.Name] = true
		if sc.Weight != nil && *sc.Weight < 0 {
			errs.add("%s.weight: %d, want ≥ 0", f, *sc.Weight)
		}
		total += weightOr1(sc.Weight)
		if len(sc.Steps) == 0 {
			errs.add("%s: no steps", steps)
		}
		for j, st := range sc.Steps {
			sf := fmt.Sprintf("%s[%d]", steps, j)
			if st.Op == "" {
				errs.add("%s.op: required (the name of an entry of ops)", sf)
			} else if p.opIndex(st.Op) < 0 {
				errs.add("%s.op: %q is not an op of ops (names: %s)", sf, st.Op, p.opNames())
			}
			if st.Repeat < 0 {
				errs.add("%s.repeat: %d, want ≥ 1", sf, st.Repeat)
			}
			if st.Parallel < 0 || st.Parallel > MaxConcurrency {
				errs.add("%s.parallel: %d, want 1 … %d", sf, st.Parallel, MaxConcurrency)
			}
			if st.Think < 0 {
				errs.add("%s.think: %v, want ≥ 0", sf, st.Think.D())
			}
		}
	}
	if p.HasScenarios() && total == 0 {
		errs.add("%s: all weights are 0", field)
	}
	return errs
}

func weightOr1(w *int) int {
	if w == nil {
		return 1
	}
	return *w
}

// opIndex finds the op a step names: by name, or by default name.
func (p *Profile) opIndex(name string) int {
	return slices.IndexFunc(p.Ops, func(o OpSpec) bool { return o.opName() == name })
}

func (p *Profile) opNames() string {
	out := ""
	for i := range p.Ops {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(p.Ops[i].opName())
	}
	return out
}

// compileScenarios builds the plan's scenarios: each step gets its own
// op (a copy of the op it names, renamed), so per-step latency is kept.
func (pl *Plan) compileScenarios(p *Profile, ops []OpSpec, args []*argtmpl.Op) error {
	total := 0
	for _, sc := range p.scenarios() {
		w := weightOr1(sc.Weight)
		if w == 0 {
			continue
		}
		s := Scenario{Name: sc.Name, Weight: w}
		for j, st := range sc.Steps {
			i := p.opIndex(st.Op)
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
func (pl *Plan) buildOp(o *OpSpec, name string, a *argtmpl.Op) (*driver.Op, error) {
	params, err := o.params()
	if err != nil {
		return nil, err
	}
	op, err := driver.NewOp(name, o.Method, params, o.Progress)
	if err != nil {
		return nil, err
	}
	op.ExpectProgress = o.Expect.Progress
	o.applyMore(op) // cancel, pagination, subscriptions (mcpops.go)
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
