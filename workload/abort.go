package workload

import (
	"context"
	"time"

	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// Abort on fail (k6's abortOnFail): a threshold of abort_on_fail (or
// every threshold, with --abort-on-fail) is judged at the end of each
// interval of the measured window on the window so far, from its delay
// into the window on. The first crossed one stops the run at once: no
// new op starts, those in flight get the graceful stop, the measured
// window ends there, the results are written as for any run, the summary
// says when and why ("aborted at 3.2s: p99<200ms failed (p99 412ms)") and
// the run exits 99. A threshold without data yet is not judged early.

// judgeAbort judges the abort rules at the end (end) of an interval of
// the measured window, on the collector's goroutine; the first crossed
// stops the run (its reason kept for the summary).
func (e *engine) judgeAbort(end time.Time) {
	if len(e.pl.Aborts) == 0 || e.aborted.Load() != nil || !end.After(e.warmEnd) || end.After(e.end) || e.admit.Err() != nil {
		return
	}
	e.mu.Lock()
	u0 := e.usage0
	e.mu.Unlock()
	sum := e.summary(context.Background(), e.warmEnd, end, u0, results.ReadUsage())
	reason, crossed := verdict.FirstAbort(sum, e.pl.Aborts, e.rec, end.Sub(e.warmEnd))
	if !crossed {
		return
	}
	e.aborted.Store(&reason)
	now := time.Now()
	e.stoppedAt.CompareAndSwap(nil, &now) // the measured window ends here (measuredEnd)
	e.stopAdmit()
}

// abortSummary marks a summary of an aborted run.
func (e *engine) abortSummary(s *results.Summary) {
	if r := e.aborted.Load(); r != nil {
		s.Aborted, s.StopReason = true, *r
	}
}
