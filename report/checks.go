package report

import (
	"fmt"
	"strings"

	"github.com/mcpbench/mcpbench/results"
)

// checks prints the checks table (k6's checks, per op and check): passed,
// failed, pass rate and the first failure's value seen with its op's
// start; then the total. Nothing when no op had checks.
func (p *printer) checks(s *results.Summary) {
	var passed, failed int64
	rows := [][]string{}
	for _, o := range s.Ops {
		for _, c := range o.Checks {
			passed += c.Passed
			failed += c.Failed
			first := ""
			if f := c.FirstFailure; f != nil {
				first = f.Seen
				if !f.Start.IsZero() {
					first += fmt.Sprintf(" (op sent %s)", f.Start.UTC().Format("15:04:05.000"))
				}
			}
			rows = append(rows, []string{o.Name, c.Check, fmt.Sprint(c.Passed), fmt.Sprint(c.Failed), rate(c.Passed, c.Failed), first})
		}
	}
	if len(rows) == 0 {
		return
	}
	wOp, wCheck := len("op"), len("check")
	for _, r := range rows {
		wOp, wCheck = max(wOp, len(r[0])), max(wCheck, len(r[1]))
	}
	p.F("\nChecks: %d of %d failed (%s passed)\n", failed, passed+failed, rate(passed, failed))
	p.F("  %-*s  %-*s %10s %10s %10s  %s\n", wOp, "op", wCheck, "check", "passed", "failed", "pass rate", "first failure: value seen")
	for _, r := range rows {
		line := fmt.Sprintf("  %-*s  %-*s %10s %10s %10s  %s", wOp, r[0], wCheck, r[1], r[2], r[3], r[4], r[5])
		p.F("%s\n", strings.TrimRight(line, " "))
	}
}

// rate is passed / (passed + failed) as a percentage ("-" when none ran).
func rate(passed, failed int64) string {
	if passed+failed == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(passed)/float64(passed+failed))
}

// checksFailed counts the failed checks of every op, and the checks run.
func checksFailed(s *results.Summary) (failed, run int64) {
	for i := range s.Ops {
		p, f := s.Ops[i].CheckTotals()
		failed, run = failed+f, run+p+f
	}
	return failed, run
}
