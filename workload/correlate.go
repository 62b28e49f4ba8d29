package workload

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
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

// correlate wires the scenario sc (as written) compiled into s (its
// steps' plan ops): the steps read get an Inspect that keeps the values,
// the steps that read get a Render bound to them. validateRefs checked
// every reference.
func (pl *Plan) correlate(sc *profile.ScenarioSpec, s *Scenario, args []*argtmpl.Op, p *profile.Profile) {
	for j := range sc.Steps {
		i := p.OpIndex(sc.Steps[j].Op)
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
			k := s.Steps[profile.EarlierStep(sc.Steps, j, r.Step)].Op
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
