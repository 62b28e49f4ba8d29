package launch

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/soak"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/mcpbench/mcpbench/workload"
)

// Soak runs the test as 'mcpbench soak': in this process (or, as a
// child of --processes, its segment), or as Spec.Processes child
// processes whose merged run is judged; it prints the summary and the
// verdicts, writes soak.json and returns the outcome as Run does, with
// ExitThresholds when a soak verdict failed.
func (e *Test) Soak() error {
	if e.spec.Processes > 1 {
		return e.runProcesses()
	}
	seg, startAt, err := e.segmentAndStart()
	if err != nil {
		return err
	}
	plan, err := e.compile()
	if err != nil {
		return err
	}
	every := plan.Profile.Soak.CheckpointEvery()
	if e.spec.Checkpoint != 0 {
		every = e.spec.Checkpoint
	}
	r, err := e.newRecording(plan, e.spec.Out)
	if err != nil {
		return err
	}
	opts := r.options(plan)
	opts.Checkpoint = every // the results directory writes checkpoint.json
	opts.Segment, opts.StartAt = seg, startAt
	opts.Sinks = append(e.junitSinks("soak"), opts.Sinks...) // before the results directory: written when summary.json is
	e.shareProcs(seg)
	sum, sk, runErr := soak.Run(interruptible(e.ctx), plan, opts)
	if sum == nil {
		e.writeJUnit(verdict.JUnitRun("soak", nil, runErr))
		e.writeStatus(runErr)
		return WithExitCode(ExitFailed, runErr)
	}
	e.writeJUnit(verdict.JUnitRun("soak", sum, runErr), verdict.JUnitSoak(sk, sum.Started))
	r.settle(runErr)
	e.writeStatus(runErr)
	if err := e.printSoak(sum, sk); err != nil {
		return err
	}
	r.close()
	if !seg.Whole() { // a child of --processes: the parent judges the merged run
		return e.resultsExit(segmentExit(e.stderr, sum, runErr))
	}
	return e.resultsExit(soakExit(sum, sk, runErr))
}

// soakMerged is soak --processes once the children are done: the merged
// results written into the results directory and judged — the soak's
// collector is handed the merged intervals (results.Merged.Replay), so
// latency drift (the merged intervals' p99), correctness drift (their
// faulty streams and the merged GET-stream ledger), target leak (the
// first child's samples: it alone gets --target-pid) and session hygiene
// (the probes summed) are those of the whole test. checkpoint.json is
// per child (--out/segment-I): the summary so far of each segment.
func (e *env) soakMerged(m *Result, plan *workload.Plan, sum *results.Summary) error {
	out := e.spec.Out
	if err := m.Write(out); err != nil {
		e.lose(out, fmt.Errorf("the merged results: %w (the segments are in %s: mcpbench merge can merge them again)", err, filepath.Join(out, "segment-I")))
	}
	c := &soak.Collector{}
	m.Replay(append([]results.Sink{c}, e.live.sinks()...)...)
	sk := c.Soak(plan, sum)
	e.writeJUnit(verdict.JUnitRun("soak", sum, nil), verdict.JUnitSoak(sk, sum.Started))
	if err := e.printSoak(sum, sk); err != nil {
		return err
	}
	if e.shownOut != "" {
		fmt.Fprintf(e.stderr, "mcpbench: merged results of %d processes in %s (soak.json: the merged run's verdicts)\n", e.spec.Processes-m.Missing, out)
	}
	if err := mergedErrs(m); err != nil {
		return e.resultsExit(err)
	}
	return e.resultsExit(soakExit(sum, sk, nil))
}

// printSoak prints the summary and the verdicts (as Spec.Format says;
// JSON as report prints a soak: {"summary": …, "soak": …}), and writes
// soak.json.
func (e *env) printSoak(sum *results.Summary, sk *results.Soak) error {
	judgeSoak(sum, sk)
	switch e.spec.Format {
	case "json":
		if err := writeJSON(e.stdout, struct {
			Summary *results.Summary `json:"summary"`
			Soak    *results.Soak    `json:"soak"`
		}{sum, sk}); err != nil {
			return err
		}
	case "markdown":
		if err := report.WriteMarkdown(e.stdout, sum); err != nil {
			return err
		}
		report.WriteSoakMarkdown(e.stdout, sk)
	default:
		if err := report.WriteTextWith(e.stdout, sum, report.TextOptions{Dir: e.shownOut, Invocation: e.spec.Invocation}); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout)
		soak.WriteText(e.stdout, sk)
	}
	if e.shownOut != "" { // not when the run's results were removed (never started) or lost
		if err := soak.WriteFile(e.spec.Out, sk); err != nil {
			e.lose(e.spec.Out, err)
		}
	}
	return nil
}

// judgeSoak makes the run's one verdict: the soak's outcome goes into
// the summary (its verdict line counts a failed soak verdict, or none
// judged) and that line's word into the soak (its last line).
func judgeSoak(sum *results.Summary, sk *results.Soak) {
	sum.Soak = sk.Outcome()
	sk.Verdict = report.VerdictLevel(sum)
}

// soakExit maps a soak's outcome to the exit code: as run's (exitFor),
// and 99 when a verdict failed.
func soakExit(sum *results.Summary, sk *results.Soak, runErr error) error {
	if err := exitFor(sum, runErr); err != nil && !codeIs(err, ExitThresholds) {
		return err
	}
	if !sk.Pass {
		return WithExitCode(ExitThresholds, errors.New("a soak verdict failed"))
	}
	return nil
}
