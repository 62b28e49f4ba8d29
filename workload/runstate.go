package workload

import (
	"slices"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/check"
	"github.com/mcpbench/mcpbench/driver"
)

// A run's own state. The plan is read-only under Run: every piece of
// state a run changes lives on the run's copy of the plan, made here when
// the run starts, so the plan may be run again (each run starting afresh)
// or by several runs at once (TestPlanReadOnlyUnderRun).

// runCopy is the run's own copy of plan pl, for execution segment seg
// (nil: the whole test). Set on the copy: what Run settles (the protocol,
// the log level, the resource-update callback, the HTTP client when the
// plan has none, features switched off, ops taken out of the mix: cum is
// the copy's), and what the ops keep while they run:
//   - the ops: clones (driver.Op.Clone), so PrepareOps sets the copies'
//     Mcp-Param-* headers and a Cancel op's fastest answer starts afresh;
//   - the argument renderers: the run's copies (argtmpl.Run), so {{seq}}
//     and the data files' sequential rows start from the first number,
//     in the run's segment, and the run-time failures are the run's;
//   - the correlator's VU values, and the output-schema store;
//   - the large-message budget (its peak and waits are the run's).
//
// The copies' Render and Inspect are bound to that state (wire); what
// they read of the plan (programs, templates, data rows, captures, checks)
// is read-only. The copy costs one allocation per op and renderer at the
// run's start; the hot path is the plan's (the same Render and Inspect
// code).
func runCopy(pl *Plan, seg *Segment) *Plan {
	c := *pl
	c.cum = slices.Clone(pl.cum)
	if b := pl.Driver.Budget; b != nil {
		c.Driver.Budget = driver.NewBudget(b.Stats().Size)
	}
	if c.Driver.HTTPClient == nil && c.Driver.URL != "" {
		// Compile's zero value: one client for the run's sessions.
		c.Driver.HTTPClient = driver.NewHTTPClient(&c.Driver)
	}
	var slots argtmpl.Slotter // nil: the whole test
	if !seg.Whole() {
		slots = seg
	}
	r := argtmpl.NewRun(slots)
	c.args = make([]*argtmpl.Op, len(pl.args))
	for i, a := range pl.args {
		c.args[i] = r.Op(a)
	}
	c.corr = pl.corr.forRun()
	c.checks = pl.checks.forRun()
	c.Ops = make([]*driver.Op, len(pl.Ops))
	c.argOf = nil // compile time only
	for i, op := range pl.Ops {
		n := op.Clone()
		var set *check.Set
		if s := pl.checks.sets[op]; s != nil {
			set = c.checks.setFor(s, pl.checks.tools[op])
			c.checks.sets[n], c.checks.tools[n] = set, pl.checks.tools[op]
		}
		wire(n, i, r.Op(pl.argOf[op]), c.corr, set)
		c.Ops[i] = n
	}
	return &c
}

// wireOps gives the plan's ops their Render and Inspect, bound to the
// plan's own renderers, correlator and checks (the end of Compile). A run
// never calls them: it wires its clones (runCopy).
func (pl *Plan) wireOps() {
	for i, op := range pl.Ops {
		wire(op, i, pl.argOf[op], pl.corr, pl.checks.sets[op])
	}
}

// wire gives plan op i (op) its Render and Inspect: a renders its
// templated arguments (nil: fixed), with the VU's values of c when the
// step reads an earlier step's ({{step}}); Inspect keeps the values c
// captures from its result, then runs its checks (set; nil: none). An op
// with neither keeps a nil Inspect: no cost.
func wire(op *driver.Op, i int, a *argtmpl.Op, c *correlator, set *check.Set) {
	op.Render, op.Inspect = nil, nil
	if a != nil {
		op.Render = a.Render // templated arguments (argtmpl)
	}
	if c == nil {
		if set != nil {
			op.Inspect = set.Inspect
		}
		return
	}
	if b := c.deps[i]; b != nil && a != nil {
		op.Render = func(dst []byte, rc driver.RenderContext) []byte {
			var vals []argtmpl.Captured
			if vv := c.of(rc.VU); vv != nil {
				vals = vv.vals
			}
			return a.RenderValues(dst, rc, vals, b.slots)
		}
	}
	caps := c.caps[i]
	switch {
	case len(caps) > 0 && set != nil: // the step's own checks (checks.go): both run
		capture := c.inspector(caps)
		op.Inspect = func(result []byte, res *driver.Result) { capture(result, res); set.Inspect(result, res) }
	case len(caps) > 0:
		op.Inspect = c.inspector(caps)
	case set != nil:
		op.Inspect = set.Inspect
	}
}

// forRun is the run's check state: the plan's checks, with an output
// schema store of the run's own (the plan's is never filled); setFor
// gives each op's set of it.
func (pc planChecks) forRun() planChecks {
	c := pc
	if pc.schemas != nil {
		c.schemas = check.NewSchemas()
	}
	if pc.sets != nil {
		c.sets, c.tools = map[*driver.Op]*check.Set{}, map[*driver.Op]string{}
	}
	return c
}

// setFor is the run's set of plan set s (of tool, check.NewSet's): s
// itself when no check of it keeps state (no output_schema), else one on
// the run's schema store.
func (pc *planChecks) setFor(s *check.Set, tool string) *check.Set {
	if pc.schemas == nil {
		return s
	}
	n, err := check.NewSet(s.Checks, tool, pc.schemas)
	if err != nil {
		return s // NewSet accepted these checks at compile time
	}
	return n
}
