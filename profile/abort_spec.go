package profile

import (
	"fmt"
	"slices"
	"time"

	"github.com/mcpbench/mcpbench/verdict"
	"go.yaml.in/yaml/v3"
)

// abort_on_fail and --abort-on-fail as the profile gives them, validated
// and compiled into Plan.Aborts (the engine's side: abort.go).

// AbortSpec is a threshold that stops the run once crossed. In YAML it is
// the threshold alone ("p99<200ms") or a mapping {threshold: p99<200ms,
// delay: 10s}.
type AbortSpec struct {
	Threshold string `yaml:"threshold"`
	// Delay: judged only from this far into the measured window on (k6's
	// delayAbortEval; default 0).
	Delay Duration `yaml:"delay"`
}

// UnmarshalYAML reads a scalar (the threshold) or a mapping.
func (a *AbortSpec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		a.Threshold = n.Value
		return nil
	}
	type plain AbortSpec
	var p plain
	dec := n.Decode
	if err := dec(&p); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "threshold" && k != "delay" {
			return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: abort_on_fail: unknown field %q (want threshold, delay)", n.Content[i].Line, k)}}
		}
	}
	*a = AbortSpec(p)
	return nil
}

// validateAborts checks abort_on_fail: each a threshold, delays ≥ 0.
func (p *Profile) validateAborts() []error {
	var errs problems
	for i, a := range p.AbortOnFail {
		if _, err := verdict.ParseThreshold(a.Threshold); err != nil {
			errs.add("abort_on_fail[%d].threshold: %v", i, err)
		}
		if a.Delay < 0 {
			errs.add("abort_on_fail[%d].delay: %v, want ≥ 0", i, a.Delay.D())
		}
	}
	return errs
}

// AbortAll makes every threshold (the profile's and --threshold's) stop
// the run once crossed, judged from delay into the measured window on
// (--abort-on-fail, --abort-delay); a threshold already in abort_on_fail
// keeps its own delay. on false with delaySet is an error, as is on
// without any threshold.
// abortSettings are the settings AbortAll's errors name (SettingError).
var abortSettings = []string{"abort_on_fail", "abort_on_fail.delay", "thresholds"}

func (p *Profile) AbortAll(on bool, delay time.Duration, delaySet bool) error {
	switch {
	case !on && delaySet:
		return SettingErrorf(abortSettings, "{abort_on_fail.delay} needs {abort_on_fail}")
	case !on:
		return nil
	case len(p.Thresholds) == 0 && len(p.AbortOnFail) == 0:
		return SettingErrorf(abortSettings, "{abort_on_fail}: no threshold to judge: give {thresholds} (e.g. {thresholds} 'p99<200ms')")
	case delay < 0:
		return SettingErrorf(abortSettings, "{abort_on_fail.delay}: %v, want ≥ 0", delay)
	}
	for _, t := range p.Thresholds {
		if !slices.ContainsFunc(p.AbortOnFail, func(a AbortSpec) bool { return a.Threshold == t }) {
			p.AbortOnFail = append(p.AbortOnFail, AbortSpec{Threshold: t, Delay: Duration(delay)})
		}
	}
	return nil
}
