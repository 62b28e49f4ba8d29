package verdict

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// A crossed rule is reported once due, worded with the metric and the
// value; one not due yet, or without data, is not.
func TestFirstAbort(t *testing.T) {
	mk := func(expr string, d time.Duration) AbortRule {
		th, err := ParseThreshold(expr)
		if err != nil {
			t.Fatal(err)
		}
		return AbortRule{Threshold: th, Delay: d}
	}
	s := &results.Summary{All: results.OpSummary{Count: 10, Errors: 3, ErrorRate: 0.3, Response: results.Latency{P99: 412}}}
	rules := []AbortRule{mk("p99<200ms", 5*time.Second), mk("error_rate<1%", 0)}
	if r, ok := FirstAbort(s, rules, nil, 3200*time.Millisecond); !ok || r != "aborted at 3.2s: error_rate<1% failed (error_rate 30%)" {
		t.Errorf("at 3.2s: %q %v", r, ok)
	}
	if r, ok := FirstAbort(s, rules[:1], nil, 3200*time.Millisecond); ok {
		t.Errorf("not due yet, but: %q", r)
	}
	if r, ok := FirstAbort(s, rules[:1], nil, 5*time.Second); !ok || r != "aborted at 5s: p99<200ms failed (p99 412ms)" {
		t.Errorf("at 5s: %q %v", r, ok)
	}
	if r, ok := FirstAbort(&results.Summary{}, rules[:1], nil, time.Minute); ok {
		t.Errorf("no data, but: %q", r)
	}
}
