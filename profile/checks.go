package profile

import (
	"fmt"
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

// SplitCheckScope splits "OP => CHECK" (the separator before any quote);
// scope is "" for a check of every op; scoped reports a separator.
func SplitCheckScope(s string) (scope, expr string, scoped bool) {
	q := strings.IndexByte(s, '"')
	i := strings.Index(s, CheckScopeSep)
	if i < 0 || (q >= 0 && q < i) {
		return "", strings.TrimSpace(s), false
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(CheckScopeSep):]), true
}

// CheckField names the profile-wide check i in an error: checks[i] of the
// profile, or the setting checks (a *SettingError: the CLI's --check)
// for one given on the command line.
func (p *Profile) CheckField(i int) string {
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
		f := fmt.Sprintf("ops[%d] (%s)", i, o.OpName())
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
		scope, e, scoped := SplitCheckScope(s)
		if scoped && scope == "" {
			errs.add("%s: %q: nothing before %s, want OP %s CHECK (an op name, a method or a scenario) or the check alone for every op", p.CheckField(i), s, CheckScopeSep, CheckScopeSep)
			continue
		}
		if _, err := check.Parse(e); err != nil {
			errs.add("%s: %v", p.CheckField(i), err)
		}
	}
	return errs
}

// CheckScopeMatches reports whether a profile-wide check's scope selects
// op name: every op for "", else the op, a method's ops, a scenario's
// steps, and a step whose op is the one named.
func CheckScopeMatches(scope, name string) bool {
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
