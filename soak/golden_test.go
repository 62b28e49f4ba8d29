package soak

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

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

// The verdicts of a real soak.
func TestGoldenSoak(t *testing.T) {
	var sk metrics.Soak
	readFixture(t, "soak.json", &sk)
	var b bytes.Buffer
	if err := WriteText(&b, &sk); err != nil {
		t.Fatal(err)
	}
	golden(t, "soak.txt", b.Bytes())
}
