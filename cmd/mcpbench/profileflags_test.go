package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Each flag of the tables is a flag of the commands that apply it, and
// given alone it sets its field and nothing else (the sections its path
// passes through aside); not given, it leaves the profile's value. The
// precedence itself (the profile file < the flags, vus raising max_vus)
// is profile.Profile.Override's (TestOverride*).
func TestFlagTablesSetTheirFields(t *testing.T) {
	run, sweep, soak := newRunCmd().Flags(), newSweepCmd().Flags(), newSoakCmd().Flags()
	newRun := func() (*runFlags, *pflag.FlagSet) {
		f, cmd := &runFlags{}, &cobra.Command{}
		f.register(cmd)
		return f, cmd.Flags()
	}
	f0, _ := newRun()
	for _, pf := range f0.profileFlags() {
		for name, fl := range map[string]*pflag.FlagSet{"run": run, "sweep": sweep, "soak": soak} {
			if fl.Lookup(pf.flag) == nil {
				t.Errorf("--%s is in the table but not a flag of %s", pf.flag, name)
			}
		}
		f, fl := newRun()
		got := flagged(t, pf.flag, fl, func(p *profile.Profile) error { return applyFlags(p, f, fl) })
		checkChanged(t, pf.flag, pf.field, got)
	}
	sf0 := &sweepFlags{}
	for _, pf := range sf0.profileFlags() {
		if sweep.Lookup(pf.flag) == nil {
			t.Errorf("--%s is in the sweep table but not a flag of sweep", pf.flag)
		}
		sf, fl := &sweepFlags{}, pflag.NewFlagSet("sweep", pflag.ContinueOnError)
		sf.register(fl)
		got := flagged(t, pf.flag, fl, func(p *profile.Profile) error {
			p.Sweep = &profile.SweepSpec{}
			return sf.apply(p, fl.Changed)
		})
		checkChanged(t, pf.flag, pf.field, got)
	}
}

// flagged applies the flags with apply twice, without and then with flag
// given (a value unlike its default), and returns the profile's YAML
// leaves that differ ("path=value").
func flagged(t *testing.T, flag string, fl *pflag.FlagSet, apply func(*profile.Profile) error) []string {
	t.Helper()
	before := &profile.Profile{Name: "p"}
	if err := apply(before); err != nil {
		t.Fatalf("--%s not given: %v", flag, err)
	}
	value := map[string]string{"string": "x", "int": "7", "int64": "7", "float64": "7.5", "duration": "7s", "bool": "true",
		"stringArray": "x", "size": "2KiB"}[fl.Lookup(flag).Value.Type()]
	if value == "" {
		t.Fatalf("--%s: no test value for a %s", flag, fl.Lookup(flag).Value.Type())
	}
	if err := fl.Set(flag, value); err != nil {
		t.Fatalf("--%s %s: %v", flag, value, err)
	}
	after := &profile.Profile{Name: "p"}
	if err := apply(after); err != nil {
		t.Fatalf("--%s %s: %v", flag, value, err)
	}
	b, a := leaves(t, before), leaves(t, after)
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k+"="+v)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+"=(removed)")
		}
	}
	slices.Sort(out)
	return out
}

// checkChanged checks that the leaves changed are field and those of the
// sections it opened.
func checkChanged(t *testing.T, flag, field string, changed []string) {
	t.Helper()
	section, _, _ := strings.Cut(field, ".")
	found := false
	for _, c := range changed {
		k, _, _ := strings.Cut(c, "=")
		switch {
		case k == field:
			found = true
		case strings.Contains(field, ".") && (k == section || strings.HasPrefix(k, section+".")): // a section opened
		default:
			t.Errorf("--%s (%s) changed %s too", flag, field, c)
		}
	}
	if !found {
		t.Errorf("--%s did not set %s (changed: %v)", flag, field, changed)
	}
}

// leaves flattens p's YAML into path → value.
func leaves(t *testing.T, p *profile.Profile) map[string]string {
	t.Helper()
	data, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x)
			}
			return
		}
		out[prefix] = fmt.Sprint(v)
	}
	walk("", m)
	return out
}
