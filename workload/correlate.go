package workload

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
)

// Correlation: a scenario step's arguments (and its tool, prompt or uri)
// may read a value of an earlier step's result, as an agent lists tools
// and then calls one:
//
//	{{step "list" "tools.0.name"}}   the value at gjson path tools.0.name
//	                                 of the result of step "list"
//
// A step's name is its name: or, without one, the op it names. A
// reference reads the latest step of that name before it in the same
// scenario (the same iteration): one that is not there, or only after it,
// is a profile error naming the field. The step that is read keeps, per
// VU, a copy of the values later steps ask for, taken from its result as
// it arrives (driver.Op.Inspect; the first page of a list op that has the
// path); an op nobody reads costs nothing. A value that is missing when
// the step that reads it is due (the step read failed, or its result has
// no such path) fails that request without sending it: error class
// missing-value (driver.ClassMissingValue), with the reason. A string
// value inside a template's text is its text; a whole value
// ("{{step …}}" alone) is sent as the JSON value (a number stays a
// number); tool, prompt and uri are always strings.
//
// {{env "KEY"}} is the value given with -e KEY=VALUE (or env: in the
// profile), fixed when the plan is compiled. VALUE may hold ${NAME}: a
// secret from the environment, expanded for the request only (run.json
// and the summary show the profile as written).

// capture is a value the step of an op keeps: the path, into which slot.
type capture struct {
	path string
	slot int
	from string // the step's name
}

// binding is what the step of an op reads: the slot of each of its op's
// refs.
type binding struct {
	slots []int
	refs  []argtmpl.Ref
}

// correlator holds a plan's captures and bindings, and the run's values.
type correlator struct {
	slots int
	caps  map[int][]capture // by plan op (a scenario step): the values its result keeps
	deps  map[int]*binding  // by plan op: the values its request reads
	// vus are the run's VUs' values by VU number (whole test), each set
	// when its VU starts (forVU, under grow; the table is replaced when it
	// grows, read with a load): each VU's values are touched only by the
	// goroutine running it (and the requests of its parallel steps, which
	// only read).
	vus  atomic.Pointer[[]*vuValues]
	grow sync.Mutex
}

type vuValues struct{ vals []argtmpl.Captured }

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
	for si, sc := range p.scenarios() {
		steps := fmt.Sprintf("%s[%d].steps", field, si)
		if field == "scenario" {
			steps = "scenario"
		}
		for j := range sc.Steps {
			i := p.opIndex(sc.Steps[j].Op)
			if i < 0 || i >= len(args) || args[i] == nil {
				continue
			}
			for _, r := range args[i].Refs() {
				at := fmt.Sprintf("%s[%d] (step %q): %s: %s", steps, j, sc.Steps[j].stepName(), r.Field, r)
				k := earlierStep(sc.Steps, j, r.Step)
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

// earlierStep is the latest step before j named name, or -1.
func earlierStep(steps []StepSpec, j int, name string) int {
	for k := j - 1; k >= 0; k-- {
		if steps[k].stepName() == name {
			return k
		}
	}
	return -1
}

// correlate wires the scenario sc (as written) compiled into s (its
// steps' plan ops): the steps read get an Inspect that keeps the values,
// the steps that read get a Render bound to them. validateRefs checked
// every reference.
func (pl *Plan) correlate(sc *ScenarioSpec, s *Scenario, args []*argtmpl.Op, p *Profile) {
	for j := range sc.Steps {
		i := p.opIndex(sc.Steps[j].Op)
		a := args[i]
		if a == nil || len(a.Refs()) == 0 {
			continue
		}
		if pl.corr == nil {
			pl.corr = &correlator{caps: map[int][]capture{}, deps: map[int]*binding{}}
		}
		c := pl.corr
		b := &binding{refs: a.Refs()}
		for _, r := range a.Refs() {
			k := s.Steps[earlierStep(sc.Steps, j, r.Step)].Op
			at := slices.IndexFunc(c.caps[k], func(x capture) bool { return x.path == r.Path })
			if at < 0 {
				c.caps[k] = append(c.caps[k], capture{path: r.Path, slot: c.slots, from: r.Step})
				at = len(c.caps[k]) - 1
				c.slots++
			}
			b.slots = append(b.slots, c.caps[k][at].slot)
		}
		op := s.Steps[j].Op
		c.deps[op] = b
		pl.Ops[op].Render = func(dst []byte, rc driver.RenderContext) []byte {
			var vals []argtmpl.Captured
			if vv := c.of(rc.VU); vv != nil {
				vals = vv.vals
			}
			return a.RenderValues(dst, rc, vals, b.slots)
		}
	}
	if pl.corr == nil {
		return
	}
	for k, caps := range pl.corr.caps {
		capture := pl.corr.inspector(caps)
		if checks := pl.Ops[k].Inspect; checks != nil { // the step's own checks (checks.go): both run
			pl.Ops[k].Inspect = func(result []byte, res *driver.Result) { capture(result, res); checks(result, res) }
		} else {
			pl.Ops[k].Inspect = capture
		}
	}
}

// SetEnv sets Env values from KEY=VALUE pairs (-e), over the profile's.
// A pair without "=" or with an empty KEY is an error naming it.
func (p *Profile) SetEnv(pairs []string) error {
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return fmt.Errorf("-e %q: want KEY=VALUE (a key without spaces; for a secret, KEY='${NAME}')", kv)
		}
		if p.Env == nil {
			p.Env = map[string]string{}
		}
		p.Env[k] = v
	}
	return nil
}
