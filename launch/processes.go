package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/mcpbench/mcpbench/workload"
)

// A test as N child processes of mcpbench itself (procs.go), each
// running segment i/N on one clock into DIR/segment-i: run's and soak's
// test (DIR: the results directory), and each run of a sweep's steps
// (DIR: step-NN). The parent starts the embedded reference server when
// there is no URL (the children share it), passes the stop signals on
// (the first cancels the launch's context, a second is
// Processes.StopNow), shows the merged progress, and merges what the
// children wrote. Each child gets the resolved profile in a launch file
// (childfile.go).

// processes runs plan's test (p: its profile) as e.spec.Processes
// children of kind into dir on the clock startAt (zero: StartDelay from
// now), with the merged progress on stderr, a second Ctrl-C stopping the
// children at once, and the embedded server's counters in the merged
// summary. Errors carry their exit code.
func (e *env) processes(kind string, p *profile.Profile, plan *workload.Plan, dir string, startAt time.Time, settle bool) (*Result, error) {
	n := e.spec.Processes
	file, err := e.childFileOf(kind, p, settle)
	if err != nil {
		return nil, WithExitCode(ExitFailed, err)
	}
	if startAt.IsZero() {
		startAt = time.Now().Add(StartDelay(e.spec.StartDelay, plan, n))
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	again := make(chan struct{}, 1)
	prev := e.setHardStop(func() {
		select {
		case again <- struct{}{}:
		default: // one is pending
		}
	})
	defer e.setHardStop(prev)
	l := Processes{Exe: exe, Args: []string{e.spec.Command, "--" + ChildFileFlag + "=-"}, Stdin: file, Env: e.childEnv(), N: n, Dir: dir,
		StartAt: startAt, Grace: plan.GracefulStop, TargetPID: e.spec.TargetPID, Stderr: e.stderr, Window: plan.Warmup + plan.Window,
		Status: true, StopNow: again, Progress: newProgress(e.stderr, e.spec.Quiet, e.spec.NoProgress, plan)}
	m, err := RunProcesses(e.ctx, l)
	if err != nil {
		code := ExitFailed
		switch {
		case errors.Is(err, ErrUsage):
			code = ExitUsage
		case errors.Is(err, ErrResultsLost):
			code = ExitResultsLost
		case errors.Is(err, ErrInterrupted):
			code = ExitInterrupted
		}
		return nil, WithExitCode(code, err)
	}
	if err := m.LostErr(); err != nil {
		e.loseWhat(l.Dir, err, "the merged results lack what those processes could not write")
	}
	m.Summary.Embedded = e.embedded
	if stats := e.serverStatsFunc(); stats != nil {
		m.Summary.Server = stats()
	}
	return m, nil
}

// runProcesses is run --processes and soak --processes: the test as
// child processes, its merged results written into the results directory
// and judged (thresholds; a soak's verdicts), printed, and the exit.
func (e *env) runProcesses() error {
	n := e.spec.Processes
	startAt, err := ParseStartAt(e.spec.StartAt, time.Now())
	if err != nil {
		return WithExitCode(ExitUsage, err)
	}
	plan, err := e.compile()
	if err != nil {
		return err
	}
	kind := childRun
	if e.spec.Command == "soak" {
		kind = childSoak
	}
	m, err := e.processes(kind, e.profile, plan, e.spec.Out, startAt, false)
	if err != nil {
		return err
	}
	if m.NeverStarted() {
		return e.abandonRun(fmt.Errorf("no process could start its run: %s", LastLine(m.Children[0].Stderr)))
	}
	sum := e.judgeMerged(m, plan)
	if kind == childSoak {
		return e.soakMerged(m, plan, sum)
	}
	e.writeJUnit(verdict.JUnitRun("run", sum, nil))
	e.keepMerged(m.Merged, e.spec.Out)
	if err := e.print(sum); err != nil && !sum.Interrupted {
		return e.printFailed(err) // interrupted (SIGHUP: the terminal is gone): the exit says so
	}
	if e.shownOut != "" {
		fmt.Fprintf(e.stderr, "mcpbench: merged results of %d processes in %s\n", n-m.Missing, e.spec.Out)
	}
	if err := mergedErrs(m); err != nil {
		return e.resultsExit(err)
	}
	return e.resultsExit(exitFor(sum, nil))
}

// mergedErrs is exit 130 for an interrupted launch, else exit 1 for one
// that lacks some children's results; nil for neither.
func mergedErrs(m *Result) error {
	if err := m.InterruptedErr(); err != nil {
		return WithExitCode(ExitInterrupted, err)
	}
	if err := m.MissingErr(); err != nil {
		return WithExitCode(ExitFailed, err)
	}
	return nil
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

// formatStep names a sweep step's run for messages.
func formatStep(n int, v float64) string {
	return strconv.Itoa(n) + ":" + strconv.FormatFloat(v, 'g', -1, 64)
}

// judgeMerged is the merged summary of m, judged on the merged numbers:
// its warnings, and plan's thresholds.
func (e *env) judgeMerged(m *Result, plan *workload.Plan) *results.Summary {
	sum := m.Summary
	sum.Warnings = verdict.Warnings(sum) // judged on the merged numbers
	if len(plan.Thresholds) > 0 {
		sum.Thresholds = verdict.CheckThresholds(sum, plan.Thresholds, m.Merged)
	}
	return sum
}
