package verdict

import (
	"strings"

	"github.com/mcpbench/mcpbench/results"
)

// The metrics of scenario iterations (the summary's iteration table).
// Scoped by a scenario's name (agent:iteration_p99<2s) or by one of its
// steps (agent#2:…); without a scope a percentile reads the slowest
// scenario and a count the sum over scenarios. Registered after
// metrics.go's (file order).
func init() {
	for _, q := range []struct {
		name string
		get  func(l *results.Latency) float64
	}{
		{"iteration_p50", func(l *results.Latency) float64 { return l.P50 }},
		{"iteration_p90", func(l *results.Latency) float64 { return l.P90 }},
		{"iteration_p99", func(l *results.Latency) float64 { return l.P99 }},
		{"iteration_p99.9", func(l *results.Latency) float64 { return l.P999 }},
		{"iteration_max", func(l *results.Latency) float64 { return l.Max }},
		{"iteration_mean", func(l *results.Latency) float64 { return l.Mean }},
	} {
		def(q.name, "ms", "scenario iteration time: intended start to the end of its last step, think included", opScopes, func(v view) (float64, bool) {
			worst, ok := 0.0, false
			for _, sc := range v.ScenarioList() {
				if sc.Iterations > 0 {
					worst, ok = max(worst, q.get(&sc.Iteration)), true
				}
			}
			return worst, ok
		})
	}
	count := func(name, doc string, f func(*results.ScenarioSummary) int64) {
		def(name, "", doc, opScopes, func(v view) (float64, bool) {
			scs := v.ScenarioList()
			var n int64
			for _, sc := range scs {
				n += f(sc)
			}
			return float64(n), len(scs) > 0
		})
	}
	count("iterations", "scenario iterations completed", func(s *results.ScenarioSummary) int64 { return s.Iterations })
	count("iterations_failed", "scenario iterations in which a request failed", func(s *results.ScenarioSummary) int64 { return s.Failed })
	count("iterations_dropped", "scenario iterations never started (open model, max_delay)", func(s *results.ScenarioSummary) int64 { return s.Dropped })
}

// scenarios are the scenarios a view reads: the one its op (a step,
// "<scenario>#<n>:<op>") belongs to, or all of them for the total.
func (v view) ScenarioList() []*results.ScenarioSummary {
	var out []*results.ScenarioSummary
	name, step := "", false
	if v.op != nil {
		name, _, step = strings.Cut(v.op.Name, "#")
		if !step {
			return nil // an op of the mix: no iterations
		}
	}
	for i := range v.s.Scenarios {
		if !step || v.s.Scenarios[i].Name == name {
			out = append(out, &v.s.Scenarios[i])
		}
	}
	return out
}
