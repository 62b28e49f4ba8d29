package report

import (
	"fmt"
	"io"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/verdict"
)

// WriteCompare prints a comparison as a table: per op, each metric in A and
// B with the change.
func WriteCompare(w io.Writer, labelA, labelB string, cmp []verdict.OpCompare) error {
	p := &textfmt.Printer{W: w}
	p.F("A: %s\nB: %s\n\n", labelA, labelB)
	width := len("op")
	for _, c := range cmp {
		width = max(width, len(c.Name))
	}
	p.F("%-*s  %-14s %12s %12s %12s %9s\n", width, "op", "metric", "A", "B", "B − A", "change")
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
			av, bv, ab, rel := textfmt.Num(d.A), textfmt.Num(d.B), textfmt.Signed(d.Abs), "—"
			if !d.InA {
				av, ab = "—", "—"
			}
			if !d.InB {
				bv, ab = "—", "—"
			}
			if d.InA && d.InB && d.A != 0 {
				rel = fmt.Sprintf("%+.1f%%", 100*d.Rel)
			}
			p.F("%-*s  %-14s %12s %12s %12s %9s\n", width, name, label, av, bv, ab, rel)
		}
	}
	return p.Err
}
