package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/check"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
)

// planChecks is a plan's check state. The schema store is filled while
// the plan runs (the engine's sessions, each at its start).
type planChecks struct {
	sets    map[*driver.Op]*check.Set
	schemas *check.Schemas // nil unless an op checks output_schema
	used    []bool         // per profile-wide check: it selected an op
	errs    problems       // what attachChecks found; checkScopes reports them
}

// attachChecks gives op (built from spec o, named name) its checks: the
// op's own, then the profile-wide ones whose scope selects it (problems
// go to checkScopes, with the profile's other check errors).
func (pl *Plan) attachChecks(op *driver.Op, o *profile.OpSpec, name string) {
	if err := pl.attach(op, o, name, &pl.Profile); err != nil {
		pl.checks.errs = append(pl.checks.errs, err)
	}
}

func (pl *Plan) attach(op *driver.Op, o *profile.OpSpec, name string, p *profile.Profile) error {
	var cs []*check.Check
	add := func(e string) error {
		c, err := check.Parse(e)
		if err != nil {
			return err
		}
		if c.IsOutputSchema() && pl.checks.schemas == nil {
			pl.checks.schemas = check.NewSchemas()
		}
		cs = append(cs, c)
		return nil
	}
	for _, e := range o.Checks {
		if err := add(e); err != nil {
			return fmt.Errorf("op %s: %w", name, err)
		}
	}
	if pl.checks.used == nil {
		pl.checks.used = make([]bool, len(p.Checks))
	}
	for i, s := range p.Checks {
		scope, e, _ := profile.SplitCheckScope(s)
		if !profile.CheckScopeMatches(scope, name) {
			continue
		}
		pl.checks.used[i] = true
		if c, err := check.Parse(e); err == nil && c.IsOutputSchema() && o.Method != "tools/call" {
			if scope == "" {
				continue // a check of every op: output_schema applies to the tools/calls
			}
			return profile.AsSetting(fmt.Errorf("%s: output_schema checks a tools/call's structuredContent; op %s is a %s", p.CheckField(i), name, o.Method))
		}
		if err := add(e); err != nil {
			return profile.AsSetting(fmt.Errorf("%s: %w", p.CheckField(i), err))
		}
	}
	if len(cs) == 0 {
		return nil
	}
	tool := ""
	if o.Method == "tools/call" {
		tool = o.Tool
	}
	set, err := check.NewSet(cs, tool, pl.checks.schemas)
	if err != nil {
		return fmt.Errorf("op %s: %w", name, err)
	}
	if prev := op.Inspect; prev != nil { // another inspection (correlation) goes first
		op.Inspect = func(result []byte, res *driver.Result) { prev(result, res); set.Inspect(result, res) }
	} else {
		op.Inspect = set.Inspect
	}
	if pl.checks.sets == nil {
		pl.checks.sets = map[*driver.Op]*check.Set{}
	}
	pl.checks.sets[op] = set
	return nil
}

// checkScopes returns the problems attachChecks found and an error for
// each profile-wide check whose scope selected no op of the plan.
func (pl *Plan) checkScopes(p *profile.Profile) []error {
	errs := slices.Clone(pl.checks.errs)
	for i, s := range p.Checks {
		if i < len(pl.checks.used) && pl.checks.used[i] {
			continue
		}
		scope, _, _ := profile.SplitCheckScope(s)
		if scope == "" {
			continue
		}
		errs.add("%s: %q selects no op: %q is not an op name, method or scenario of the test (ops: %s)", p.CheckField(i), s, scope, strings.Join(pl.Names, ", "))
	}
	return append(errs, pl.checkThresholdChecks(p)...)
}

// checkThresholdChecks returns an error for each checks threshold that
// can read nothing: the test has no checks, or checks{CHECK} names none
// of its checks (the error lists them).
func (pl *Plan) checkThresholdChecks(p *profile.Profile) []error {
	var errs problems
	var all []string
	for _, exprs := range pl.CheckExprs() {
		for _, e := range exprs {
			if !slices.Contains(all, e) {
				all = append(all, e)
			}
		}
	}
	for i, th := range pl.Thresholds {
		if th.Metric != "checks" && th.Metric != "checks_failed" {
			continue
		}
		switch {
		case len(all) == 0:
			errs.add("%s: threshold %q: the test has no checks (give ops checks:, or {checks})", p.ThresholdField(i), th.Expr)
		case th.CheckSel != "" && !slices.Contains(all, th.CheckSel):
			errs.add("%s: threshold %q: no check %q in this test (checks: %s)", p.ThresholdField(i), th.Expr, th.CheckSel, strings.Join(all, ", "))
		}
	}
	return errs
}

// CheckExprs returns, per op of Ops, its checks' expressions in order
// (nil for an op without checks): the recorder's check names.
func (pl *Plan) CheckExprs() [][]string {
	out := make([][]string, len(pl.Ops))
	for i, op := range pl.Ops {
		if s := pl.checks.sets[op]; s != nil {
			out[i] = s.Exprs()
		}
	}
	return out
}

// HasChecks reports whether any op of the plan has checks.
func (pl *Plan) HasChecks() bool { return len(pl.checks.sets) > 0 }

// outputSchemas is the store of the sessions' output schemas, nil when
// no op checks output_schema.
func (pl *Plan) outputSchemas() *check.Schemas { return pl.checks.schemas }
