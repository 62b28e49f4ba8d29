package report

import (
	"strings"

	"github.com/mcpbench/mcpbench/results"
)

// VerdictLevel is the word of s's verdict line: OK, WARN, FAIL or NONE.
// A soak sets s.Soak first, so that its verdicts count (its one verdict:
// the line the report starts with and the soak's last line say the same).
func VerdictLevel(s *results.Summary) string {
	w, _, _ := strings.Cut(strings.TrimPrefix(verdictLine(s), "Verdict: "), " ")
	return w
}
