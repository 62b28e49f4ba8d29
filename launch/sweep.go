package launch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/sweep"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/mcpbench/mcpbench/workload"
)

// Sweep runs the test as 'mcpbench sweep': the profile's sweep section,
// each step recorded in its own results directory (step-NN), each run of
// a step in this process or (Spec.Processes) as child processes whose
// merged run is the step's. It prints the sweep's table and returns the
// outcome: ExitFailed when no step ran or one failed to run,
// ExitInterrupted, ExitResultsLost, ExitUsage for a bad sweep section.
//
// sweep --processes N: each run of each step is N child processes of
// mcpbench, each running segment I/N of the step's test (its resolved
// profile, sweep.StepProfile's, in their launch file) into
// step-NN/segment-I. The parent shows the children's merged progress,
// merges their results exactly into step-NN, and hands the step's
// collector (and the live outputs) the merged run
// (results.Merged.Replay): the step is judged from merged data as an
// in-process step is.
func (e *Test) Sweep() error {
	if e.spec.child != nil {
		return e.runSweepStepChild()
	}
	if e.spec.Out == "" {
		return Usagef("sweep needs a results directory (do not use %s)", setting.NoResults)
	}
	n := e.spec.Processes
	spec := e.profile.Sweep
	var started atomic.Bool // a step's run started: the sweep keeps its results (out.go)
	var runStep func(context.Context, sweep.StepRun, []results.Sink) (*results.Summary, error)
	if n > 1 {
		runStep = func(ctx context.Context, run sweep.StepRun, sinks []results.Sink) (*results.Summary, error) {
			sum, err := e.stepProcesses(run, sinks)
			if sum != nil && !errors.Is(err, workload.ErrSetup) {
				started.Store(true)
			}
			return sum, err
		}
	}
	newProg := func() *progress {
		return newProgress(e.stderr, e.spec.Quiet, e.spec.NoProgress, &workload.Plan{Warmup: spec.Warmup.D(), Window: spec.Step.D()})
	}
	sw, err := sweep.Run(interruptible(e.ctx), e.profile, sweep.Options{
		Dir:       e.spec.Out,
		Embedded:  e.embedded,
		Tool:      "mcpbench " + e.spec.Version,
		TargetPID: e.spec.TargetPID,
		Server:    e.serverStatsFunc(),
		RunInfo:   e.runInfo,
		Sinks: func(int, *workload.Plan) []results.Sink {
			if n > 1 {
				return e.live.sinks() // the children's merged progress is shown as they run
			}
			return append([]results.Sink{newProg(), startMark{&started}}, e.live.sinks()...)
		},
		OnStep:  func(st results.SweepStep) { e.reportStep(st); e.live.step(st) },
		RunStep: runStep,
		StopNow: e.now,
	})
	if sw != nil {
		e.writeJUnit(verdict.JUnitSweep(sw))
	}
	if sw == nil {
		var pe *profile.ProfileError
		if errors.As(err, &pe) {
			return WithExitCode(ExitUsage, err)
		}
		return WithExitCode(ExitFailed, err)
	}
	if !started.Load() { // no step could start (the server is down): no results
		why := cmp.Or(sw.Verdict.StoppedEarly, "no step ran")
		if err != nil {
			why = err.Error()
		}
		ee := e.abandonRun(errors.New(why))
		if sw.Verdict.Interrupted {
			return WithExitCode(ExitInterrupted, errors.New(why))
		}
		return ee
	}
	return e.sweepResult(sw, err)
}

// stepProcesses runs one run of a sweep's step as child processes
// (sweep.Options.RunStep): the step's profile in their launch file, its
// merged results written into run.Dir and replayed into sinks.
func (e *env) stepProcesses(run sweep.StepRun, sinks []results.Sink) (*results.Summary, error) {
	sp, err := sweep.StepProfile(e.profile, run.N, run.Value) // as sweep.Run built the step's plan
	if err != nil {
		return nil, WithExitCode(ExitUsage, err)
	}
	m, err := e.processes(childSweepStep, sp, run.Plan, run.Dir, time.Time{}, run.Settle)
	if err != nil {
		return nil, err
	}
	err = m.Write(run.Dir)
	m.Replay(sinks...)
	return m.Summary, cmp.Or(m.StepErr(), err)
}

// checkSweepShare refuses --processes when a step of the sweep would leave
// a process without a VU (see CheckShare).
func checkSweepShare(p *profile.Profile, n int) error {
	if p.Sweep == nil {
		return nil // sweep.Run says what is missing
	}
	spec := *p.Sweep
	spec.Defaults()
	for i, v := range spec.Values() {
		sp, err := sweep.StepProfile(p, i+1, v)
		if err != nil {
			return err
		}
		pl, err := compile(sp)
		if err != nil {
			return err
		}
		if err := CheckShare(pl, n); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, sweep.FormatLoad(v, spec.By), err)
		}
	}
	return nil
}

// runSweepStepChild is a child of sweep --processes: it runs its
// segment of one run of one step (the step's profile, from its launch
// file) into --out, and exits 0 when the run ran (a step that fails its
// SLO is judged by the parent), 130 interrupted, 1 when it could not
// start.
func (e *env) runSweepStepChild() error {
	plan, r, opts, err := e.segmentRun()
	if err != nil {
		return err
	}
	opts.SettleMemory = e.spec.child.Settle
	e.shareProcs(opts.Segment)
	sum, runErr := workload.Run(interruptible(e.ctx), plan, opts)
	r.settle(runErr)
	e.writeStatus(runErr)
	r.close()
	if err := e.resultsExit(nil); err != nil {
		return err // the parent sees exit 3 and this stderr
	}
	switch {
	case errors.Is(runErr, workload.ErrInterrupted) || sum != nil && sum.Interrupted:
		return WithExitCode(ExitInterrupted, errors.New("interrupted"))
	case runErr != nil:
		return WithExitCode(ExitFailed, runErr)
	}
	return nil
}

// reportStep prints a finished step's verdict line.
func (e *env) reportStep(st results.SweepStep) {
	verdict := "pass"
	switch {
	case st.Interrupted:
		verdict = "interrupted (a partial step, not judged)"
	case !st.Pass:
		verdict = "FAIL: " + strings.Join(st.Reasons, "; ")
	}
	fmt.Fprintf(e.stderr, "mcpbench: step %d (%s): achieved %.1f ops/s, p99 %.2f ms, errors %.2f%%: %s\n", st.N, sweep.FormatLoad(st.Value, st.By), st.Achieved, st.Latency.P99, 100*st.ErrorRate, verdict)
}

// sweepResult prints the sweep's table (or JSON) and maps it to the exit
// code.
func (e *env) sweepResult(sw *results.Sweep, err error) error {
	switch e.spec.Format {
	case "json":
		writeJSON(e.stdout, sw)
	case "markdown":
		report.WriteSweepMarkdown(e.stdout, sw)
	default:
		sweep.WriteText(e.stdout, sw)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) { // a results file could not be written: the sweep stopped there
		e.loseWhat(e.spec.Out, err, "the sweep stopped: the steps judged are those above, sweep.json and sweep.csv may be missing or behind")
	} else {
		fmt.Fprintf(e.stderr, "mcpbench: sweep results in %s (sweep.json, sweep.csv, %s); draw the capacity charts with: %s plot %s\n", e.spec.Out, filepath.Join(e.spec.Out, "step-NN"), cmp.Or(e.spec.Invocation, "mcpbench"), e.spec.Out)
	}
	return e.resultsExit(sweepExit(sw, err))
}

// sweepExit maps a sweep's outcome to the exit code.
func sweepExit(sw *results.Sweep, err error) error {
	switch {
	case sw.Verdict.Interrupted:
		return WithExitCode(ExitInterrupted, errors.New(sw.Verdict.StoppedEarly))
	case err != nil:
		return WithExitCode(ExitFailed, err)
	case len(sw.Results) == 0:
		return WithExitCode(ExitFailed, errors.New("no step ran"))
	}
	return nil
}
