// Command mcpbench is a load generator and benchmarking tool for MCP
// servers over the Streamable HTTP transport. See `mcpbench --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/mcpbench/mcpbench/launch"
)

// Exit codes: launch's table (launch.ExitCode).
const (
	exitOK          = int(launch.ExitOK)
	exitFailed      = int(launch.ExitFailed)
	exitUsage       = int(launch.ExitUsage)
	exitResultsLost = int(launch.ExitResultsLost)
	exitThresholds  = int(launch.ExitThresholds)
	exitInterrupted = int(launch.ExitInterrupted)
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

// usageError is an exit-2 error, its settings named as flags (asFlags:
// %v or %w).
func usageError(format string, args ...any) error {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = asFlags(err) // settings named as flags, %v or %w
		}
	}
	return launch.Usagef(format, args...)
}

// withCode is err carrying code (launch.WithExitCode).
func withCode(code int, err error) error { return launch.WithExitCode(launch.ExitCode(code), err) }

// earlySigs, in a child of --processes, catches the stop signals from
// main's first line on, so that a signal to the whole group that comes
// while the child is still parsing its flags and preparing (tens of ms)
// waits for watchSignals instead of killing it by the default action
// (its segment would be lost); watchSignals reads it. Nil elsewhere.
var earlySigs chan os.Signal

func main() {
	if os.Getenv(launch.ChildEnv) == "1" {
		earlySigs = make(chan os.Signal, 4)
		signal.Notify(earlySigs, stopSignals...)
	}
	launch.AutoMemoryLimit() // without GOMEMLIMIT: a soft limit of 2 × the large-message budget (RSS within 3×; issue 33)
	root := newRootCmd()
	root.SetArgs(os.Args[1:])
	err := root.ExecuteContext(withArgv(context.Background(), os.Args))
	writeAllocs()
	if err == nil {
		os.Exit(exitOK)
	}
	if msg := cliText(err); msg != "" { // settings named as flags (settingflags.go)
		fmt.Fprintln(os.Stderr, "mcpbench:", msg)
	}
	os.Exit(exitCode(int(launch.CodeOf(err))))
}

// signals is a command's stop signals as launch takes them: ctx is
// cancelled by the first stop signal (Ctrl-C's SIGINT, SIGTERM, SIGHUP:
// the test ends gracefully, its results written; the command exits
// 128 + that signal's number), and each later one is a value on stopNow
// (launch.Spec.StopNow: a stop at once). The signals are read from a
// channel of our own until stop is called, never handed back to the
// default action in between: a process started with SIGINT ignored
// (nohup, or & in a non-interactive shell) had its second Ctrl-C ignored
// when signal.Stop restored that disposition, and a parent of
// --processes killed by the default action left its children running.
//
// A child of --processes (launch.ChildEnv) takes every stop signal after
// the first as the same graceful stop: a signal to the parent and its
// children at once (systemd's stop, a kill of all of them) reaches it
// directly and again through the parent, which is no second Ctrl-C. Its
// parent stops it at once with stopNowSignal.
func watchSignals(parent context.Context) (ctx context.Context, stopNow <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	now := make(chan struct{}, 1)
	child := os.Getenv(launch.ChildEnv) == "1"
	sigs := earlySigs // a child's: what came before this is in it (main)
	if sigs == nil {
		sigs = make(chan os.Signal, 4)
	}
	signal.Notify(sigs, stopSignals...)
	if child && stopNowSignal != nil {
		signal.Notify(sigs, stopNowSignal)
	}
	send := func() {
		select {
		case now <- struct{}{}:
		default: // one is pending
		}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			var sig os.Signal
			select {
			case <-quit:
				return
			case sig = <-sigs:
			}
			switch {
			case stopNowSignal != nil && sig == stopNowSignal:
				send()
			case ctx.Err() == nil:
				if n, ok := sig.(syscall.Signal); ok {
					caughtSignal.CompareAndSwap(0, int32(n))
				}
				cancel()
			case !child:
				send()
			}
		}
	}()
	return ctx, now, func() {
		signal.Stop(sigs)
		close(quit)
		<-done
		cancel()
	}
}

// hardExit is launch.Spec.Exit: the process exits with code (a stop at
// once whose results were not written in time).
func hardExit(code launch.ExitCode) { os.Exit(exitCode(int(code))) }

// argvKey is the context key of the command line the command was given
// (withArgv).
type argvKey struct{}

// withArgv is ctx carrying argv, the whole command line (the program,
// then the arguments cobra parses), as run.json records it (redacted).
func withArgv(ctx context.Context, argv []string) context.Context {
	return context.WithValue(ctx, argvKey{}, argv)
}

// argvOf is the command line ctx carries (withArgv); os.Args without one.
func argvOf(ctx context.Context) []string {
	if argv, ok := ctx.Value(argvKey{}).([]string); ok {
		return argv
	}
	return os.Args
}

// invokedAs is how the user ran mcpbench (launch.Invocation of argv[0]),
// for the commands its output says to run next.
func invokedAs(ctx context.Context) string { return launch.Invocation(argvOf(ctx)[0]) }
