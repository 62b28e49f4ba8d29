package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// An aborted run says when and why, in text and markdown.
func TestAbortedSaysWhy(t *testing.T) {
	s := &results.Summary{Profile: "p", Aborted: true, StopReason: "aborted at 3.2s: p99<200ms failed (p99 412ms)"}
	var text, md bytes.Buffer
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "ABORTED: aborted at 3.2s: p99<200ms failed (p99 412ms) — results cover the run up to that point") {
		t.Errorf("text:\n%s", text.String())
	}
	if !strings.Contains(md.String(), "| **aborted** | aborted at 3.2s: p99<200ms failed (p99 412ms) |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}
