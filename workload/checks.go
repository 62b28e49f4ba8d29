package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/check"
	"github.com/mcpbench/mcpbench/driver"
)

// Checks (k6's check(), on MCP results; package check): an op's own
// (OpSpec.Checks) and the profile's (Profile.Checks and --check), which
// apply to every op or, written "OP => CHECK", to the ops OP names (an op
// name, a method such as tools/call, or a scenario). Validate parses
// each; Compile gives each op with checks an Inspect (ops without any
// keep a nil Inspect: no cost) and, when an op checks output_schema, a
// schema store the engine fills at each session's start (tools/list).

// CheckScopeSep separates a profile-wide check's op scope from the check.
const CheckScopeSep = "=>"

// splitCheckScope splits "OP => CHECK" (the separator before any quote);
// scope is "" for a check of every op; scoped reports a separator.
func splitCheckScope(s string) (scope, expr string, scoped bool) {
	q := strings.IndexByte(s, '"')
	i := strings.Index(s, CheckScopeSep)
	if i < 0 || (q >= 0 && q < i) {
		return "", strings.TrimSpace(s), false
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(CheckScopeSep):]), true
}

// checkField names the profile-wide check i in an error: checks[i] of the
// profile, or the setting checks (a *SettingError: the CLI's --check)
// for one given on the command line.
func (p *Profile) checkField(i int) string {
	if i >= len(p.Checks)-p.CheckFlags {
		return "{checks}"
	}
	return fmt.Sprintf("checks[%d]", i)
}

// validateChecks parses every check, each error naming its op and check.
// Whether a scope names an op is Compile's (checkScopes).
func (p *Profile) validateChecks() []error {
	var errs problems
	for i, o := range p.Ops {
		f := fmt.Sprintf("ops[%d] (%s)", i, o.opName())
		if len(o.Checks) > driver.MaxChecks {
			errs.add("%s.checks: %d checks, at most %d an op", f, len(o.Checks), driver.MaxChecks)
		}
		for j, e := range o.Checks {
			c, err := check.Parse(e)
			if err != nil {
				errs.add("%s.checks[%d]: %v", f, j, err)
			} else if c.IsOutputSchema() && o.Method != "tools/call" {
				errs.add("%s.checks[%d]: output_schema checks a tools/call's structuredContent; %s has no output schema", f, j, o.Method)
			}
		}
	}
	for i, s := range p.Checks {
		scope, e, scoped := splitCheckScope(s)
		if scoped && scope == "" {
			errs.add("%s: %q: nothing before %s, want OP %s CHECK (an op name, a method or a scenario) or the check alone for every op", p.checkField(i), s, CheckScopeSep, CheckScopeSep)
			continue
		}
		if _, err := check.Parse(e); err != nil {
			errs.add("%s: %v", p.checkField(i), err)
		}
	}
	return errs
}

// checkScopeMatches reports whether a profile-wide check's scope selects
// op name: every op for "", else the op, a method's ops, a scenario's
// steps, and a step whose op is the one named.
func checkScopeMatches(scope, name string) bool {
	if scope == "" {
		return true
	}
	base := name
	if i := strings.IndexByte(name, '#'); i >= 0 {
		if j := strings.IndexByte(name[i:], ':'); j >= 0 {
			base = name[i+j+1:] // "<scenario>#<n>:<op>"
		}
	}
	for _, n := range []string{name, base} {
		if n == scope || strings.HasPrefix(n, scope+":") || strings.HasPrefix(n, scope+"#") {
			return true
		}
	}
	return false
}

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
func (pl *Plan) attachChecks(op *driver.Op, o *OpSpec, name string) {
	if err := pl.attach(op, o, name, &pl.Profile); err != nil {
		pl.checks.errs = append(pl.checks.errs, err)
	}
}

func (pl *Plan) attach(op *driver.Op, o *OpSpec, name string, p *Profile) error {
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
		scope, e, _ := splitCheckScope(s)
		if !checkScopeMatches(scope, name) {
			continue
		}
		pl.checks.used[i] = true
		if c, err := check.Parse(e); err == nil && c.IsOutputSchema() && o.Method != "tools/call" {
			if scope == "" {
				continue // a check of every op: output_schema applies to the tools/calls
			}
			return asSetting(fmt.Errorf("%s: output_schema checks a tools/call's structuredContent; op %s is a %s", p.checkField(i), name, o.Method))
		}
		if err := add(e); err != nil {
			return asSetting(fmt.Errorf("%s: %w", p.checkField(i), err))
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
func (pl *Plan) checkScopes(p *Profile) []error {
	errs := slices.Clone(pl.checks.errs)
	for i, s := range p.Checks {
		if i < len(pl.checks.used) && pl.checks.used[i] {
			continue
		}
		scope, _, _ := splitCheckScope(s)
		if scope == "" {
			continue
		}
		errs.add("%s: %q selects no op: %q is not an op name, method or scenario of the test (ops: %s)", p.checkField(i), s, scope, strings.Join(pl.Names, ", "))
	}
	return append(errs, pl.checkThresholdChecks(p)...)
}

// checkThresholdChecks returns an error for each checks threshold that
// can read nothing: the test has no checks, or checks{CHECK} names none
// of its checks (the error lists them).
func (pl *Plan) checkThresholdChecks(p *Profile) []error {
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
			errs.add("%s: threshold %q: the test has no checks (give ops checks:, or {checks})", p.thresholdField(i), th.Expr)
		case th.CheckSel != "" && !slices.Contains(all, th.CheckSel):
			errs.add("%s: threshold %q: no check %q in this test (checks: %s)", p.thresholdField(i), th.Expr, th.CheckSel, strings.Join(all, ", "))
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
