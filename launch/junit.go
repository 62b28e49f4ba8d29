package launch

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// --junit FILE: the verdicts as JUnit XML (verdict/junit.go builds and
// writes it; the command says when).

// CheckJUnitPath refuses a --junit file whose directory does not exist,
// or that is a directory, before anything runs.
func CheckJUnitPath(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s is a directory: give a file name, e.g. %s", setting.JUnit, path, filepath.Join(path, "mcpbench-junit.xml"))
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s %s: directory %s does not exist: create it first, or write the file elsewhere", setting.JUnit, path, dir)
	}
	return nil
}

// junitSinks is the --junit sink of an in-process run of kind ("run",
// "soak"): it writes the file as soon as the run's measured part ends,
// so a second Ctrl-C keeps it (first among the sinks: the file is
// there once summary.json is). None without --junit.
func (e *env) junitSinks(kind string) []results.Sink {
	if e.spec.Live.JUnit == "" {
		return nil
	}
	return []results.Sink{verdict.NewJUnitFile(e.spec.Live.JUnit, kind)}
}

// writeJUnit writes suites to --junit (nothing without it); a failure is
// printed, and does not change the exit code.
func (e *env) writeJUnit(suites ...verdict.JUnitSuite) {
	if e.spec.Live.JUnit == "" {
		return
	}
	if err := verdict.WriteJUnit(e.spec.Live.JUnit, suites...); err != nil {
		e.lostMu.Lock()
		e.lost = append(e.lost, fmt.Sprintf("%s %s: %v", setting.JUnit, e.spec.Live.JUnit, err))
		e.lostMu.Unlock()
		fmt.Fprintf(e.stderr, "mcpbench: results lost: writing %s %s failed: %v\n", setting.JUnit, e.spec.Live.JUnit, err)
	}
}
