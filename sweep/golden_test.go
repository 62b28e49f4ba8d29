package sweep

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/results"
)

// The sweep table of real sweeps: an older one without intervals, and a
// rate sweep of `mcpbench serve` with them, refinement steps and a knee
// capped at the highest load under the SLO.
func TestGoldenSweep(t *testing.T) {
	for _, name := range []string{"sweep", "sweep-ci"} {
		var sw results.Sweep
		fixture.Read(t, name+".json", &sw)
		var b bytes.Buffer
		if err := WriteText(&b, &sw); err != nil {
			t.Fatal(err)
		}
		fixture.Golden(t, name+".txt", b.Bytes())
	}
}

// Judging a recorded sweep's steps again gives the verdict it recorded.
func TestGoldenSweepJudgedAgain(t *testing.T) {
	var sw results.Sweep
	fixture.Read(t, "sweep-ci.json", &sw)
	v := Judge(sw.Results, sw.SLO)
	v.StoppedEarly = sw.Verdict.StoppedEarly
	if d := cmp.Diff(sw.Verdict, v); d != "" {
		t.Fatalf("verdict (-recorded +judged again):\n%s", d)
	}
}
