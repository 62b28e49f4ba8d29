package results

import (
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
)

// The "all" row sums each check expression over the ops that have it;
// one op's rows add index by index, even when two of its checks read the
// same.
func TestAddChecks(t *testing.T) {
	op := []CheckTally{{Expr: "a", Passed: 1}, {Expr: "a", Failed: 2}}
	got := addChecks(nil, op)
	got = addChecks(got, op)
	if d := cmp.Diff([]CheckTally{{Expr: "a", Passed: 2}, {Expr: "a", Failed: 4}}, got); d != "" {
		t.Errorf("one op (-want +got):\n%s", d)
	}
	all := addChecks(nil, []CheckTally{{Expr: "a", Passed: 1}, {Expr: "b", Failed: 1, Example: "x"}})
	all = addChecks(all, []CheckTally{{Expr: "b", Passed: 5}})
	if d := cmp.Diff([]CheckTally{{Expr: "a", Passed: 1}, {Expr: "b", Passed: 5, Failed: 1, Example: "x"}}, all); d != "" {
		t.Errorf("all (-want +got):\n%s", d)
	}
}

// A merged row's late starts are the segments' summed, so the start-lag
// warning is judged on the merged counts (verdict.Warnings).
func TestMergeSumsLateStarts(t *testing.T) {
	o := sumOps("all", []OpSummary{{Count: 1000, LateStarts: 30}, {Count: 3000, LateStarts: 0}}, 10, func(string) *hdr.Histogram { return nil })
	if o.Count != 4000 || o.LateStarts != 30 {
		t.Fatalf("count %d, late starts %d: want 4000, 30", o.Count, o.LateStarts)
	}
}
