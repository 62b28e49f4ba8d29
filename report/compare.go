package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/verdict"
)

// WriteCompare prints a comparison as a table: per op, each metric in A and
// B with the change and whether it is beyond the noise (Mann–Whitney U on
// the runs' per-interval values, when both have them), every number in
// its unit's one format (textfmt.Value); then the limits checked, passing
// and crossed. It opens with a one-line headline (compareHeadline): p99
// and throughput of all ops, errors and faulty streams when any, limits.
func WriteCompare(w io.Writer, labelA, labelB string, cmp []verdict.OpCompare, limits []verdict.LimitResult) error {
	p := &textfmt.Printer{W: w}
	if h := compareHeadline(cmp, limits); h != "" {
		p.F("%s\n", h)
	}
	p.F("A: %s\nB: %s\n\n", labelA, labelB)
	width := len("op")
	for _, c := range cmp {
		width = max(width, len(c.Name))
	}
	p.F("%-*s  %-14s %12s %12s %12s %9s  %s\n", width, "op", "metric", "A", "B", "B − A", "change", "noise")
	tested := false
	for _, c := range cmp {
		for i, d := range c.Deltas {
			name := ""
			if i == 0 {
				name = c.Name
			}
			label := d.Metric
			if d.Unit != "" {
				label += " " + d.Unit
			}
			av, bv, ab, rel := textfmt.Value(d.A, d.Unit), textfmt.Value(d.B, d.Unit), textfmt.SignedValue(d.Abs, d.Unit), "—"
			if !d.InA {
				av, ab = "—", "—"
			}
			if !d.InB {
				bv, ab = "—", "—"
			}
			if d.InA && d.InB && d.A != 0 {
				rel = fmt.Sprintf("%+.1f%%", 100*d.Rel)
			}
			p.F("%-*s  %-14s %12s %12s %12s %9s  %s\n", width, name, label, av, bv, ab, rel, noise(d))
			tested = tested || d.P != nil
		}
	}
	if tested {
		p.F("\nnoise: a two-sided Mann–Whitney U test of A's per-interval values against B's; beyond when p < %g, within otherwise.\n", verdict.NoiseAlpha)
	}
	writeLimits(p, limits)
	return p.Err
}

// noise renders a delta's test: "beyond (p=0.001)", "within (p=0.43)" or
// "—" when it was not tested.
func noise(d verdict.Delta) string {
	if d.P == nil {
		return "—"
	}
	word := "within"
	if d.Beyond {
		word = "beyond"
	}
	return word + " (p=" + fmtP(*d.P) + ")"
}

// fmtP formats a p-value: two significant digits, "<0.0001" below.
func fmtP(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// writeLimits prints the --fail-if limits checked, passing and crossed.
func writeLimits(p *textfmt.Printer, limits []verdict.LimitResult) {
	if len(limits) == 0 {
		return
	}
	p.F("\nLimits (--fail-if):\n")
	for _, l := range limits {
		mark := "PASS"
		if !l.Pass {
			mark = "FAIL"
		}
		p.F("  %s  %s\n", mark, l.Text)
	}
}
