package verdict

import (
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// A session sweep without --target-pid did not measure the target's
// memory per session: compared with one that did, its side is absent,
// not 0 KiB (no difference is computed); two measured sweeps compare.
func TestCompareSweepsTargetMemoryNotMeasured(t *testing.T) {
	row := func(a, b results.SweepVerdict) *SweepRow {
		c := CompareSweeps(&results.Sweep{By: results.SweepBySessions, Verdict: a}, &results.Sweep{By: results.SweepBySessions, Verdict: b})
		for i := range c.Verdict {
			if c.Verdict[i].Name == "target_kib_per_session" {
				return &c.Verdict[i]
			}
		}
		return nil
	}
	measured := results.SweepVerdict{TargetKiBPerSession: 20, TargetMeasured: true, GeneratorKiBPerSession: 10}
	unmeasured := results.SweepVerdict{GeneratorKiBPerSession: 10}
	if r := row(unmeasured, measured); r == nil || r.InA || !r.InB || r.Abs != 0 {
		t.Fatalf("row %+v", r)
	}
	if r := row(unmeasured, unmeasured); r != nil {
		t.Fatalf("neither measured: %+v", r)
	}
	flat := results.SweepVerdict{TargetMeasured: true, GeneratorKiBPerSession: 10}
	if r := row(flat, measured); r == nil || !r.InA || !r.InB || r.Abs != 20 {
		t.Fatalf("both measured: %+v", r)
	}
}
