// Command mcpbench is a load generator and benchmarking tool for MCP
// servers over the Streamable HTTP transport. See `mcpbench --help`.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/procrun"
)

// Exit codes (README "Exit codes"; docs/troubleshooting.md).
const (
	exitOK          = 0
	exitFailed      = 1 // the run could not run, or no operation succeeded
	exitUsage       = 2 // bad flags or profile
	exitResultsLost = 3 // results could not be written (all or some: what was lost is printed); never success
	exitThresholds  = 99
	// exitInterrupted: a stop signal ended the command, its results
	// written. The process exits 128 + the signal's number (exitCode):
	// 130 SIGINT (Ctrl-C), 143 SIGTERM, 129 SIGHUP; 130 in the code.
	exitInterrupted = 130
)

// caughtSignal is the number of the first stop signal the command
// caught (watchSignals; 0: none).
var caughtSignal atomic.Int32

// exitCode is the process's exit code for code: exitInterrupted becomes
// 128 + the stop signal caught (SIGINT when none was: a cancelled
// context).
func exitCode(code int) int {
	if code == exitInterrupted {
		if n := caughtSignal.Load(); n > 0 {
			return 128 + int(n)
		}
	}
	return code
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return cliText(e.err) }
func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = asFlags(err) // settings named as flags, %v or %w
		}
	}
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// earlySigs, in a child of --processes, catches the stop signals from
// main's first line on, so that a signal to the whole group that comes
// while the child is still parsing its flags and preparing (tens of ms)
// waits for watchSignals instead of killing it by the default action
// (its segment would be lost); watchSignals reads it. Nil elsewhere.
var earlySigs chan os.Signal

func main() {
	if os.Getenv(procrun.ChildEnv) == "1" {
		earlySigs = make(chan os.Signal, 4)
		signal.Notify(earlySigs, stopSignals...)
	}
	driver.AutoMemoryLimit() // without GOMEMLIMIT: a soft limit of 2 × the large-message budget (RSS within 3×; issue 33)
	args, err := childArgs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", cliText(err))
		os.Exit(exitUsage)
	}
	root := newRootCmd()
	root.SetArgs(args)
	err = root.Execute()
	writeAllocs()
	if err == nil {
		os.Exit(exitOK)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(os.Stderr, "mcpbench:", cliText(ee.err))
		}
		os.Exit(exitCode(ee.code))
	}
	fmt.Fprintln(os.Stderr, "mcpbench:", cliText(err))
	os.Exit(exitUsage)
}

// childArgs are the command's arguments: os.Args[1:], with the flags a
// --processes child was given in its environment in place
// (procrun.ExpandFlagsFromEnv), those variables unset (nothing this
// process starts inherits them) and os.Args set to the whole command
// line, as run.json records it (redacted).
func childArgs() ([]string, error) {
	args, names, err := procrun.ExpandFlagsFromEnv(os.Args[1:], os.LookupEnv)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		os.Unsetenv(n)
	}
	if names != nil {
		os.Args = append(os.Args[:1:1], args...)
	}
	return args, nil
}
