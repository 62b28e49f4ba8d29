package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/metrics"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenDir holds summaries, a sweep and a soak from real runs, and what
// the reports print of them; they pin the printed output while the code
// that prints it moves (go test -update rewrites them).
const goldenDir = "../testdata/golden"

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed:\n--- want\n%s\n--- got\n%s", name, want, got)
	}
}

func readFixture(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// The text, markdown and JSON summaries of real runs (open model with
// chaos, GET streams and hygiene; a 10-minute closed run; a soak's), and
// of a summary where every printed counter has its own value.
func TestGoldenSummaries(t *testing.T) {
	fixtures := map[string]*metrics.Summary{"printed": fixture.PrintedSummary()}
	for _, n := range []string{"run-open", "run-closed", "run-soak"} {
		var s metrics.Summary
		readFixture(t, n+".json", &s)
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
		golden(t, name+".txt", txt.Bytes())
		golden(t, name+".md", md.Bytes())
		golden(t, name+".summary.json", append(js, '\n'))
	}
}
