package launch

import (
	"errors"
	"fmt"
)

// ExitCode is an exit code of mcpbench (README "Exit codes";
// docs/troubleshooting.md): the one table, which the command exits with
// and a parent of --processes reads its children's exits by (k6's
// errext.ExitCode is the model).
type ExitCode uint8

// The exit codes.
const (
	ExitOK          ExitCode = 0
	ExitFailed      ExitCode = 1 // the run could not run, or no operation succeeded
	ExitUsage       ExitCode = 2 // bad flags or profile
	ExitResultsLost ExitCode = 3 // results could not be written (all or some: what was lost is printed); never success
	ExitThresholds  ExitCode = 99
	// ExitInterrupted: a stop signal ended the command, its results
	// written. The process exits 128 + the signal's number: 130 SIGINT
	// (Ctrl-C), 143 SIGTERM, 129 SIGHUP; 130 in the code.
	ExitInterrupted ExitCode = 130
)

// Interrupted reports whether code is the exit of an mcpbench stopped by
// a stop signal, its results written: 128 + SIGINT, SIGTERM or SIGHUP.
func Interrupted(code int) bool {
	return code == int(ExitInterrupted) || code == 128+1 || code == 128+15
}

// HasExitCode is an error that carries the exit code it ends the command
// with.
type HasExitCode interface {
	error
	ExitCode() ExitCode
}

// exitError is an error with its exit code.
type exitError struct {
	code ExitCode
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error      { return e.err }
func (e *exitError) ExitCode() ExitCode { return e.code }

// WithExitCode wraps err (which may be nil: an exit with nothing to say)
// with the exit code code; the code of the outermost wrapper wins
// (CodeOf).
func WithExitCode(code ExitCode, err error) error {
	return &exitError{code: code, err: err}
}

// Usagef is an ExitUsage error: bad flags or profile.
func Usagef(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// CodeOf is the exit code err ends the command with: ExitOK for nil, the
// code of the first HasExitCode in its chain, else ExitUsage (an error
// nothing gave a code: a flag cobra refused).
func CodeOf(err error) ExitCode {
	if err == nil {
		return ExitOK
	}
	var he HasExitCode
	if errors.As(err, &he) {
		return he.ExitCode()
	}
	return ExitUsage
}

// codeIs reports whether err carries code.
func codeIs(err error, code ExitCode) bool {
	var he HasExitCode
	return errors.As(err, &he) && he.ExitCode() == code
}
