package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoRun is Invocation's answer for a binary that `go run` built.
const GoRun = "go run ./cmd/mcpbench"

// Invocation is how the user ran mcpbench, from arg0 (os.Args[0]), for
// Spec.Invocation and the commands the output tells them to run next:
//   - GoRun for a binary `go run` built into its temporary directory
//     ($GOTMPDIR or the system's, .../go-build*/b*/exe/NAME): that file is
//     gone after the run, and not on $PATH;
//   - "mcpbench" when arg0 is a path (./mcpbench, /usr/local/bin/mcpbench)
//     to the file that `mcpbench` on $PATH finds too;
//   - arg0 as typed otherwise: a path, or a bare name found on $PATH;
//   - "mcpbench" for an empty arg0.
//
// It reads $PATH and stats files; it never fails.
func Invocation(arg0 string) string {
	switch {
	case arg0 == "":
		return "mcpbench"
	case goRunBuilt(arg0):
		return GoRun
	case !strings.ContainsRune(arg0, os.PathSeparator) && !strings.ContainsRune(arg0, '/'):
		return arg0
	}
	if p, err := exec.LookPath("mcpbench"); err == nil {
		a, errA := os.Stat(arg0)
		b, errB := os.Stat(p)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return "mcpbench"
		}
	}
	return arg0
}

// goRunBuilt reports whether path is where `go run` puts the binary it
// builds: DIR/go-buildN/bM/exe/NAME.
func goRunBuilt(path string) bool {
	exe := filepath.Dir(path)
	work := filepath.Dir(filepath.Dir(exe))
	return filepath.Base(exe) == "exe" && strings.HasPrefix(filepath.Base(work), "go-build")
}
