// Package profiles holds the built-in workload profiles (YAML, embedded).
// Each file is a profile.Profile; `mcpbench run --profile NAME` selects one.
package profiles

import (
	"embed"
	"io/fs"
	"slices"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names lists the built-in profiles, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(out)
	return out
}

// Read returns the YAML of the built-in profile name (fs.ErrNotExist when
// there is none).
func Read(name string) ([]byte, error) {
	return files.ReadFile(name + ".yaml")
}
