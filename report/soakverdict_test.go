package report

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// Issue 34 item 5: a soak has one verdict: its summary's verdict line
// counts the soak's outcome (a failed soak verdict fails the run, none
// judged warns), so the report's first line and the soak's last agree.
func TestVerdictLineCountsSoak(t *testing.T) {
	clean := func() *results.Summary {
		return &results.Summary{All: results.OpSummary{Count: 100, Ledger: &results.LedgerSummary{Streams: 100}}}
	}
	s := clean()
	if l := verdictLine(s); !strings.HasPrefix(l, "Verdict: OK") || VerdictLevel(s) != "OK" {
		t.Fatalf("a clean run: %q", l)
	}
	s.Soak = &results.SoakOutcome{Verdicts: 4, Judged: 3}
	if l := verdictLine(s); !strings.HasPrefix(l, "Verdict: OK") {
		t.Fatalf("a clean soak: %q", l)
	}
	s.Soak = &results.SoakOutcome{Verdicts: 4, Judged: 3, Failed: []string{"target leak"}}
	if l := verdictLine(s); l != "Verdict: FAIL — soak: target leak failed (below)" || VerdictLevel(s) != "FAIL" {
		t.Fatalf("a failed soak verdict: %q", l)
	}
	s.Soak = &results.SoakOutcome{Verdicts: 4}
	if l := verdictLine(s); l != "Verdict: WARN — soak not judged: none of its 4 verdicts had anything to judge (below)" || VerdictLevel(s) != "WARN" {
		t.Fatalf("a soak that judged nothing: %q", l)
	}
}
