package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// PlanText is what --dry-run prints of a compiled test (run, soak, a
// sweep's first step): each field one labelled line, or none when empty
// (WritePlan). The launch package fills it from the plan; the strings are
// shown as they are (credentials already redacted).
type PlanText struct {
	Title    string // the first line, e.g. "mcpbench run --dry-run: the plan (nothing sent)"
	Target   string
	Profile  string   // name (source), e.g. "smoke (built-in)"
	Protocol string   // as asked, e.g. "auto"
	Headers  []string // "Name: value", values of auth headers redacted
	Model    string
	Stages   []string // "10s→500" each
	Window   string
	Sessions []string // what each session does besides its ops ("churn 2/s", …)
	// Scenarios, when the test has any, are shown instead of Ops:
	// "NAME (weight N): a → b" each.
	Scenarios []string
	Ops       []PlanOp
	// Chaos is on with Faults (JSON each), Storm (JSON, "" none) and the
	// chaos seed; off: "chaos none".
	Chaos      bool
	Faults     []string
	Storm      string
	ChaosSeed  int64
	Checks     []string // "op: expr · expr" per op with checks
	Thresholds []string // none: "thresholds none"
	Aborts     []string // "when EXPR fails, judged from D into the window" each
	Iterations int      // > 0: shared by the VUs
	Timeouts   string   // "request 1s, connect 2s" ("" none given)
	Seed       int64
	// More are lines after the plan's own, label and text: a soak's
	// checkpoint, a sweep's steps and SLO.
	More [][2]string
}

// PlanOp is an op of the mix and its weight.
type PlanOp struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
}

// WritePlan prints p, one labelled line per part, the labels in a
// column of 12.
func WritePlan(w io.Writer, p *PlanText) {
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-12s %s\n", label, fmt.Sprintf(format, args...))
	}
	first := func(label string, i int) string { return map[bool]string{true: label}[i == 0] }
	if p.Title != "" {
		fmt.Fprintln(w, p.Title)
	}
	line("target", "%s", p.Target)
	line("profile", "%s", p.Profile)
	line("protocol", "%s", p.Protocol)
	for i, h := range p.Headers {
		line(first("headers", i), "%s", h)
	}
	line("model", "%s", p.Model)
	if len(p.Stages) > 0 {
		line("stages", "%s", joinComma(p.Stages))
	}
	line("window", "%s", p.Window)
	if len(p.Sessions) > 0 {
		line("sessions", "%s", joinComma(p.Sessions))
	}
	if len(p.Scenarios) > 0 {
		for i, sc := range p.Scenarios {
			line(first("scenarios", i), "%s", sc)
		}
	} else {
		for i, op := range p.Ops {
			line(first("ops", i), "%-40s weight %d", op.Name, op.Weight)
		}
	}
	if p.Chaos {
		for i, ft := range p.Faults {
			line(first("chaos", i), "%s", ft)
		}
		if p.Storm != "" {
			line("storm", "%s", p.Storm)
		}
		line("chaos seed", "%d", p.ChaosSeed)
	} else {
		line("chaos", "none")
	}
	for i, c := range p.Checks {
		line(first("checks", i), "%s", c)
	}
	if len(p.Thresholds) == 0 {
		line("thresholds", "none")
	}
	for i, t := range p.Thresholds {
		line(first("thresholds", i), "%s", t)
	}
	for i, a := range p.Aborts {
		line(first("abort", i), "%s", a)
	}
	if p.Iterations > 0 {
		line("iterations", "%d shared by the VUs (the duration caps them)", p.Iterations)
	}
	if p.Timeouts != "" {
		line("timeouts", "%s", p.Timeouts)
	}
	line("seed", "%d", p.Seed)
	for _, m := range p.More {
		line(m[0], "%s", m[1])
	}
}

// SweepPlanStep is a step of a sweep's --dry-run table.
type SweepPlanStep struct {
	Load, Model, Window string
}

// WriteSweepPlan prints a sweep's steps as --dry-run shows them: a
// table of step, load, model and window.
func WriteSweepPlan(w io.Writer, steps []SweepPlanStep) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "step\tload\tmodel\twindow")
	for i, s := range steps {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, s.Load, s.Model, s.Window)
	}
	return tw.Flush()
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
