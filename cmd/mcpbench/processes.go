package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpbench/mcpbench/internal/procrun"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// run --processes N: the test as N child processes of mcpbench itself
// (internal/procrun), each running segment i/N with one --start-at into
// --out/segment-i. The parent starts the embedded reference server when
// there is no --url (the children share it), passes its signals on to
// procrun (the first cancels the launch's context, a second is
// procrun.Launch.StopNow), and writes and prints the merged results.

func runProcesses(cmd *cobra.Command, f *runFlags) error {
	n := f.scale.processes
	startAt, err := parseStartAt(f.scale.startAt, time.Now())
	if err != nil {
		return usageError("%v", err)
	}
	if f.noResults {
		return usageError("--processes merges its children's results into --out: leave --no-results out")
	}
	env, err := prepare(cmd, f, nil)
	if err != nil {
		return err
	}
	defer env.close()
	plan, err := env.compile()
	if err != nil {
		return err
	}
	if err := procrun.CheckShare(plan, n); err != nil {
		return usageError("%v", err)
	}
	if len(plan.Aborts) > 0 {
		return usageError("--abort-on-fail (abort_on_fail) with --processes: each process would judge only its own share of the load; run it in one process")
	}
	m, err := runChildren(env.ctx, env, plan, env.launch(childBase(cmd, env, procrun.ProcessDrop), f.out, plan, startAt))
	if err != nil {
		return err
	}
	if m.NeverStarted() {
		return env.abandonRun(fmt.Errorf("no process could start its run: %s", procrun.LastLine(m.Children[0].Stderr)))
	}
	sum := m.Summary
	sum.Warnings = verdict.Warnings(sum) // judged on the merged numbers
	if len(plan.Thresholds) > 0 {
		sum.Thresholds = verdict.CheckThresholds(sum, plan.Thresholds, m)
	}
	env.writeJUnit(verdict.JUnitRun("run", sum, nil))
	env.keepMerged(m.Merged, f.out)
	if err := env.print(sum); err != nil && !sum.Interrupted {
		return env.printFailed(err) // interrupted (SIGHUP: the terminal is gone): the exit says so
	}
	if env.shownOut != "" {
		fmt.Fprintf(env.stderr, "mcpbench: merged results of %d processes in %s\n", n-m.Missing, env.f.out)
	}
	if err := mergedErrs(m); err != nil {
		return env.resultsExit(err)
	}
	return env.resultsExit(exitFor(sum, nil))
}

// mergedErrs is exit 130 for an interrupted launch, else exit 1 for one
// that lacks some children's results; nil for neither.
func mergedErrs(m *procrun.Result) error {
	if err := m.InterruptedErr(); err != nil {
		return &exitError{code: exitInterrupted, err: err}
	}
	if err := m.MissingErr(); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}

// childBase is the command line every child of cmd shares: the
// subcommand, the user's flags less drop and, without --url, the
// parent's embedded server (the children share it).
func childBase(cmd *cobra.Command, env *env, drop map[string]bool) []string {
	base := append([]string{cmd.Name()}, procrun.SegmentArgs(cmd.Flags(), drop)...)
	if env.embedded {
		base = append(base, "--url="+env.profile.URL)
	}
	return base
}

// launch is the launch of the --processes children of the test plan
// (this executable with args: the subcommand, then the flags, which go
// in the children's environment, procrun.HideArgs) into dir, on the
// clock startAt (zero: --start-delay from now).
func (e *env) launch(args []string, dir string, plan *workload.Plan, startAt time.Time) procrun.Launch {
	n := e.f.scale.processes
	if startAt.IsZero() {
		startAt = time.Now().Add(procrun.StartDelay(e.f.scale.startDelay, plan, n))
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	base := e.childEnv() // the embedded-server marker (server_applies.go)
	if base == nil {
		base = os.Environ()
	}
	argv, environ := procrun.HideArgs(args, base) // the user's flags in the environment, not the world-readable argv
	return procrun.Launch{Exe: exe, Args: argv, Env: environ, N: n, Dir: dir, StartAt: startAt, Grace: plan.GracefulStop, TargetPID: e.f.targetPID,
		Stderr: e.stderr, Window: plan.Warmup + plan.Window}
}

// runChildren runs the launch l (procrun.Run) with the merged progress on
// stderr, a second Ctrl-C stopping the children at once, and the embedded
// server's counters in the merged summary. Errors are exit errors.
func runChildren(ctx context.Context, env *env, plan *workload.Plan, l procrun.Launch) (*procrun.Result, error) {
	again := make(chan struct{}, 1)
	prev := env.setHardStop(func() {
		select {
		case again <- struct{}{}:
		default: // one is pending
		}
	})
	defer env.setHardStop(prev)
	l.StopNow = again
	l.Progress = newProgress(env.stderr, env.f.quiet, env.f.noProgress, plan)
	m, err := procrun.Run(ctx, l)
	if err != nil {
		code := exitFailed
		switch {
		case errors.Is(err, procrun.ErrUsage):
			code = exitUsage
		case errors.Is(err, procrun.ErrResultsLost):
			code = exitResultsLost
		case errors.Is(err, procrun.ErrInterrupted):
			code = exitInterrupted
		}
		return nil, &exitError{code: code, err: err}
	}
	if err := m.LostErr(); err != nil {
		env.loseWhat(l.Dir, err, "the merged results lack what those processes could not write")
	}
	m.Summary.Embedded = env.embedded
	if stats := env.serverStatsFunc(); stats != nil {
		m.Summary.Server = stats()
	}
	return m, nil
}

// keepMerged writes the merged results into dir and hands them to the
// live outputs (--prometheus, --out-jsonl: the children have none).
func (e *env) keepMerged(m *results.Merged, dir string) {
	if err := m.Write(dir); err != nil {
		e.lose(dir, fmt.Errorf("the merged results: %w (the segments are in %s: mcpbench merge can merge them again)", err, filepath.Join(dir, "segment-I")))
	}
	if live := e.live.sinks(); len(live) > 0 {
		m.Replay(live...)
	}
}
