// Command mcpbench is a load generator and benchmarking tool for MCP
// servers over the Streamable HTTP transport. See `mcpbench --help`.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/mcpbench/mcpbench/driver"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1   // the run could not run, or no operation succeeded
	exitUsage       = 2   // bad flags or profile
	exitThresholds  = 99  // a threshold was crossed (k6's convention)
	exitInterrupted = 130 // Ctrl-C (128 + SIGINT)
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	driver.AutoMemoryLimit() // without GOMEMLIMIT: a soft limit of 2 × the large-message budget (RSS within 3×; issue 33)
	root := newRootCmd()
	err := root.Execute()
	writeAllocs()
	if err == nil {
		os.Exit(exitOK)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(os.Stderr, "mcpbench:", ee.err)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "mcpbench:", err)
	os.Exit(exitUsage)
}
