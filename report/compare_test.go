package report

import (
	"bytes"
	"strings"
	"testing"

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
