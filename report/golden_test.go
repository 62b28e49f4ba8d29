package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/results"
)

// The text, markdown and JSON summaries of real runs (open model with
// chaos, GET streams and hygiene; a 10-minute closed run; a soak's), and
// of a summary where every printed counter has its own value.
func TestGoldenSummaries(t *testing.T) {
	fixtures := map[string]*results.Summary{"printed": fixture.PrintedSummary()}
	for _, n := range []string{"run-open", "run-closed", "run-soak"} {
		var s results.Summary
		fixture.Read(t, n+".json", &s)
		fixtures[n] = &s
	}
	for name, s := range fixtures {
		var txt, md bytes.Buffer
		if err := WriteText(&txt, s); err != nil {
			t.Fatal(err)
		}
		if err := WriteMarkdown(&md, s); err != nil {
			t.Fatal(err)
		}
		js, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		fixture.Golden(t, name+".txt", txt.Bytes())
		fixture.Golden(t, name+".md", md.Bytes())
		fixture.Golden(t, name+".summary.json", append(js, '\n'))
	}
}
