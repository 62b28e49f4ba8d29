package sweep

import (
	"bytes"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/metrics"
)

// The sweep table of a real sweep.
func TestGoldenSweep(t *testing.T) {
	var sw metrics.Sweep
	fixture.Read(t, "sweep.json", &sw)
	var b bytes.Buffer
	if err := WriteText(&b, &sw); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "sweep.txt", b.Bytes())
}
