package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/procrun"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/sweep"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// sweep --processes N: each run of each step is N child processes of
// mcpbench, each running segment I/N of the step's test into
// step-NN/segment-I. A child is "mcpbench sweep" with the user's own flags
// and the hidden --sweep-step N:VALUE, so it builds the step's profile
// through the sweep's own code (the flags applied, then
// sweep.StepProfile), runs that one run and exits. The parent shows the
// children's merged progress, merges their results exactly into step-NN,
// and hands the step's collector (and the live outputs) the merged run
// (results.Merged.Replay): the step is judged from merged data as an
// in-process step is.

// sweepChildDrop are the flags a sweep's children do not get: those of
// run's children (procrun.ProcessDrop) and the one each child is given its own
// value of.
var sweepChildDrop = func() map[string]bool {
	m := maps.Clone(procrun.ProcessDrop)
	m["sweep-step"] = true
	return m
}()

// sweepProcesses runs the runs of a sweep's steps as child processes.
type sweepProcesses struct {
	env *env
	cmd *cobra.Command
}

// runStep implements sweep.Options.RunStep.
func (sp *sweepProcesses) runStep(ctx context.Context, run sweep.StepRun, sinks []results.Sink) (*results.Summary, error) {
	args := append(childBase(sp.cmd, sp.env, sweepChildDrop), "--sweep-step="+formatSweepStep(run.N, run.Value))
	m, err := runChildren(ctx, sp.env, run.Plan, sp.env.launch(args, run.Dir, run.Plan, time.Time{}))
	if err != nil {
		return nil, err
	}
	err = m.Write(run.Dir)
	m.Replay(sinks...)
	return m.Summary, cmp.Or(m.StepErr(), err)
}

// formatSweepStep and parseSweepStep are --sweep-step's N:VALUE (the
// value exactly: a refinement's load is any number).
func formatSweepStep(n int, v float64) string {
	return strconv.Itoa(n) + ":" + strconv.FormatFloat(v, 'g', -1, 64)
}

func parseSweepStep(s string) (int, float64, error) {
	a, b, ok := strings.Cut(s, ":")
	n, err1 := strconv.Atoi(a)
	v, err2 := strconv.ParseFloat(b, 64)
	if !ok || err1 != nil || err2 != nil || n < 1 || v < 0 {
		return 0, 0, fmt.Errorf("--sweep-step %q: want STEP:LOAD, e.g. 2:500", s)
	}
	return n, v, nil
}

// checkSweepShare refuses --processes when a step of the sweep would leave
// a process without a VU (see procrun.CheckShare).
func checkSweepShare(p *profile.Profile, n int) error {
	spec := *p.Sweep
	spec.Defaults()
	for i, v := range spec.Values() {
		sp, err := sweep.StepProfile(p, i+1, v)
		if err != nil {
			return err
		}
		pl, err := workload.Compile(sp, nil)
		if err != nil {
			return err
		}
		if err := procrun.CheckShare(pl, n); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, sweep.FormatLoad(v, spec.By), err)
		}
	}
	return nil
}

// stepChildProfile is the profile of the step --sweep-step names, built
// from the sweep's profile (the flags applied) as sweep.Run builds it;
// settle: a sessions sweep (memory read settled).
func stepChildProfile(p *profile.Profile, stepOf string) (sp *profile.Profile, settle bool, err error) {
	n, v, err := parseSweepStep(stepOf)
	if err != nil {
		return nil, false, err
	}
	sp, err = sweep.StepProfile(p, n, v)
	if err != nil {
		return nil, false, err
	}
	return sp, p.Sweep.By == results.SweepBySessions, nil
}

// runSweepStepChild is a child of sweep --processes: it runs one run of
// one step (--sweep-step) as its segment, into --out, and exits 0 when
// the run ran (a step that fails its SLO is judged by the parent), 130
// interrupted, 1 when it could not start.
func runSweepStepChild(cmd *cobra.Command, f *runFlags, sf *sweepFlags) error {
	seg, startAt, err := f.scale.parse(time.Now())
	if err != nil {
		return usageError("%v", err)
	}
	if f.out == "" || f.noResults {
		return usageError("--sweep-step writes the step's run into --out")
	}
	set := cmd.Flags().Changed
	env, err := prepare(cmd, f, func(p *profile.Profile) error { return sf.apply(p, set) })
	if err != nil {
		return err
	}
	defer env.close()
	sp, settle, err := stepChildProfile(env.profile, sf.stepOf)
	if err != nil {
		return usageError("%v", err)
	}
	env.profile = sp
	plan, err := env.compile()
	if err != nil {
		return err
	}
	r, err := env.newRecording(plan, f.out)
	if err != nil {
		return err
	}
	opts := r.options(plan)
	opts.Segment, opts.StartAt, opts.SettleMemory = seg, startAt, settle
	env.shareProcs(seg)
	sum, runErr := workload.Run(interruptible(env.ctx), plan, opts)
	r.settle(runErr)
	r.close()
	if err := env.resultsExit(nil); err != nil {
		return err // the parent sees exit 3 and this stderr
	}
	switch {
	case errors.Is(runErr, workload.ErrInterrupted) || sum != nil && sum.Interrupted:
		return &exitError{code: exitInterrupted, err: errors.New("interrupted")}
	case runErr != nil:
		return &exitError{code: exitFailed, err: runErr}
	}
	return nil
}
