package soak

import (
	"path/filepath"

	"github.com/mcpbench/mcpbench/metrics"
)

// FileSoak is the soak's verdicts in its results directory.
const FileSoak = metrics.FileSoak

// WriteFile writes soak.json (atomically) into the soak's results
// directory; this package is its only writer.
func WriteFile(dir string, sk *metrics.Soak) error {
	return metrics.WriteJSON(filepath.Join(dir, FileSoak), sk)
}
