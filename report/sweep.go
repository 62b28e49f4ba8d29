package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// Reports of a sweep and a soak besides their own text (sweep.WriteText,
// soak.WriteText): a sweep's report model (BuildSweep, which the sweep's
// text and HTML render), markdown, and the comparisons of two.

// WriteSweepCompare prints two sweeps side by side: the verdict's figures
// with their 95 % intervals, then p99 at each load both ran, each with
// whether the difference is beyond the noise (the intervals do not
// overlap), and the limits checked.
func WriteSweepCompare(w io.Writer, labelA, labelB string, c verdict.SweepComparison, limits []verdict.LimitResult) error {
	p := &textfmt.Printer{W: w}
	if len(c.NotLikeForLike) > 0 {
		p.F("%s\n", NotLikeForLike(c.NotLikeForLike))
	}
	if h := SweepCompareHeadline(c); h != "" {
		p.F("%s\n", h)
	}
	p.F("A: %s\nB: %s\n\n", labelA, labelB)
	width := len("figure")
	for _, rows := range [][]verdict.SweepRow{c.Verdict, c.Steps} {
		for _, r := range rows {
			width = max(width, len(r.Name)+len(r.Unit)+1)
		}
	}
	p.F("%-*s %24s %24s %12s %9s  %s\n", width, "figure", "A (95% CI)", "B (95% CI)", "B − A", "change", "noise")
	row := func(r verdict.SweepRow) {
		av, bv, ab, rel := withCI(r.A, r.ACI, r.Unit), withCI(r.B, r.BCI, r.Unit), textfmt.SignedValue(r.Abs, r.Unit), "—"
		if r.Bracket {
			av, bv = bracketText(r.A, r.ACI, r.Unit), bracketText(r.B, r.BCI, r.Unit)
		}
		if !r.InA {
			av, ab = "—", "—"
		}
		if !r.InB {
			bv, ab = "—", "—"
		}
		if r.InA && r.InB && r.A != 0 {
			rel = fmt.Sprintf("%+.1f%%", 100*r.Rel)
		}
		n := "—"
		switch {
		case r.Beyond != nil:
			why := cmp.Or(r.Why, map[bool]string{true: "intervals apart", false: "intervals overlap"}[*r.Beyond])
			n = map[bool]string{true: "beyond", false: "within"}[*r.Beyond] + " (" + why + ")"
		case r.Why != "":
			n = "not judged (" + r.Why + ")"
		}
		p.F("%-*s %24s %24s %12s %9s  %s\n", width, r.Name+" "+r.Unit, av, bv, ab, rel, n)
	}
	for _, r := range c.Verdict {
		row(r)
	}
	if len(c.Steps) > 0 {
		p.F("\n")
		for _, r := range c.Steps {
			row(r)
		}
	}
	writeLimits(p, limits)
	return p.Err
}

// SweepCompareHeadline sums up two sweeps in one line: the maximum
// sustainable rate, the SLO's bracket and the knee, each with its
// direction, size and noise verdict, e.g.
//
//	max_sustainable_rate +0.4% (2643 → 2653 ops/s, not judged: no interval) · slo_crossing 2643–2777 → 2653–2780 ops/s (within the noise: brackets overlap) · knee …
func SweepCompareHeadline(c verdict.SweepComparison) string {
	var parts []string
	for _, r := range c.Verdict {
		if !r.InA || !r.InB || (r.Name != "max_sustainable_rate" && r.Name != "slo_crossing" && r.Name != "knee") {
			continue
		}
		noise := "not judged: " + cmp.Or(r.Why, "no interval")
		if r.Beyond != nil {
			noise = map[bool]string{true: "beyond the noise", false: "within the noise"}[*r.Beyond] + ": " +
				cmp.Or(r.Why, map[bool]string{true: "intervals apart", false: "intervals overlap"}[*r.Beyond])
		}
		if r.Bracket {
			parts = append(parts, fmt.Sprintf("%s %s → %s %s (%s)", r.Name, bracketText(r.A, r.ACI, r.Unit), bracketText(r.B, r.BCI, r.Unit), r.Unit, noise))
			continue
		}
		size := strings.TrimSpace(textfmt.SignedValue(r.Abs, r.Unit)) + " " + r.Unit
		if r.A != 0 {
			size = strings.Replace(fmt.Sprintf("%+.1f%%", 100*r.Rel), "-", "−", 1)
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s → %s %s, %s)", r.Name, size, textfmt.Value(r.A, r.Unit), textfmt.Value(r.B, r.Unit), r.Unit, noise))
	}
	return strings.Join(parts, " · ")
}

// bracketText formats an SLO bracket: "2643–2777" (the value alone when
// there is none).
func bracketText(v float64, c *results.CI, unit string) string {
	if c == nil {
		return textfmt.Value(v, unit) + "–?"
	}
	return textfmt.Value(c.Lo, unit) + "–" + textfmt.Value(c.Hi, unit)
}

// withCI formats a figure with its interval: "1571 (1490–1650)".
func withCI(v float64, c *results.CI, unit string) string {
	s := textfmt.Value(v, unit)
	if c != nil {
		s += " (" + textfmt.Value(c.Lo, unit) + "–" + textfmt.Value(c.Hi, unit) + ")"
	}
	return s
}

// WriteSweepMarkdown prints a sweep's verdict, its report model's
// not-applicable lines and warnings (each with its cause and remedy, as
// the text and report.html print them) and its step table as markdown.
func WriteSweepMarkdown(w io.Writer, sw *results.Sweep) error {
	p := &textfmt.Printer{W: w}
	unit := results.SweepLoadUnit(sw.By)
	v := sw.Verdict
	p.F("## mcpbench sweep: %s\n\n", sw.Profile)
	p.F("Target `%s` · protocol %s · %s from %s to %s %s in %d steps of %.0f s · SLO p99 ≤ %s ms, errors ≤ %.2f%%\n\n",
		sw.Target, sw.Protocol, sw.By, textfmt.Num(sw.From), textfmt.Num(sw.To), unit, sw.Steps, sw.StepS, textfmt.MS(sw.SLO.P99MS), 100*sw.SLO.ErrorRate)
	p.F("| | |\n|---|---|\n")
	p.F("| Maximum sustainable rate | %s ops/s (step %d) |\n", textfmt.Value(v.MaxSustainable, "ops/s"), v.MaxStep)
	if b := v.Crossing; b != nil {
		p.F("| SLO crossed between | %s %s (step %d, passed) and %s %s (step %d, failed) |\n", textfmt.Num(b.Lo), unit, b.LoStep, textfmt.Num(b.Hi), unit, b.HiStep)
	}
	for _, n := range v.NonMonotone {
		p.F("| Non-monotone | %s |\n", n)
	}
	if v.Hysteresis != "" {
		p.F("| Hysteresis | %s |\n", v.Hysteresis)
	}
	if v.CoolDowns > 0 {
		p.F("| Cool-downs | %d, %.1f s in all, %d not settled |\n", v.CoolDowns, v.CoolDownS, v.Unsettled)
	}
	if v.KneeStep > 0 {
		p.F("| Knee | %s %s, %s ops/s achieved |\n", withCI(v.Knee, v.KneeCI, ""), unit, textfmt.Value(v.KneeRate, "ops/s"))
	}
	if v.Confidence != "" {
		p.F("| Confidence | %s |\n", v.Confidence)
	}
	m := BuildSweep(sw) // what the text and report.html say too: n/a lines, every warning with its cause and remedy
	rest := m.Lines()[len(m.Verdict):]
	if len(rest) > 0 {
		p.F("\n")
	}
	for _, l := range rest {
		if strings.HasPrefix(l, "cause: ") || strings.HasPrefix(l, "remedy: ") {
			p.F("  - %s\n", l)
		} else {
			p.F("- %s\n", l)
		}
	}
	p.F("\n| step | %s | achieved ops/s | dropped | errors %% | p50 ms | p99 ms | p99 95%% CI | max ms | verdict |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n", sw.By)
	for _, s := range sw.Results {
		verdict := "PASS"
		if !s.Pass {
			verdict = "FAIL " + strings.Join(s.Reasons, "; ")
		}
		if s.Interrupted {
			verdict = "INTERRUPTED"
		}
		ci := "–"
		if c := s.P99CI; c != nil {
			ci = textfmt.MS(c.Lo) + "–" + textfmt.MS(c.Hi)
		}
		p.F("| %s | %s | %.1f | %d | %.2f | %s | %s | %s | %s | %s |\n", stepLabel(s), textfmt.Num(s.Value), s.Achieved, s.Dropped, 100*s.ErrorRate,
			textfmt.MS(s.Latency.P50), textfmt.MS(s.Latency.P99), ci, textfmt.MS(s.Latency.Max), verdict)
	}
	return p.Err
}

// stepLabel is a step's number in a table: "4", "5r" (bisect), "6c"
// (re-check after an overload).
func stepLabel(s results.SweepStep) string {
	n := fmt.Sprint(s.N)
	switch {
	case s.Refine:
		n += "r"
	case s.Recheck:
		n += "c"
	}
	return n
}

// WriteSoakMarkdown prints a soak's verdicts as a markdown table.
func WriteSoakMarkdown(w io.Writer, sk *results.Soak) error {
	p := &textfmt.Printer{W: w}
	word := sk.Verdict // the run's one verdict, when recorded
	if word == "" {
		word = map[bool]string{true: "PASS", false: "FAIL"}[sk.Pass]
	}
	p.F("\n## Soak verdicts (%.0f s measured): %s\n\n| verdict | result | detail |\n|---|---|---|\n", sk.DurationS, word)
	for _, v := range sk.Verdicts {
		mark := "PASS"
		switch {
		case !v.Checked:
			mark = "n/a"
		case !v.Pass:
			mark = "FAIL"
		}
		p.F("| %s | %s | %s |\n", v.Name, mark, v.Detail)
	}
	return p.Err
}

// WriteSoakCompare prints two soaks' verdicts side by side: the value
// each judged (a slope or a count) and whether each passed.
func WriteSoakCompare(w io.Writer, a, b *results.Soak) error {
	p := &textfmt.Printer{W: w}
	p.F("\nSoak verdicts\n%-18s %24s %24s\n", "verdict", "A", "B")
	find := func(sk *results.Soak, name string) (results.SoakVerdict, bool) {
		for _, v := range sk.Verdicts {
			if v.Name == name {
				return v, true
			}
		}
		return results.SoakVerdict{}, false
	}
	cell := func(v results.SoakVerdict, ok bool) string {
		switch {
		case !ok:
			return "—"
		case !v.Checked:
			return "n/a"
		}
		return fmt.Sprintf("%s %s %s", map[bool]string{true: "PASS", false: "FAIL"}[v.Pass], textfmt.Num(v.Value), v.Unit)
	}
	for _, v := range a.Verdicts {
		x, okA := find(a, v.Name)
		y, okB := find(b, v.Name)
		p.F("%-18s %24s %24s\n", v.Name, cell(x, okA), cell(y, okB))
	}
	return p.Err
}

// SweepModel is what every report of a sweep says besides its step
// table and charts, built once from sweep.json (BuildSweep): the
// verdict's lines, the features the steps could not apply, every warning
// with its id, cause and remedy — the sweep's own (W-SWEEP-NONMONOTONE,
// W-SWEEP-HYSTERESIS, W-SWEEP-COOLDOWN) and each step's (its drops,
// generator, start lag) — and the steps that dropped arrivals. The text
// (sweep.WriteText) and the HTML report (plots.SweepHTMLReport) render
// the same SweepModel, so the terminal and report.html say the same. Its
// fields are plain text (the HTML report escapes them).
type SweepModel struct {
	// Verdict are the verdict's lines, as the text prints them: the
	// highest load and the maximum sustainable rate with the SLO's
	// bracket, the knee, the cool-downs, "Confidence: …", memory per
	// session, "Stopped early: …".
	Verdict []string
	// Interrupted: the sweep was cut short (its "Stopped early" line says
	// where).
	Interrupted bool
	// NotApplicable are the steps' not-applicable lines, each feature
	// once: "not applicable: FEATURE, because REASON".
	NotApplicable []string
	// StepNotes are steps' warnings without an id (a sweep.json written
	// before steps kept their warnings): "step 2 (700 ops/s) warning: …".
	StepNotes []string
	// Warnings are the sweep's warnings, then each step's in step order,
	// its text prefixed with the step: "step 5 (2200 ops/s): dropped …".
	Warnings []results.Warning
	// Dropped lists the steps that dropped arrivals (nil when none did):
	// step, load, arrivals, dropped, their share, p99 of the completed ops
	// and the step's verdict.
	Dropped *Table
}

// Causes of a sweep's warnings (their remedies are metrics'
// RemedySweep*, without the link WarningLines adds).
const (
	causeSweepNonMonotone = "a step achieved more than 2 % less throughput than a step at a lower load: noisy steps, a server that collapses past its knee, or a step that measured a server still recovering from the one before; the confidence is low"
	causeSweepHysteresis  = "the highest passing load passed before the overload and failed when it was run again after it and a cool-down: the server does not get over an overload; the confidence is low"
	causeSweepCoolDown    = "between two steps, probes at a low load ran for the cool-down's bound and the server's p50 stayed above max(1.5 × its baseline, baseline + 1 ms): the step after it measured a server still recovering; the confidence is low"
)

// BuildSweep makes the report model of sw. It reads sw only.
func BuildSweep(sw *results.Sweep) *SweepModel {
	m := &SweepModel{Verdict: sweepVerdictLines(sw), Interrupted: sw.Verdict.Interrupted}
	v := sw.Verdict
	remedy := func(id, r string) string {
		return strings.TrimSuffix(r, " ("+TroubleshootingDoc+"#"+strings.ToLower(id)+")")
	}
	if n := len(v.NonMonotone); n > 0 {
		m.Warnings = append(m.Warnings, results.Warning{ID: results.WarnSweepNonMonotone,
			Text:  fmt.Sprintf("%d step(s) achieved less than a step at a lower load: %s", n, strings.Join(v.NonMonotone, "; ")),
			Cause: causeSweepNonMonotone, Remedy: remedy(results.WarnSweepNonMonotone, results.RemedySweepNonMonotone)})
	}
	if v.Hysteresis != "" {
		m.Warnings = append(m.Warnings, results.Warning{ID: results.WarnSweepHysteresis, Text: v.Hysteresis,
			Cause: causeSweepHysteresis, Remedy: remedy(results.WarnSweepHysteresis, results.RemedySweepHysteresis)})
	}
	if v.Unsettled > 0 {
		base := ""
		if sw.ProbeBaselineMS > 0 {
			base = " of " + textfmt.MS(sw.ProbeBaselineMS) + " ms"
		}
		m.Warnings = append(m.Warnings, results.Warning{ID: results.WarnSweepCoolDown,
			Text:  fmt.Sprintf("%d of %d cool-down(s) ran out of time before the server's p50 was back to its baseline%s", v.Unsettled, v.CoolDowns, base),
			Cause: causeSweepCoolDown, Remedy: remedy(results.WarnSweepCoolDown, results.RemedySweepCoolDown)})
	}
	for _, s := range sw.Results {
		at := fmt.Sprintf("step %s (%s %s)", stepLabel(s), loadText(s.Value), results.SweepLoadUnit(sw.By))
		for _, w := range s.Warnings {
			w.Text = at + ": " + w.Text
			m.Warnings = append(m.Warnings, w)
		}
		if len(s.Warnings) == 0 && s.Warning != "" {
			m.StepNotes = append(m.StepNotes, at+" warning: "+s.Warning)
		}
		for _, n := range s.NotApplicable {
			if l := n.String(); !slices.Contains(m.NotApplicable, l) {
				m.NotApplicable = append(m.NotApplicable, l)
			}
		}
		if s.Dropped > 0 {
			if m.Dropped == nil {
				m.Dropped = &Table{
					Title:  "Steps that dropped arrivals (ops the load could not start: no free VU in time; a step's percentiles cover its completed ops only, so it was judged on less than it was offered; each step's own report, mcpbench report DIR/step-NN, has its response time with the dropped ops' lower bounds)",
					Header: []string{"step", sw.By, "arrivals", "dropped", "% of arrivals", "p99 ms (completed)", "verdict"},
				}
			}
			arr := s.Count + s.Dropped
			m.Dropped.Rows = append(m.Dropped.Rows, []string{stepLabel(s), loadText(s.Value), fmt.Sprint(arr), fmt.Sprint(s.Dropped),
				fmt.Sprintf("%.2f%%", 100*float64(s.Dropped)/float64(arr)), textfmt.MS(s.Latency.P99), stepVerdictWord(s)})
		}
	}
	return m
}

// Lines are the model's lines as the text prints them after its tables:
// the verdict's, the not-applicable lines, the steps' warnings without
// an id, then each warning's head, cause and remedy (WarningLines). The
// HTML report shows the same lines; tests compare the two.
func (m *SweepModel) Lines() []string {
	out := slices.Clone(m.Verdict)
	out = append(out, m.NotApplicable...)
	out = append(out, m.StepNotes...)
	for _, w := range m.Warnings {
		h, c, r := WarningLines(w)
		out = append(out, h, c, r)
	}
	return out
}

// sweepVerdictLines are the sweep verdict's lines.
func sweepVerdictLines(sw *results.Sweep) []string {
	var out []string
	line := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	v, unit := sw.Verdict, results.SweepLoadUnit(sw.By)
	if v.MaxSustainable > 0 {
		if sw.By != results.SweepByRate {
			line("Highest load under the SLO: %s %s", loadText(v.MaxLoad), unit)
		}
		l := fmt.Sprintf("Maximum sustainable rate under the SLO: %.1f ops/s (step %d)", v.MaxSustainable, v.MaxStep)
		if b := v.Crossing; b != nil {
			l += fmt.Sprintf("; the SLO is crossed between %s %s (step %d, passed) and %s %s (step %d, failed)", loadText(b.Lo), unit, b.LoStep, loadText(b.Hi), unit, b.HiStep)
		}
		out = append(out, l)
	} else {
		line("Maximum sustainable rate under the SLO: none of the steps met it")
	}
	switch {
	case v.KneeStep > 0:
		l := fmt.Sprintf("Knee: %s %s", loadText(v.Knee), unit)
		if c := v.KneeCI; c != nil {
			l += fmt.Sprintf(" (95%% CI %s–%s)", loadText(c.Lo), loadText(c.Hi))
		}
		if sw.By != results.SweepByRate || v.KneeRate != v.Knee {
			l += fmt.Sprintf(", %.1f ops/s achieved", v.KneeRate)
		}
		l += fmt.Sprintf(": p99 reaches %s ms there, %s", textfmt.MS(v.KneeThreshold), v.KneeRule())
		if v.KneeCapped {
			l += "; the curve's own knee lies above the highest load under the SLO, so the knee is put there"
		}
		out = append(out, l)
	case v.KneeCapped:
		line("Knee: none under the SLO (no step met it)")
	case v.KneeThreshold > 0:
		line("Knee: none in the range (p99 stayed under %s ms, %s)", textfmt.MS(v.KneeThreshold), v.KneeRule())
	default:
		line("Knee: none in the range")
	}
	if v.CoolDowns > 0 {
		l := fmt.Sprintf("Cool-downs: %d between steps, %.1f s in all", v.CoolDowns, v.CoolDownS)
		if v.Unsettled > 0 {
			l += fmt.Sprintf("; %d not back to the baseline when the time was up (WARNING %s below)", v.Unsettled, results.WarnSweepCoolDown)
		}
		out = append(out, l)
	}
	if v.Confidence != "" {
		line("Confidence: %s", v.Confidence)
	}
	if v.TargetKiBPerSession != 0 || v.GeneratorKiBPerSession != 0 {
		line("Memory per session: target %s, mcpbench %.1f KiB (RSS slope across steps)", v.TargetKiBText(), v.GeneratorKiBPerSession)
	}
	if v.StoppedEarly != "" {
		line("Stopped early: %s", v.StoppedEarly)
	}
	return out
}

// stepVerdictWord is a step's verdict in a word: PASS, FAIL or
// INTERRUPTED.
func stepVerdictWord(s results.SweepStep) string {
	switch {
	case s.Interrupted:
		return "INTERRUPTED"
	case s.Pass:
		return "PASS"
	}
	return "FAIL"
}

// loadText formats a step's load: whole numbers, or three significant
// decimals below 100 (as sweep.FormatLoad).
func loadText(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
