package results

import (
	"time"
)

// Checks (package check): per op, each check's passes and failures, the
// first failure's value seen, and the first failures with their op's
// start (offenders.json). An op's checks are counted by completion, in
// the interval its result was recorded; an op whose answer carried no
// result (an RPC or transport error) ran no check.

// CheckTally is one check's counts over some span.
type CheckTally struct {
	Expr           string
	Passed, Failed int64
	// Example is the value the first failure saw; ExampleAt its op's
	// start.
	Example   string
	ExampleAt time.Time
}

// addChecks adds src's tallies into dst: index by index when both hold
// the same checks (one op's), else by expression (the "all" row: every
// op's checks, the same expression summed).
func addChecks(dst, src []CheckTally) []CheckTally {
	if len(src) == 0 {
		return dst
	}
	if len(dst) == 0 {
		return append(dst, src...)
	}
	aligned := len(dst) == len(src)
	for i := 0; aligned && i < len(dst); i++ {
		aligned = dst[i].Expr == src[i].Expr
	}
	for i := range src {
		j := i
		if !aligned {
			j = -1
			for k := range dst {
				if dst[k].Expr == src[i].Expr {
					j = k
					break
				}
			}
			if j < 0 {
				dst = append(dst, CheckTally{Expr: src[i].Expr})
				j = len(dst) - 1
			}
		}
		d, b := &dst[j], &src[i]
		d.Passed += b.Passed
		d.Failed += b.Failed
		if d.Example == "" && b.Example != "" {
			d.Example, d.ExampleAt = b.Example, b.ExampleAt
		}
	}
	return dst
}

// resetChecks zeroes the counts, keeping the expressions and examples.
func resetChecks(ts []CheckTally) []CheckTally {
	for i := range ts {
		ts[i].Passed, ts[i].Failed = 0, 0
	}
	return ts
}

// checksFailed sums the failures of ts.
func checksFailed(ts []CheckTally) (passed, failed int64) {
	for _, t := range ts {
		passed += t.Passed
		failed += t.Failed
	}
	return passed, failed
}

// CheckSummary is one check of an op (or, in the "all" row, one check
// expression over every op that has it).
type CheckSummary struct {
	Check  string `json:"check"`
	Passed int64  `json:"passed"`
	Failed int64  `json:"failed"`
	// PassRate is passed / (passed + failed), 0..1.
	PassRate float64 `json:"pass_rate"`
	// FirstFailure is the first failure: the value the check saw and its
	// op's start (nil when none failed).
	FirstFailure *CheckFailure `json:"first_failure,omitempty"`
}

// CheckFailure is a failed check's example.
type CheckFailure struct {
	Seen  string    `json:"seen"`
	Start time.Time `json:"start,omitzero"`
}

// checkSummaries summarizes tallies (nil when none).
func checkSummaries(ts []CheckTally) []CheckSummary {
	var out []CheckSummary
	for _, t := range ts {
		out = append(out, checkSummaryOf(t.Expr, t.Passed, t.Failed, t.Example, t.ExampleAt))
	}
	return out
}

func checkSummaryOf(expr string, passed, failed int64, seen string, at time.Time) CheckSummary {
	c := CheckSummary{Check: expr, Passed: passed, Failed: failed}
	if n := passed + failed; n > 0 {
		c.PassRate = float64(passed) / float64(n)
	}
	if failed > 0 && seen != "" {
		c.FirstFailure = &CheckFailure{Seen: seen, Start: at}
	}
	return c
}

// sumCheckSummaries sums the checks of one op's segment rows (merge):
// by expression, in first-seen order; the first failure of the earliest
// segment that has one.
func sumCheckSummaries(parts [][]CheckSummary) []CheckSummary {
	var ts []CheckTally
	for _, p := range parts {
		var src []CheckTally
		for _, c := range p {
			t := CheckTally{Expr: c.Check, Passed: c.Passed, Failed: c.Failed}
			if f := c.FirstFailure; f != nil {
				t.Example, t.ExampleAt = f.Seen, f.Start
			}
			src = append(src, t)
		}
		ts = addChecks(ts, src)
	}
	return checkSummaries(ts)
}

// CheckTotals sums an op summary's checks: passes and failures.
func (o *OpSummary) CheckTotals() (passed, failed int64) {
	for _, c := range o.Checks {
		passed += c.Passed
		failed += c.Failed
	}
	return passed, failed
}

// CheckOffender is one failed check, kept for debugging
// (offenders.json's first_check_failures).
type CheckOffender struct {
	Op        string    `json:"op"`
	Check     string    `json:"check"`
	Seen      string    `json:"seen"`
	Intended  time.Time `json:"intended_start,omitzero"`
	Start     time.Time `json:"start"`
	VU        int       `json:"vu"`
	Iteration int64     `json:"iteration"`
}
