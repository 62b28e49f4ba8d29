package sweep

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
)

// WriteText prints the step table, the steps that dropped arrivals, and
// the sweep's report model (report.BuildSweep, which its report.html
// renders too): the verdict's lines — the maximum sustainable rate with
// the SLO's bracket, the knee with its interval and how it was found, the
// cool-downs, how sure the verdict is, memory per session — the features
// the steps could not apply, and every warning with its id, cause and
// remedy (the sweep's and each step's).
func WriteText(w io.Writer, sw *results.Sweep) error {
	p := &textfmt.Printer{W: w}
	unit := results.SweepLoadUnit(sw.By)
	p.F("mcpbench sweep  %s  ·  profile %s  ·  protocol %s\n", sw.Target, sw.Profile, sw.Protocol)
	rep := ""
	if sw.Repeat > 1 {
		rep = fmt.Sprintf(", each run %d times", sw.Repeat)
	}
	p.F("%s from %g to %g %s in %d steps of %.0f s%s; SLO: p99 ≤ %s ms, errors ≤ %.2f%%%s\n\n", sw.By, sw.From, sw.To, unit, sw.Steps, sw.StepS, rep,
		textfmt.MS(sw.SLO.P99MS), 100*sw.SLO.ErrorRate, map[bool]string{true: ", replay clean"}[sw.SLO.ReplayClean])
	p.F("%4s %10s %10s %9s %8s %9s %9s %9s %17s %9s %8s %7s %7s %8s %8s  %s\n", "step", sw.By, "achieved", "dropped", "errors%", "p50 ms", "p90 ms", "p99 ms", "p99 95% CI", "max ms", "faulty", "gen cpu", "tgt cpu", "tgt MB", "gen MB", "verdict")
	for _, s := range sw.Results {
		writeStep(p, s)
	}
	writeMarks(p, sw)
	m := report.BuildSweep(sw)
	if t := m.Dropped; t != nil {
		p.F("\n%s\n", t.Title)
		for _, row := range append([][]string{t.Header}, t.Rows...) {
			p.F("%4s %10s %10s %9s %14s %19s  %s\n", row[0], row[1], row[2], row[3], row[4], row[5], row[6])
		}
	}
	p.F("\n")
	for _, l := range m.Lines() {
		if strings.HasPrefix(l, "cause: ") || strings.HasPrefix(l, "remedy: ") {
			l = "  " + l // as the run's text prints a warning
		}
		p.F("%s\n", l)
	}
	return p.Err
}

// writeStep prints one row of the step table.
func writeStep(p *textfmt.Printer, s results.SweepStep) {
	verdict := "PASS"
	if !s.Pass {
		verdict = "FAIL " + strings.Join(s.Reasons, "; ")
	}
	if s.Interrupted {
		verdict = "INTERRUPTED"
	}
	if s.Marginal && !s.Interrupted {
		verdict += " (marginal: the SLO is inside the interval)"
	}
	tc, tm := "-", "-"
	if s.TgtRSSMB > 0 {
		tc, tm = fmt.Sprintf("%.2f", s.TgtCores), fmt.Sprintf("%.0f", s.TgtRSSMB)
	}
	n := fmt.Sprint(s.N)
	switch {
	case s.Refine:
		n += "r"
	case s.Recheck:
		n += "c"
	}
	// A cool-down runs before every step but the first; one that settled
	// on its first probe (the server had recovered) is only counted in
	// the Cool-downs line, so the table shows those that waited.
	if c := s.CoolDown; c != nil && (c.Probes > 1 || !c.Settled) {
		settled := fmt.Sprintf("back to its baseline %s ms", textfmt.MS(c.Baseline))
		if !c.Settled {
			settled = fmt.Sprintf("not back to its baseline %s ms when the time was up", textfmt.MS(c.Baseline))
		}
		p.F("     cool-down: %d probe(s), %.1f s; probe p50 %s ms, %s\n", c.Probes, c.Seconds, textfmt.MS(c.P50MS), settled)
	}
	p.F("%4s %10s %10.1f %9d %8.2f %9s %9s %9s %17s %9s %8d %7.2f %7s %8s %8.0f  %s\n", n, load(s.Value), s.Achieved, s.Dropped, 100*s.ErrorRate,
		textfmt.MS(s.Latency.P50), textfmt.MS(s.Latency.P90), textfmt.MS(s.Latency.P99), ciMS(s.P99CI), textfmt.MS(s.Latency.Max), s.Faulty, s.GenCores, tc, tm, s.GenRSSMB, verdict)
	if len(s.Repeats) > 1 {
		var parts []string
		for _, r := range s.Repeats {
			parts = append(parts, fmt.Sprintf("%.1f ops/s p99 %s ms", r.Achieved, textfmt.MS(r.P99)))
		}
		p.F("     runs: %s\n", strings.Join(parts, " · "))
	}
}

// writeMarks explains the step table's marks under it: r (bisect) and
// c (re-check).
func writeMarks(p *textfmt.Printer, sw *results.Sweep) {
	for _, s := range sw.Results {
		if s.Refine {
			p.F("(steps marked r bisect between the highest passing and the lowest failing load)\n")
			break
		}
	}
	for _, s := range sw.Results {
		if s.Recheck {
			p.F("(steps marked c re-check the highest passing load after an overload and a cool-down)\n")
			break
		}
	}
}

// FormatLoad formats a step's load with its unit: "1571 ops/s".
func FormatLoad(v float64, by string) string { return load(v) + " " + results.SweepLoadUnit(by) }

// load formats a step's load: whole numbers, or three significant
// decimals below 100.
func load(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
