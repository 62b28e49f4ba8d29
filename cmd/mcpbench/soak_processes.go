package main

import (
	"fmt"
	"path/filepath"

	"github.com/mcpbench/mcpbench/internal/procrun"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/soak"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// soak --processes N: the soak's test as N child processes of mcpbench
// ("mcpbench soak" with the user's flags, each on segment I/N into
// --out/segment-I, as run --processes starts its children). The parent
// shows their merged progress, merges their results exactly into --out
// and judges the merged run: the soak's collector is handed the merged
// intervals (results.Merged.Replay), so latency drift (the merged
// intervals' p99), correctness drift (their faulty streams and the merged
// GET-stream ledger), target leak (the first child's samples: it alone
// gets --target-pid) and session hygiene (the probes summed) are those of
// the whole test. checkpoint.json is per child (--out/segment-I): the
// summary so far of each segment.

// runSoakProcesses runs the soak as child processes, then prints and
// writes the merged run and its verdicts.
func runSoakProcesses(cmd *cobra.Command, env *env, plan *workload.Plan) error {
	f := env.f
	n := f.scale.processes
	if err := procrun.CheckShare(plan, n); err != nil {
		return usageError("%v", err)
	}
	startAt, err := parseStartAt(f.scale.startAt, env.started)
	if err != nil {
		return usageError("%v", err)
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
		sum.Thresholds = verdict.CheckThresholds(sum, plan.Thresholds, m.Merged)
	}
	if err := m.Write(f.out); err != nil {
		env.lose(f.out, fmt.Errorf("the merged results: %w (the segments are in %s: mcpbench merge can merge them again)", err, filepath.Join(f.out, "segment-I")))
	}
	c := &soak.Collector{}
	m.Replay(append([]results.Sink{c}, env.live.sinks()...)...)
	sk := c.Soak(plan, sum)
	env.writeJUnit(verdict.JUnitRun("soak", sum, nil), verdict.JUnitSoak(sk, sum.Started))
	if err := printSoak(env, sum, sk); err != nil {
		return err
	}
	if env.shownOut != "" {
		fmt.Fprintf(env.stderr, "mcpbench: merged results of %d processes in %s (soak.json: the merged run's verdicts)\n", n-m.Missing, f.out)
	}
	if err := mergedErrs(m); err != nil {
		return env.resultsExit(err)
	}
	return env.resultsExit(soakExit(sum, sk, nil))
}
