package metrics

import (
	"math/bits"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// SetChecks names every op's checks (index = Result.Op; check i is bit i
// of Result.Checks): nil or empty for an op without. Call it before
// recording starts.
func (r *Recorder) SetChecks(exprs [][]string) {
	r.checks = make([][]string, len(r.names))
	copy(r.checks, exprs)
}

// checkExprs returns op's check expressions (nil: none).
func (r *Recorder) checkExprs(op int) []string {
	if op < len(r.checks) {
		return r.checks[op]
	}
	return nil
}

// recordChecks counts one result's check outcomes into o (s.mu held); it
// reports whether any failed.
func (s *Shard) recordChecks(o *results.OpStats, res *driver.Result) bool {
	c := &res.Checks
	exprs := s.rec.checkExprs(res.Op)
	if len(o.Checks) < len(exprs) {
		o.Checks = make([]results.CheckTally, len(exprs))
		for i, e := range exprs {
			o.Checks[i].Expr = e
		}
	}
	for ran := c.Ran; ran != 0; ran &= ran - 1 {
		i := bits.TrailingZeros64(ran)
		if i >= len(o.Checks) {
			break
		}
		t := &o.Checks[i]
		if c.Failed&(1<<uint(i)) == 0 {
			t.Passed++
			continue
		}
		t.Failed++
		if t.Example == "" && i < len(c.Seen) {
			t.Example, t.ExampleAt = c.Seen[i], res.Start
		}
	}
	return c.Failed != 0
}

// addCheckFailures keeps res's failed checks in the first check failures
// (up to max) and counts them.
func (o *offenders) addCheckFailures(op string, exprs []string, res *driver.Result) {
	c := &res.Checks
	o.mu.Lock()
	defer o.mu.Unlock()
	for f := c.Failed; f != 0; f &= f - 1 {
		i := bits.TrailingZeros64(f)
		o.checkSeen++
		if len(o.checks) >= o.max || i >= len(exprs) {
			continue
		}
		of := results.CheckOffender{Op: op, Check: exprs[i], Intended: res.Intended, Start: res.Start, VU: res.VU, Iteration: res.Iteration}
		if i < len(c.Seen) {
			of.Seen = c.Seen[i]
		}
		o.checks = append(o.checks, of)
	}
}
