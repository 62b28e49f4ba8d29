package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// compare opens with what makes the runs not like-for-like (when
// compared anyway), then the headline: every quantity with its
// direction, size and noise verdict — a change within the noise keeps
// its size, it is never "unchanged" — and the limits crossed; then the
// table.
func TestCompareOpensWithTheHeadline(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	c := verdict.RunComparison{
		NotLikeForLike: []verdict.Mismatch{{Field: "profile", A: "smoke", B: "ramp"}},
		Headline: []verdict.Finding{
			{Quantity: "throughput", Unit: "ops/s", A: 1000, B: 990, Abs: -10, Rel: -0.01, P: p(0.4), Test: verdict.TestWelch},
			{Quantity: "dropped", Unit: "%", Test: verdict.TestProportions, P: p(1)},
			{Quantity: "errors", Unit: "%", A: 0, B: 2.5, Abs: 2.5, P: p(0.002), Beyond: true, Test: verdict.TestProportions},
			{Quantity: "p99", Unit: "ms", A: 10, B: 11.2, Abs: 1.2, Rel: 0.12, P: p(0.001), Beyond: true, Test: verdict.TestMannWhitneyU},
		},
		Ops: []verdict.OpCompare{{Name: "all", Deltas: []verdict.Delta{
			{Metric: "rate", Unit: "ops/s", A: 1000, B: 990, Abs: -10, Rel: -0.01, InA: true, InB: true, P: p(0.4), Test: verdict.TestWelch},
		}}},
		Limits: []verdict.LimitResult{{Pass: false, Text: "all: p99 …"}, {Pass: true, Text: "all: rate …"}},
	}
	var b bytes.Buffer
	if err := WriteCompare(&b, "a", "b", c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"NOT LIKE-FOR-LIKE [W-COMPARE-UNLIKE]: profile smoke vs ramp — the differences below are not the servers' alone; remedy: compare runs of one profile and load against one target (docs/troubleshooting.md#w-compare-unlike)",
		"throughput −1.0% (1000.0 → 990.0 ops/s, within the noise) · dropped none in either run · errors +2.50 pp (0.00% → 2.50%, beyond the noise) · " +
			"p99 +12.0% (10.00 → 11.20 ms, beyond the noise) · 1 of 2 --fail-if limits crossed",
		"A: a", "B: b",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d\n got %s\nwant %s", i+1, lines[i], w)
		}
	}
	if !strings.Contains(b.String(), "within (p=0.4, Welch t on per-interval throughput)") {
		t.Errorf("table:\n%s", b.String())
	}
}

// The sweep's markdown names the bracket, the contradictions and the
// cool-downs, and its step table has the dropped arrivals and the step
// kinds (r bisect, c re-check).
func TestSweepMarkdown(t *testing.T) {
	sw := &results.Sweep{Profile: "cap", By: "rate", SLO: results.SLO{P99MS: 50, ErrorRate: 0.01}, Results: []results.SweepStep{
		{N: 1, Value: 2643, Achieved: 2643, Pass: true},
		{N: 2, Value: 2777, Achieved: 2000, Dropped: 5456, Reasons: []string{"p99 1600 ms > 50.00 ms"}},
		{N: 3, Value: 2710, Achieved: 2500, Refine: true, Reasons: []string{"p99 300 ms > 50.00 ms"}},
		{N: 4, Value: 2643, Achieved: 2600, Recheck: true, Reasons: []string{"p99 80.00 ms > 50.00 ms"}},
	}, Verdict: results.SweepVerdict{MaxSustainable: 2643, MaxStep: 1, MaxLoad: 2643, Crossing: &results.Bracket{Lo: 2643, Hi: 2710, LoStep: 1, HiStep: 3},
		NonMonotone: []string{"step 2 at 2777 ops/s achieved 2000.0 ops/s, less than step 1 at 2643 ops/s (2643.0 ops/s)"},
		Hysteresis:  "step 4 re-ran 2643 ops/s after the overload and failed", CoolDowns: 2, CoolDownS: 12.5, Unsettled: 1}}
	var b bytes.Buffer
	if err := WriteSweepMarkdown(&b, sw); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| SLO crossed between | 2643 ops/s (step 1, passed) and 2710 ops/s (step 3, failed) |\n",
		"| Non-monotone | step 2 at 2777 ops/s achieved 2000.0 ops/s, less than step 1 at 2643 ops/s (2643.0 ops/s) |\n",
		"| Hysteresis | step 4 re-ran 2643 ops/s after the overload and failed |\n",
		"| Cool-downs | 2, 12.5 s in all, 1 not settled |\n",
		"| step | rate | achieved ops/s | dropped | errors % |",
		"| 2 | 2777 | 2000.0 | 5456 | 0.00 |", "| 3r | 2710 |", "| 4c | 2643 |",
		"- WARNING W-SWEEP-HYSTERESIS: step 4 re-ran 2643 ops/s after the overload and failed\n  - cause: the highest passing load passed before the overload",
		"- WARNING W-SWEEP-COOLDOWN: 1 of 2 cool-down(s) ran out of time", "  - remedy: longer steps (--step) or --repeat 3",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}
