// Package testenv says which tests run by default. `go test ./...` runs
// every unit test and at least one planted-fault and one clean test of
// each verdict; the long end-to-end suites — every shell example of the
// docs, whole sweeps, tests that start mcpbench as real processes beside
// each other — run too when MCPBENCH_LONG=1 is set, as .ci/run does.
// Imported only by tests.
package testenv

import (
	"os"
	"testing"
)

// LongEnv is the environment variable that turns the long suites on.
const LongEnv = "MCPBENCH_LONG"

// IsLong reports whether the long end-to-end suites run (MCPBENCH_LONG set
// to anything but "" or "0").
func IsLong() bool { v := os.Getenv(LongEnv); return v != "" && v != "0" }

// Long skips t unless the long suites run: call it first in a long
// end-to-end test. Safe for concurrent use.
func Long(t testing.TB) {
	t.Helper()
	if !IsLong() {
		t.Skip("a long end-to-end test: MCPBENCH_LONG=1 runs it (.ci/run does)")
	}
}
