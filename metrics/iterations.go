package metrics

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// iterTally keeps the iterations per scenario.
type iterTally struct {
	mu      sync.Mutex
	names   []string
	steps   [][]string
	hist    []*hdr.Histogram
	count   []int64
	failed  []int64
	dropped []int64
}

// SetScenarios names the run's scenarios and their step ops (index =
// the scenario argument of RecordIteration); call it before recording.
func (r *Recorder) SetScenarios(names []string, steps [][]string) {
	t := &r.iters
	t.mu.Lock()
	defer t.mu.Unlock()
	t.names, t.steps = names, steps
	t.hist = make([]*hdr.Histogram, len(names))
	for i := range t.hist {
		t.hist[i] = results.NewHistogram()
	}
	t.count, t.failed, t.dropped = make([]int64, len(names)), make([]int64, len(names)), make([]int64, len(names))
}

// RecordIteration records one completed iteration of scenario sc, from
// its intended start to end; failed when one of its requests failed.
// Safe for concurrent use.
func (r *Recorder) RecordIteration(sc int, intended, end time.Time, failed bool) {
	t := &r.iters
	t.mu.Lock()
	defer t.mu.Unlock()
	if sc < 0 || sc >= len(t.hist) {
		return
	}
	t.hist[sc].RecordValue(us(end.Sub(intended)))
	t.count[sc]++
	if failed {
		t.failed[sc]++
	}
}

// DropIteration counts a dropped iteration of scenario sc.
func (r *Recorder) DropIteration(sc int) {
	t := &r.iters
	t.mu.Lock()
	defer t.mu.Unlock()
	if sc >= 0 && sc < len(t.dropped) {
		t.dropped[sc]++
	}
}

// Scenarios summarizes the iterations over a window of secs seconds (nil
// without scenarios).
func (r *Recorder) Scenarios(secs float64) []results.ScenarioSummary {
	t := &r.iters
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []results.ScenarioSummary
	for i, n := range t.names {
		s := results.ScenarioSummary{Name: n, Steps: t.steps[i], Iterations: t.count[i], Failed: t.failed[i], Dropped: t.dropped[i],
			Iteration: results.LatencyOf(t.hist[i])}
		if secs > 0 {
			s.Rate = textfmt.Round3(float64(s.Iterations) / secs)
		}
		out = append(out, s)
	}
	return out
}
