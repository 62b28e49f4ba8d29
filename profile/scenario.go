package profile

import (
	"fmt"
	"slices"
	"strconv"
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

// ScenarioList returns the profile's scenarios as written: scenario: as one
// named after the profile, or scenarios:.
func (p *Profile) ScenarioList() []ScenarioSpec {
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
	for i, sc := range p.ScenarioList() {
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
		total += WeightOr1(sc.Weight)
		if len(sc.Steps) == 0 {
			errs.add("%s: no steps", steps)
		}
		for j, st := range sc.Steps {
			sf := fmt.Sprintf("%s[%d]", steps, j)
			if st.Op == "" {
				errs.add("%s.op: required (the name of an entry of ops)", sf)
			} else if p.OpIndex(st.Op) < 0 {
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

func WeightOr1(w *int) int {
	if w == nil {
		return 1
	}
	return *w
}

// OpIndex finds the op a step names: by name, or by default name.
func (p *Profile) OpIndex(name string) int {
	return slices.IndexFunc(p.Ops, func(o OpSpec) bool { return o.OpName() == name })
}

func (p *Profile) opNames() string {
	out := ""
	for i := range p.Ops {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(p.Ops[i].OpName())
	}
	return out
}
