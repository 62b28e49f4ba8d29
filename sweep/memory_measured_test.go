package sweep

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// A session sweep without --target-pid has no target RSS: its memory per
// session is not measured, and must never print as 0.0 KiB; with the
// target sampled (a correct server: RSS that grows with sessions) the
// slope prints.
func TestSweepTargetMemoryNotMeasured(t *testing.T) {
	slo := results.SLO{P99MS: 50, ErrorRate: 1}
	text := func(steps []results.SweepStep) (results.SweepVerdict, string) {
		v := Judge(steps, slo)
		var b bytes.Buffer
		if err := WriteText(&b, &results.Sweep{By: results.SweepBySessions, Results: steps, Verdict: v}); err != nil {
			t.Fatal(err)
		}
		return v, b.String()
	}
	unsampled := []results.SweepStep{{By: "sessions", Sessions: 1000, GenRSSMB: 40}, {By: "sessions", Sessions: 3000, GenRSSMB: 60}}
	v, out := text(unsampled)
	if v.TargetMeasured || v.TargetMemoryMeasured() {
		t.Fatalf("target memory measured without a target: %+v", v)
	}
	if !strings.Contains(out, "Memory per session: target not measured (no --target-pid), mcpbench 10.2 KiB") || strings.Contains(out, "target 0.0 KiB") {
		t.Fatalf("text:\n%s", out)
	}

	sampled := []results.SweepStep{{By: "sessions", Sessions: 1000, TgtRSSMB: 50, GenRSSMB: 40}, {By: "sessions", Sessions: 3000, TgtRSSMB: 90, GenRSSMB: 60}}
	v, out = text(sampled)
	if !v.TargetMeasured || !strings.Contains(out, "Memory per session: target 20.5 KiB, mcpbench 10.2 KiB") {
		t.Fatalf("verdict %+v, text:\n%s", v, out)
	}
	// A flat target (no memory per session) was measured: 0.0 KiB is
	// its measurement.
	flat := []results.SweepStep{{By: "sessions", Sessions: 1000, TgtRSSMB: 50, GenRSSMB: 40}, {By: "sessions", Sessions: 3000, TgtRSSMB: 50, GenRSSMB: 60}}
	if _, out = text(flat); !strings.Contains(out, "Memory per session: target 0.0 KiB, mcpbench 10.2 KiB") {
		t.Fatalf("text:\n%s", out)
	}
}
