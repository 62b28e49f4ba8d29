package workload

import (
	"slices"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/verdict"
)

// compileAborts builds the plan's abort rules (Validate parsed each) and
// adds each threshold not among the thresholds to them, so that it is
// judged at the end too; scopes are checked against the ops.
func (pl *Plan) compileAborts(p *profile.Profile) []error {
	var errs problems
	for i, a := range p.AbortOnFail {
		th, err := verdict.ParseThreshold(a.Threshold)
		if err != nil {
			continue // reported by validateAborts
		}
		if err := th.CheckTest(pl.Names); err != nil {
			errs.add("abort_on_fail[%d].threshold: %v", i, err)
			continue
		}
		pl.Aborts = append(pl.Aborts, verdict.AbortRule{Threshold: th, Delay: a.Delay.D()})
		if !slices.ContainsFunc(pl.Thresholds, func(t verdict.Threshold) bool { return t.Expr == th.Expr }) {
			pl.Thresholds = append(pl.Thresholds, th)
		}
	}
	return errs
}
