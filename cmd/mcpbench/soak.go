package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/soak"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/spf13/cobra"
)

func newSoakCmd() *cobra.Command {
	f := &runFlags{}
	var checkpoint time.Duration
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "Run for a long time with session churn and light chaos; judge drift, leaks and session hygiene",
		Long: `soak runs a profile for a long time (hours), typically with session churn
(sessions created and deleted at a rate), low-probability resume chaos and
deleted-session checks, and judges it with pass/fail verdicts:

  latency drift      the interval p99's slope over time
  correctness drift  replay-ledger faults over time
  target leak        the target's RSS and open files per hour (--target-pid)
  session hygiene    a deleted session must answer 404

Results are written as the run goes (as for run), with checkpoint.json (the
summary so far) every --checkpoint and soak.json at the end. Ctrl-C gives the
verdicts of what ran. Exit codes: 0 every verdict passed, 99 one failed,
130 interrupted.

--processes N runs the soak as N child processes of mcpbench (segments
0/N … N-1/N, each with its own open-file limit and GC, writing
--out/segment-I with its own checkpoint.json), shows one merged progress
line, merges their results exactly into --out and judges the merged run:
the verdicts come from the merged intervals and summary. With --target-pid
the first child alone samples the target. Ctrl-C is forwarded to each
child; every child's results are kept and merged.`,
		Example: `  mcpbench soak --duration 10m                         # the soak-churn profile, embedded server
  mcpbench soak --url http://127.0.0.1:8080/mcp --target-pid "$(cat /tmp/mcpbench-serve.pid)" --duration 4h
  mcpbench soak --url http://127.0.0.1:8080/mcp --vus 20000 --rate 2000 --duration 4h --processes 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSoak(cmd, f, checkpoint)
		},
	}
	f.register(cmd)
	// A bare soak is the soak profile, not the 5 s smoke run.
	f.profile = "soak-churn"
	cmd.Flags().Lookup("profile").DefValue = "soak-churn"
	cmd.Flags().DurationVar(&checkpoint, "checkpoint", 0, "write the summary so far to checkpoint.json this often (default 1m; with --processes, each child's in --out/segment-I)")
	f.scale.registerScale(cmd)
	fl := cmd.Flags()
	fl.Lookup("processes").Usage = "run the soak as N child processes of mcpbench (segments 0/N … N−1/N, each with its own open-file limit and GC), show one merged progress line, merge their results into --out (each in --out/segment-I) and judge the merged run"
	fl.Lookup("start-delay").Usage = "with --processes: start the clock this long after the children are launched, for their set-up (default 5s + 1ms per session of a child)"
	for _, name := range []string{"segment", "segment-sequence", "start-at"} {
		fl.MarkHidden(name) // set by --processes for its children
	}
	return cmd
}

// runSoak runs soak: the test in this process (or, as a child of
// --processes, its segment), or as child processes (soak_processes.go).
func runSoak(cmd *cobra.Command, f *runFlags, checkpoint time.Duration) error {
	if err := f.scale.check(cmd.Flags().Changed); err != nil {
		return usageError("%v", err)
	}
	seg, startAt, err := f.scale.parse(time.Now())
	if err != nil {
		return usageError("%v", err)
	}
	if f.dryRun {
		return dryRun(cmd, f, func(p *profile.Profile) error {
			if cmd.Flags().Changed("checkpoint") {
				p.Soak = &profile.SoakSpec{Checkpoint: profile.Duration(checkpoint)}
			}
			return nil
		})
	}
	if f.scale.processes > 1 && f.noResults {
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
	if f.scale.processes > 1 {
		return runSoakProcesses(cmd, env, plan) // soak_processes.go
	}
	every := plan.Profile.Soak.CheckpointEvery()
	if cmd.Flags().Changed("checkpoint") {
		every = checkpoint
	}
	r, err := env.newRecording(plan, f.out)
	if err != nil {
		return err
	}
	opts := r.options(plan)
	opts.Checkpoint = every // the results directory writes checkpoint.json
	opts.Segment, opts.StartAt = seg, startAt
	opts.Sinks = append(env.junitSinks("soak"), opts.Sinks...) // before the results directory: written when summary.json is
	env.shareProcs(seg)
	sum, sk, runErr := soak.Run(interruptible(env.ctx), plan, opts)
	if sum == nil {
		env.writeJUnit(verdict.JUnitRun("soak", nil, runErr))
		return &exitError{code: exitFailed, err: runErr}
	}
	env.writeJUnit(verdict.JUnitRun("soak", sum, runErr), verdict.JUnitSoak(sk, sum.Started))
	r.settle(runErr)
	if err := printSoak(env, sum, sk); err != nil {
		return err
	}
	r.close()
	if !seg.Whole() { // a child of --processes: the parent judges the merged run
		return env.resultsExit(segmentExit(env.stderr, sum, runErr))
	}
	return env.resultsExit(soakExit(sum, sk, runErr))
}

// printSoak prints the summary and the verdicts (as --format says; JSON
// as report prints a soak: {"summary": …, "soak": …}), and writes
// soak.json.
func printSoak(env *env, sum *results.Summary, sk *results.Soak) error {
	judgeSoak(sum, sk)
	switch env.f.format {
	case "json":
		if err := writeJSON(env.stdout, struct {
			Summary *results.Summary `json:"summary"`
			Soak    *results.Soak    `json:"soak"`
		}{sum, sk}); err != nil {
			return err
		}
	case "markdown":
		if err := report.WriteMarkdown(env.stdout, sum); err != nil {
			return err
		}
		report.WriteSoakMarkdown(env.stdout, sk)
	default:
		if err := report.WriteTextIn(env.stdout, sum, env.shownOut); err != nil {
			return err
		}
		fmt.Fprintln(env.stdout)
		soak.WriteText(env.stdout, sk)
	}
	if env.shownOut != "" { // not when the run's results were removed (never started) or lost
		if err := soak.WriteFile(env.f.out, sk); err != nil {
			env.lose(env.f.out, err)
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
	if err := exitFor(sum, runErr); err != nil {
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitThresholds {
			return err
		}
	}
	if !sk.Pass {
		return &exitError{code: exitThresholds, err: errors.New("a soak verdict failed")}
	}
	return nil
}
