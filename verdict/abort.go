package verdict

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// AbortRule is a threshold that stops a run as soon as it is crossed
// (k6's abortOnFail): the engine judges it on the measured window so far
// at the end of each interval, from Delay into the window on (k6's
// delayAbortEval: a rate or a percentile needs some ops before it means
// anything).
type AbortRule struct {
	Threshold Threshold
	Delay     time.Duration
}

// FirstAbort judges rules on s, the summary of the measured window up to
// elapsed into it (q: see Threshold.Check): the first rule that is due
// (elapsed ≥ its Delay) and crossed, worded for the summary's stop reason
// ("aborted at 3.2s: p99<200ms failed (p99 412ms)"); ok false when none
// is. A threshold without data yet (no op it selects has completed) is
// not crossed here: it fails only at the end, as Check says.
func FirstAbort(s *results.Summary, rules []AbortRule, q QuantileSource, elapsed time.Duration) (reason string, ok bool) {
	for _, a := range rules {
		if elapsed < a.Delay {
			continue
		}
		r := a.Threshold.Check(s, q)
		if !r.Pass && !math.IsNaN(r.Actual) {
			metric := a.Threshold.Metric
			if a.Threshold.Op != "" {
				metric = a.Threshold.Op + ":" + metric
			}
			return abortReason(r, metric, elapsed), true
		}
	}
	return "", false
}

// abortReason words an abort: at is how far into the measured window.
func abortReason(r results.ThresholdResult, metric string, at time.Duration) string {
	unit := r.Unit
	if unit != "" && unit != "ms" && unit != "%" {
		unit = " " + unit
	}
	return fmt.Sprintf("aborted at %.3gs: %s failed (%s %.4g%s)", at.Seconds(), strings.TrimSpace(r.Expr), metric, r.Actual, unit)
}
