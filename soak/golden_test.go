package soak

import (
	"bytes"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/results"
)

// The verdicts of a real soak.
func TestGoldenSoak(t *testing.T) {
	var sk results.Soak
	fixture.Read(t, "soak.json", &sk)
	var b bytes.Buffer
	if err := WriteText(&b, &sk); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "soak.txt", b.Bytes())
}
