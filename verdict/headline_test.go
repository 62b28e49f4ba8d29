package verdict

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// ivs makes measured one-second intervals with the given completed ops
// and p99s (p50 and p90 a third and a half of it).
func ivs(counts []int64, p99 []float64) []results.IntervalRec {
	var out []results.IntervalRec
	for i, c := range counts {
		o := results.IntervalOpRec{Count: c, P50: p99[i] / 3, P90: p99[i] / 2, P99: p99[i]}
		out = append(out, results.IntervalRec{Interval: 1, Phase: results.PhaseMeasure, All: o})
	}
	return out
}

func find(t *testing.T, fs []Finding, q string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Quantity == q {
			return f
		}
	}
	t.Fatalf("no %s", q)
	return Finding{}
}

// Each quantity gets the test right for it: throughput Welch's on the
// per-interval rates, drops and errors the two-proportion test on the
// counts, the percentiles Mann–Whitney on the per-interval values — each
// with the exact figures of the planted runs.
func TestFindings(t *testing.T) {
	a := &results.Summary{Dropped: 2700, DroppedRate: 0.27, All: results.OpSummary{Count: 7300, Errors: 73, Rate: 730, Response: results.Latency{P50: 10, P90: 15, P99: 30}}}
	b := &results.Summary{All: results.OpSummary{Count: 10000, Errors: 100, Rate: 1000, Response: results.Latency{P50: 3.5, P90: 5.25, P99: 10.5}}}
	ra := &results.Results{Intervals: ivs([]int64{725, 735, 725, 735, 725, 735, 725, 735, 725, 735}, []float64{29, 31, 29, 31, 29, 31, 29, 31, 29, 31})}
	rb := &results.Results{Intervals: ivs([]int64{995, 1005, 995, 1005, 995, 1005, 995, 1005, 995, 1005}, []float64{10, 11, 10, 11, 10, 11, 10, 11, 10, 11})}
	fs := Findings(a, b, ra, rb)
	if len(fs) != 6 {
		t.Fatalf("%d findings", len(fs))
	}
	th := find(t, fs, "throughput")
	if th.Test != TestWelch || !th.Beyond || th.CI == nil || th.CI.Lo > 270 || th.CI.Hi < 270 || th.Abs != 270 {
		t.Fatalf("throughput %+v", th)
	}
	if w := th.Words(); w != "throughput +37.0% (730.0 → 1000.0 ops/s, beyond the noise)" {
		t.Fatalf("%q", w)
	}
	d := find(t, fs, "dropped")
	if d.Test != TestProportions || !d.Beyond || d.A != 27 || d.B != 0 || d.Words() != "dropped −27.00 pp (27.00% → 0.00%, beyond the noise)" {
		t.Fatalf("dropped %+v %q", d, d.Words())
	}
	// 1 % errors in both: within the noise (p = 1), and so it reads.
	e := find(t, fs, "errors")
	if e.Test != TestProportions || e.Beyond || e.P == nil || *e.P != 1 || e.Words() != "errors +0.00 pp (1.00% → 1.00%, within the noise)" {
		t.Fatalf("errors %+v %q", e, e.Words())
	}
	p99 := find(t, fs, "p99")
	if p99.Test != TestMannWhitneyU || !p99.Beyond || p99.Words() != "p99 −65.0% (30.00 → 10.50 ms, beyond the noise)" {
		t.Fatalf("p99 %+v %q", p99, p99.Words())
	}
	// A summary.json alone: nothing per interval to test, and it says so.
	fs = Findings(a, b, nil, nil)
	if f := find(t, fs, "throughput"); f.P != nil || f.Words() != "throughput +37.0% (730.0 → 1000.0 ops/s, not tested: 0 and 0 measured intervals; the test needs 2 a side)" {
		t.Fatalf("%q", f.Words())
	}
	if f := find(t, fs, "dropped"); f.P == nil || !f.Beyond {
		t.Fatalf("drops are counts: tested without intervals: %+v", f)
	}
	// The same run against itself: within the noise throughout.
	for _, f := range Findings(b, b, rb, rb) {
		if f.Beyond || (f.P == nil && f.Unit != "%") || strings.Contains(f.Words(), "beyond") {
			t.Errorf("same run: %q", f.Words())
		}
	}
}

// Runs that differ in what was offered are named, each difference once;
// two runs of the embedded server (a new port each time) are alike.
func TestLikeForLike(t *testing.T) {
	a := &results.Summary{Profile: "smoke", Model: "closed", VUs: 4, Protocol: "2025-11-25", Target: "http://127.0.0.1:1/mcp"}
	b := &results.Summary{Profile: "ramp", Model: "open", TargetRate: 1000, VUs: 50, MaxVUs: 200, Stages: "0 → 1000/s over 10s", Protocol: "2026-07-28", Target: "http://127.0.0.1:2/mcp"}
	var got []string
	for _, m := range LikeForLike(a, b) {
		got = append(got, m.String())
	}
	want := `profile smoke vs ramp; model closed vs open; offered rate 0/s vs 1000/s; VUs 4 vs 50; stages "" vs 0 → 1000/s over 10s; protocol 2025-11-25 vs 2026-07-28; target http://127.0.0.1:1/mcp vs http://127.0.0.1:2/mcp`
	if strings.Join(got, "; ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, "; "), want)
	}
	e1 := &results.Summary{Profile: "p", Model: "open", TargetRate: 1000, MaxVUs: 200, VUs: 40, Embedded: true, Target: "http://127.0.0.1:3333/mcp (embedded reference server)"}
	e2 := *e1
	e2.Target, e2.VUs, e2.TargetRate = "http://127.0.0.1:4444/mcp (embedded reference server)", 61, 1005
	if m := LikeForLike(e1, &e2); m != nil {
		t.Fatalf("embedded runs (open model: VUs started differ, 0.5 %% apart in rate): %v", m)
	}
}
