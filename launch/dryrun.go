package launch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/sweep"
	"github.com/mcpbench/mcpbench/workload"
)

// --dry-run (run, sweep, soak): the profile with the flags applied,
// compiled as the command would compile it, printed — and nothing else:
// no embedded server, no results directory, no connection, no request.

// dryRunOp is an op of the mix and its weight.
type dryRunOp = report.PlanOp

// DryRun prints the plan of spec.Command (run, sweep or soak: the
// profile with every flag applied, compiled as the command would compile
// it) to spec.Stdout as spec.Format says — and does nothing else: no
// embedded server, no results directory, no connection, no request. An
// invalid profile is an ExitUsage error, as the command's would be.
func DryRun(ls Spec) error {
	p := ls.Profile
	name := ls.Command
	embedded := p.URL == ""
	if embedded {
		if p.Server.Mode == "" && driver.IsModern(p.Protocol) {
			p.Server.Mode = string(refserver.Mode2026)
		}
		p.URL = "http://127.0.0.1:0/mcp" // a placeholder to compile against: the run starts the server on a free port
	}
	target := func(pl *workload.Plan) string {
		if embedded {
			return fmt.Sprintf("the embedded reference server (%s mode; started on a free loopback port when the test runs)", cmp.Or(pl.Profile.Server.Mode, "stateful"))
		}
		return strings.Join(append([]string{pl.Target}, pl.Profile.URLs...), ", ")
	}
	w := ls.Stdout
	if name != "sweep" {
		plan, err := compile(p)
		if err != nil {
			return WithExitCode(ExitUsage, err)
		}
		if ls.Format == "json" {
			return writeJSON(w, struct {
				Command string          `json:"command"`
				Target  string          `json:"target"`
				Headers []string        `json:"headers,omitempty"`
				Ops     []dryRunOp      `json:"ops"`
				Profile profile.Profile `json:"profile"`
			}{name, target(plan), plan.ShownHeader(), planOps(plan), shownProfile(plan)})
		}
		t := planText(plan, target(plan))
		t.Title = fmt.Sprintf("mcpbench %s --dry-run: the plan (nothing sent)", name)
		if name == "soak" {
			t.More = [][2]string{{"checkpoint", fmt.Sprintf("every %v", plan.Profile.Soak.CheckpointEvery())}}
		}
		report.WritePlan(w, t)
		return nil
	}
	if p.Sweep == nil {
		return Usagef("sweep: profile %s has no sweep section: give %s, %s and %s", p.Name, setting.SweepFrom, setting.SweepTo, setting.SweepSteps)
	}
	spec := *p.Sweep
	spec.Defaults()
	if errs := spec.Validate(); len(errs) > 0 {
		return WithExitCode(ExitUsage, &profile.ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs})
	}
	var steps []*workload.Plan
	for i, v := range spec.Values() {
		sp, err := sweep.StepProfile(p, i+1, v)
		if err != nil {
			return WithExitCode(ExitUsage, err)
		}
		plan, err := compile(sp)
		if err != nil {
			return WithExitCode(ExitUsage, err)
		}
		steps = append(steps, plan)
	}
	slo := spec.SLO.SLO()
	if ls.Format == "json" {
		type step struct {
			Step    int             `json:"step"`
			Load    float64         `json:"load"`
			Profile profile.Profile `json:"profile"`
		}
		out := struct {
			Command string            `json:"command"`
			Target  string            `json:"target"`
			Headers []string          `json:"headers,omitempty"`
			Sweep   profile.SweepSpec `json:"sweep"`
			Ops     []dryRunOp        `json:"ops"`
			Steps   []step            `json:"steps"`
		}{Command: "sweep", Target: target(steps[0]), Headers: steps[0].ShownHeader(), Sweep: spec, Ops: planOps(steps[0])}
		for i, v := range spec.Values() {
			out.Steps = append(out.Steps, step{i + 1, v, shownProfile(steps[i])})
		}
		return writeJSON(w, out)
	}
	first := *steps[0]
	first.Profile.Name = p.Name // the sweep's, not its first step's
	t := planText(&first, target(&first))
	t.Title = "mcpbench sweep --dry-run: the plan (nothing sent)"
	t.More = [][2]string{
		{"sweep", fmt.Sprintf("by %s from %s to %s in %d steps of %v (after %v warm-up each); up to %d refining steps",
			spec.By, sweep.FormatLoad(spec.From, spec.By), sweep.FormatLoad(spec.To, spec.By), spec.Steps, spec.Step.D(), spec.Warmup.D(), max(spec.Refine, 0))},
		{"SLO", fmt.Sprintf("p99 ≤ %g ms, errors ≤ %g %%, replay clean: %v", slo.P99MS, 100*slo.ErrorRate, slo.ReplayClean)},
	}
	report.WritePlan(w, t)
	var rows []report.SweepPlanStep
	for i, v := range spec.Values() {
		pl := &steps[i].Profile
		rows = append(rows, report.SweepPlanStep{Load: sweep.FormatLoad(v, spec.By), Model: model(pl), Window: window(pl)})
	}
	return report.WriteSweepPlan(w, rows)
}

// planText is what --dry-run prints of plan (report.WritePlan), its
// target shown as target.
func planText(plan *workload.Plan, target string) *report.PlanText {
	p := &plan.Profile
	src := p.Source
	if src == p.Name || src == "" {
		src = "built-in"
	}
	t := &report.PlanText{Target: target, Profile: fmt.Sprintf("%s (%s)", cmp.Or(p.Name, "unnamed"), src),
		Protocol: cmp.Or(p.Protocol, driver.ProtocolAuto), Headers: plan.ShownHeader(), // credentials redacted
		Model: model(p), Window: window(p), Ops: planOps(plan), Iterations: plan.Iterations, Seed: p.Seed}
	for _, s := range p.Stages {
		t.Stages = append(t.Stages, fmt.Sprintf("%v→%g", s.Duration.D(), s.Target))
	}
	if p.Churn.Rate > 0 {
		t.Sessions = append(t.Sessions, fmt.Sprintf("churn %g/s", p.Churn.Rate))
	}
	if p.GETStream {
		t.Sessions = append(t.Sessions, "a GET stream each")
	}
	if p.CheckDeleted {
		t.Sessions = append(t.Sessions, "deleted sessions probed for 404")
	}
	for _, sc := range plan.Scenarios {
		var st []string
		for _, s := range sc.Steps {
			st = append(st, plan.Names[s.Op])
		}
		t.Scenarios = append(t.Scenarios, fmt.Sprintf("%s (weight %d): %s", sc.Name, sc.Weight, strings.Join(st, " → ")))
	}
	if c := p.Chaos; !c.Empty() {
		t.Chaos, t.ChaosSeed = true, cmp.Or(c.Seed, p.Seed)
		for _, ft := range c.Faults {
			js, _ := json.Marshal(ft)
			t.Faults = append(t.Faults, string(js))
		}
		if c.Storm != nil {
			js, _ := json.Marshal(c.Storm)
			t.Storm = string(js)
		}
	}
	for i, exprs := range plan.CheckExprs() { // checks (workload/checks.go), per op
		if len(exprs) > 0 {
			t.Checks = append(t.Checks, fmt.Sprintf("%s: %s", plan.Names[i], strings.Join(exprs, " · ")))
		}
	}
	if len(plan.Thresholds) > 0 {
		t.Thresholds = p.Thresholds
	}
	for _, a := range plan.Aborts {
		t.Aborts = append(t.Aborts, fmt.Sprintf("when %s fails, judged from %v into the window", a.Threshold.Expr, a.Delay))
	}
	var to []string // the driver's defaults when none is given (see --help)
	for _, x := range []struct {
		name string
		d    profile.Duration
	}{{"request", p.Timeouts.Request}, {"connect", p.Timeouts.Connect}, {"stream idle", p.Timeouts.StreamIdle}} {
		if x.d != 0 {
			to = append(to, fmt.Sprintf("%s %v", x.name, x.d.D()))
		}
	}
	t.Timeouts = strings.Join(to, ", ")
	return t
}

// shownProfile is the plan's profile as it may be shown: header values
// (which may be credentials) left out — ShownHeader has them redacted —
// and the proxy's credentials redacted.
func shownProfile(plan *workload.Plan) profile.Profile {
	p := plan.Profile
	p.Headers = nil
	p.Proxy = secret.RedactURL(p.Proxy)
	return p
}

// model describes the load model: open with its rate and VUs, or closed.
func model(p *profile.Profile) string {
	conc := ""
	if p.Concurrency > 1 {
		conc = fmt.Sprintf(", %d requests in flight per session", p.Concurrency)
	}
	if !p.Open() {
		return fmt.Sprintf("closed, %d VUs%s", p.VUs, conc)
	}
	return fmt.Sprintf("open, %g ops/s, %d VUs up front, at most %d VUs, an op later than %v dropped%s", p.Rate, p.VUs, p.MaxVUs, p.MaxDelay.D(), conc)
}

// window describes the run's times.
func window(p *profile.Profile) string {
	return fmt.Sprintf("%v measured after %v warm-up, %v graceful stop", p.Window(), p.Warmup.D(), p.GracefulStop.D())
}

// planOps are the plan's ops with their weights.
func planOps(plan *workload.Plan) []dryRunOp {
	var out []dryRunOp
	k := 0
	for _, o := range plan.Profile.Ops {
		if o.Weight != nil && *o.Weight == 0 {
			continue
		}
		if k >= len(plan.Names) {
			break
		}
		out = append(out, dryRunOp{Name: plan.Names[k], Weight: cmp.Or(deref(o.Weight), 1)})
		k++
	}
	return out
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
