package soak

import (
	"path/filepath"

	"github.com/mcpbench/mcpbench/results"
)

// FileSoak is the soak's verdicts in its results directory.
const FileSoak = results.FileSoak

// WriteFile writes soak.json (atomically) into the soak's results
// directory; this package is its only writer.
func WriteFile(dir string, sk *results.Soak) error {
	return results.WriteJSON(filepath.Join(dir, FileSoak), sk)
}
