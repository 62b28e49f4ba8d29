package profile

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/internal/secret"
)

// stepName is a step's name: name:, or the op it names.
func (s *StepSpec) stepName() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Op
}

// expandEnv returns the -e values (Profile.Env) with ${NAME} expanded from
// the environment, and an error naming each key with an unset variable.
func (p *Profile) expandEnv(lookup secret.LookupFunc) (map[string]string, []error) {
	if len(p.Env) == 0 {
		return nil, nil
	}
	var errs []error
	out := make(map[string]string, len(p.Env))
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		v, err := secret.Expand(p.Env[k], lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("env.%s: %w", k, err))
		}
		out[k] = v
	}
	return out, errs
}

// validateRefs checks every {{step}} of the ops' templates (args: the
// compiled ops, nil entries for ops without templates): used outside a
// scenario, naming a step that is not before it in a scenario that runs
// the op, or one that fires several requests at once (parallel), each is
// an error naming the scenario step and the field.
func (p *Profile) validateRefs(args []*argtmpl.Op) []error {
	var errs problems
	if !p.HasScenarios() {
		for _, a := range args {
			if a == nil {
				continue
			}
			for _, r := range a.Refs() {
				errs.add("%s: %s reads a scenario step's result: this profile runs the op mix (give scenario: or scenarios:)", r.Field, r)
			}
		}
		return errs
	}
	field := "scenarios"
	if len(p.Scenario) > 0 {
		field = "scenario"
	}
	for si, sc := range p.ScenarioList() {
		steps := fmt.Sprintf("%s[%d].steps", field, si)
		if field == "scenario" {
			steps = "scenario"
		}
		for j := range sc.Steps {
			i := p.OpIndex(sc.Steps[j].Op)
			if i < 0 || i >= len(args) || args[i] == nil {
				continue
			}
			for _, r := range args[i].Refs() {
				at := fmt.Sprintf("%s[%d] (step %q): %s: %s", steps, j, sc.Steps[j].stepName(), r.Field, r)
				k := EarlierStep(sc.Steps, j, r.Step)
				switch {
				case k >= 0 && sc.Steps[k].Parallel > 1:
					errs.add("%s: step %q (%s[%d]) fires %d requests at once: which answer to read? give it parallel: 1", at, r.Step, steps, k, sc.Steps[k].Parallel)
				case k >= 0:
				case slices.ContainsFunc(sc.Steps[j:], func(s StepSpec) bool { return s.stepName() == r.Step }):
					errs.add("%s: step %q runs at or after this one in scenario %q: a step reads only the steps before it", at, r.Step, sc.Name)
				default:
					var names []string
					for _, s := range sc.Steps[:j] {
						names = append(names, strconv.Quote(s.stepName()))
					}
					errs.add("%s: no step %q in scenario %q before this one (steps before it: %s)", at, r.Step, sc.Name, cmpOrNone(strings.Join(names, ", ")))
				}
			}
		}
	}
	return errs
}

func cmpOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// EarlierStep is the latest step before j named name, or -1.
func EarlierStep(steps []StepSpec, j int, name string) int {
	for k := j - 1; k >= 0; k-- {
		if steps[k].stepName() == name {
			return k
		}
	}
	return -1
}

// SetEnv sets Env values from KEY=VALUE pairs (-e), over the profile's.
// A pair without "=" or with an empty KEY is an error naming it (a
// *SettingError of the setting env).
func (p *Profile) SetEnv(pairs []string) error {
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return SettingErrorf([]string{"env"}, "{env} %q: want KEY=VALUE (a key without spaces; for a secret, KEY='${NAME}')", kv)
		}
		if p.Env == nil {
			p.Env = map[string]string{}
		}
		p.Env[k] = v
	}
	return nil
}
