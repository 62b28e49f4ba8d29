package workload

import (
	"cmp"
	"fmt"

	"github.com/mcpbench/mcpbench/profile"
)

// checkThresholds checks the plan's thresholds against its ops (after
// Validate checked each alone): an op or scenario scope must name one of
// them, a scenario metric needs a scenario (verdict.Threshold.CheckTest).
func (pl *Plan) checkThresholds(p *profile.Profile) error {
	var errs problems
	for i, th := range pl.Thresholds {
		if err := th.CheckTest(pl.Names); err != nil {
			errs.add("%s: %v", p.ThresholdField(i), err)
		}
	}
	errs = append(errs, pl.checkScopes(p)...)   // checks.go
	errs = append(errs, pl.compileAborts(p)...) // abort_on_fail (abort.go)
	if len(errs) > 0 {
		return &profile.ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}
	}
	return nil
}

// problems collects a compile's errors (profile.AsSetting: settings the
// command line may give are named as settings).
type problems []error

func (e *problems) add(format string, args ...any) {
	*e = append(*e, profile.AsSetting(fmt.Errorf(format, args...)))
}
