package sweep

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/metrics"
)

// The step table has a dropped column: a step that dropped 5456
// arrivals shows them, where the table had no word of them before; the
// verdict names the bracket and the non-monotone step.
func TestTextShowsDropsAndBracket(t *testing.T) {
	slo := metrics.SLO{P99MS: 50, ErrorRate: 0.01}
	steps := []metrics.SweepStep{
		{N: 1, By: "rate", Value: 500, Offered: 500, Achieved: 500, Count: 5000, Latency: metrics.Latency{P99: 5}},
		{N: 2, By: "rate", Value: 1000, Offered: 1000, Achieved: 454.4, Count: 4544, Dropped: 5456, Latency: metrics.Latency{P99: 900}},
	}
	for i := range steps {
		judgeStep(&steps[i], slo)
	}
	sw := &metrics.Sweep{By: "rate", From: 500, To: 1000, Steps: 2, StepS: 10, SLO: slo, Results: steps, Verdict: Judge(steps, slo)}
	var b strings.Builder
	if err := WriteText(&b, sw); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"   2       1000      454.4      5456     0.00",
		"Maximum sustainable rate under the SLO: 500.0 ops/s (step 1); the SLO is crossed between 500 ops/s (step 1, passed) and 1000 ops/s (step 2, failed)\n",
		"WARNING W-SWEEP-NONMONOTONE: 1 step(s) achieved less than a step at a lower load: step 2 at 1000 ops/s achieved 454.4 ops/s, less than step 1 at 500 ops/s (500.0 ops/s)\n",
		"  cause: a step achieved more than 2 % less throughput than a step at a lower load",
		"  remedy: longer steps (--step) or --repeat 3",
		"Steps that dropped arrivals (",
		"   2       1000      10000      5456         54.56%               900.0  FAIL\n",
		"Confidence: low: 1 step(s) achieved less than a step at a lower load (non-monotone);",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}
