package sweep

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// The step table has a dropped column: a step that dropped 5456
// arrivals shows them, where the table had no word of them before; the
// verdict names the bracket and the non-monotone step.
func TestTextShowsDropsAndBracket(t *testing.T) {
	slo := results.SLO{P99MS: 50, ErrorRate: 0.01}
	steps := []results.SweepStep{
		{N: 1, By: "rate", Value: 500, Offered: 500, Achieved: 500, Count: 5000, Latency: results.Latency{P99: 5}},
		{N: 2, By: "rate", Value: 1000, Offered: 1000, Achieved: 454.4, Count: 4544, Dropped: 5456, Latency: results.Latency{P99: 900}},
	}
	for i := range steps {
		judgeStep(&steps[i], slo)
	}
	sw := &results.Sweep{By: "rate", From: 500, To: 1000, Steps: 2, StepS: 10, SLO: slo, Results: steps, Verdict: Judge(steps, slo)}
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

// A step keeps its run's warnings (id, cause, remedy) and not-applicable
// lines, so the sweep's reports can print them; a repeated step keeps
// each run's, named by run, and each feature once. Before, a step kept
// only the generator's warning text, and a drop warning not at all.
func TestStepKeepsItsWarnings(t *testing.T) {
	drop := results.Warning{ID: "W-DROPS-VU-CAP", Text: "dropped 545 of 600 arrivals (90.8%)", Cause: "the VU cap", Remedy: "raise --max-vus"}
	na := results.NotApplicable{Feature: "--check-deleted", Reason: "the server gives no session ids"}
	s := &results.Summary{DurationS: 3, Dropped: 545, Warnings: []results.Warning{drop}, NotApplicable: []results.NotApplicable{na}}
	st := StepOf(2, "rate", 200, s, nil, results.SLO{P99MS: 50})
	if len(st.Warnings) != 1 || st.Warnings[0] != drop || len(st.NotApplicable) != 1 || st.NotApplicable[0] != na {
		t.Fatalf("step warnings %+v, not applicable %+v", st.Warnings, st.NotApplicable)
	}
	runs := []stepRun{{Summary: s, col: &stepCollector{}}, {Summary: s, col: &stepCollector{}}}
	p := pooled([]results.SweepStep{st, st}, runs)
	if len(p.Warnings) != 2 || p.Warnings[0].Text != "run 1: "+drop.Text || p.Warnings[1].Text != "run 2: "+drop.Text ||
		p.Warnings[1].ID != drop.ID || p.Warnings[1].Cause != drop.Cause || len(p.NotApplicable) != 1 {
		t.Errorf("pooled warnings %+v, not applicable %+v", p.Warnings, p.NotApplicable)
	}
}
