package soak

import (
	"io"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// WriteText prints the verdict table and the soak's last line. With
// sk.Verdict set (the run's one verdict, see results.Soak) the last line
// says that word, the one of the report's verdict line, and why:
//
//	Soak: FAIL — target leak failed
//	Soak: WARN — 3 of 4 soak verdicts judged, none failed; the run's warnings are in its verdict line above
//	Soak: WARN — not judged: none of the 4 soak verdicts had anything to judge
//	Soak: OK — 3 of 4 soak verdicts judged, none failed
//
// Without it (a soak.json written before the verdict was recorded):
// PASS, FAIL, or NOT JUDGED when no verdict judged anything.
func WriteText(w io.Writer, sk *results.Soak) error {
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
	line := "Soak: " + Word(sk)
	if why := Why(sk); why != "" {
		line += " — " + why
	}
	if sk.Interrupted {
		p.F("%s (interrupted after %.0f s of %.0f s: the verdicts judge what ran)\n", line, sk.DurationS, sk.PlannedS)
	} else {
		p.F("%s\n", line)
	}
	return p.Err
}

// Word is the soak's verdict word: sk.Verdict when recorded, else PASS,
// FAIL, or NOT JUDGED (no verdict judged anything).
func Word(sk *results.Soak) string {
	o := sk.Outcome()
	switch {
	case sk.Verdict != "":
		return sk.Verdict
	case len(o.Failed) > 0:
		return "FAIL"
	case o.Judged == 0:
		return "NOT JUDGED"
	}
	return "PASS"
}

// Why says what the soak's verdicts judged, for its last line.
func Why(sk *results.Soak) string {
	o := sk.Outcome()
	var why string
	switch {
	case len(o.Failed) > 0:
		why = strings.Join(o.Failed, ", ") + " failed"
	case o.Judged == 0:
		why = "not judged: none of the " + itoa(o.Verdicts) + " soak verdicts had anything to judge"
	default:
		why = itoa(o.Judged) + " of " + itoa(o.Verdicts) + " soak verdicts judged, none failed"
	}
	if sk.Verdict == "WARN" && len(o.Failed) == 0 && o.Judged > 0 {
		why += "; the run's warnings are in its verdict line above"
	}
	return why
}

func itoa(n int) string { return strconv.Itoa(n) }
