package report

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/results"
)

// The summary says how many resumes went to a rel="stream" URL (SEP-1335),
// how many streams were resumed through one and how many links were
// refused, in the resumes, ledger and storm blocks; none of it when no
// link was seen.
func TestSummarySaysStreamLinks(t *testing.T) {
	var s results.Summary
	fixture.Read(t, "run-closed.json", &s)
	plain := textOf(t, &s, "")
	if strings.Contains(plain, "rel=\"stream\"") || strings.Contains(plain, "SEP-1335") {
		t.Fatalf("stream links printed with none seen:\n%s", plain)
	}
	s.All.Resumes = &results.ResumeSummary{Attempts: 12, Accepted: 12, ViaLink: 11}
	if s.All.Ledger == nil {
		t.Fatal("fixture has no ledger")
	}
	s.All.Ledger.ViaLink, s.All.Ledger.LinksRefused = 10, 2
	s.Storms = []results.Wave{{AtS: 5, Attempts: 40, ViaLink: 9}}
	text := textOf(t, &s, "")
	for _, want := range []string{
		"  11 of these resume attempts went to the stream's rel=\"stream\" URL (SEP-1335), not the MCP endpoint\n",
		"  stream links (SEP-1335): 10 streams resumed through their rel=\"stream\" URL; 2 links refused (another origin: never followed)\n",
		"  9 of the wave's attempts went to a stream's rel=\"stream\" URL (SEP-1335)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
}
