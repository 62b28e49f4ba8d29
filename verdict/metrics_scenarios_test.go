package verdict

import (
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// Iteration thresholds read the iteration table: a scenario's own row by
// its name or a step's, the slowest scenario (or the sum) without a scope.
func TestIterationThresholds(t *testing.T) {
	s := &results.Summary{
		Ops: []results.OpSummary{{Name: "agent#1:list", Count: 10}, {Name: "agent#2:call", Count: 30}, {Name: "lister#1:list", Count: 4}},
		Scenarios: []results.ScenarioSummary{
			{Name: "agent", Iterations: 10, Failed: 1, Iteration: results.Latency{P99: 120}},
			{Name: "lister", Iterations: 4, Iteration: results.Latency{P99: 8}},
		},
	}
	for _, tt := range []struct {
		expr   string
		actual float64
		pass   bool
	}{
		{"agent:iteration_p99<100ms", 120, false},
		{"lister:iteration_p99<100ms", 8, true},
		{"agent#2:iteration_p99<200ms", 120, true},
		{"iteration_p99<100ms", 120, false},
		{"iterations_failed==0", 1, false},
		{"lister:iterations_failed==0", 0, true},
		{"iterations>=14", 14, true},
		{"agent:p99<1s", 0, true}, // the scenario's steps' op rows (p99 0 in this summary)
	} {
		th, err := ParseThreshold(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		r := th.Check(s, nil)
		if r.Actual != tt.actual || r.Pass != tt.pass {
			t.Errorf("%s: actual %v pass %v, want %v %v", tt.expr, r.Actual, r.Pass, tt.actual, tt.pass)
		}
	}
}
