package soak

import (
	"io"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/metrics"
)

// WriteText prints the verdict table.
func WriteText(w io.Writer, sk *metrics.Soak) error {
	p := &textfmt.Printer{W: w}
	p.F("Soak verdicts (%.0f s measured)\n", sk.DurationS)
	for _, v := range sk.Verdicts {
		mark := "PASS"
		switch {
		case !v.Checked:
			mark = "n/a "
		case !v.Pass:
			mark = "FAIL"
		}
		p.F("  %s  %-18s %s\n", mark, v.Name, v.Detail)
	}
	verdict := map[bool]string{true: "PASS", false: "FAIL"}[sk.Pass]
	if sk.Interrupted {
		p.F("Soak: %s (interrupted after %.0f s of %.0f s: the verdicts judge what ran)\n", verdict, sk.DurationS, sk.PlannedS)
	} else {
		p.F("Soak: %s\n", verdict)
	}
	return p.Err
}
