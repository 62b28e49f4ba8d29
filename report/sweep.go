package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/verdict"
)

// Reports of a sweep and a soak besides their own text (sweep.WriteText,
// soak.WriteText): markdown, and the comparisons of two.

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
		if r.Beyond != nil {
			n = map[bool]string{true: "beyond (intervals apart)", false: "within (intervals overlap)"}[*r.Beyond]
			if r.Bracket {
				n = map[bool]string{true: "beyond (brackets apart)", false: "within (brackets overlap)"}[*r.Beyond]
			}
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
		noise := "not judged: no interval"
		if r.Beyond != nil {
			noise = map[bool]string{true: "beyond the noise", false: "within the noise"}[*r.Beyond]
			if r.Bracket {
				noise += map[bool]string{true: ": brackets apart", false: ": brackets overlap"}[*r.Beyond]
			} else {
				noise += map[bool]string{true: ": intervals apart", false: ": intervals overlap"}[*r.Beyond]
			}
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
func bracketText(v float64, c *metrics.CI, unit string) string {
	if c == nil {
		return textfmt.Value(v, unit) + "–?"
	}
	return textfmt.Value(c.Lo, unit) + "–" + textfmt.Value(c.Hi, unit)
}

// withCI formats a figure with its interval: "1571 (1490–1650)".
func withCI(v float64, c *metrics.CI, unit string) string {
	s := textfmt.Value(v, unit)
	if c != nil {
		s += " (" + textfmt.Value(c.Lo, unit) + "–" + textfmt.Value(c.Hi, unit) + ")"
	}
	return s
}

// WriteSweepMarkdown prints a sweep's verdict and step table as
// markdown.
func WriteSweepMarkdown(w io.Writer, sw *metrics.Sweep) error {
	p := &textfmt.Printer{W: w}
	unit := metrics.SweepLoadUnit(sw.By)
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
func stepLabel(s metrics.SweepStep) string {
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
func WriteSoakMarkdown(w io.Writer, sk *metrics.Soak) error {
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
func WriteSoakCompare(w io.Writer, a, b *metrics.Soak) error {
	p := &textfmt.Printer{W: w}
	p.F("\nSoak verdicts\n%-18s %24s %24s\n", "verdict", "A", "B")
	find := func(sk *metrics.Soak, name string) (metrics.SoakVerdict, bool) {
		for _, v := range sk.Verdicts {
			if v.Name == name {
				return v, true
			}
		}
		return metrics.SoakVerdict{}, false
	}
	cell := func(v metrics.SoakVerdict, ok bool) string {
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
