package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpbench/mcpbench/soak"
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
130 interrupted.`,
		Example: `  mcpbench soak --duration 10m                         # the soak-churn profile, embedded server
  mcpbench soak --url http://127.0.0.1:8080/mcp --target-pid "$(cat /tmp/mcpbench-serve.pid)" --duration 4h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := prepare(cmd, f, nil)
			if err != nil {
				return err
			}
			defer env.close()
			plan, err := env.compile()
			if err != nil {
				return err
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
			sum, sk, runErr := soak.Run(interruptible(env.ctx), plan, opts)
			if sum == nil {
				return &exitError{code: exitFailed, err: runErr}
			}
			if err := env.print(sum); err != nil {
				return err
			}
			fmt.Fprintln(env.stdout)
			soak.WriteText(env.stdout, sk)
			if f.out != "" {
				if err := soak.WriteFile(f.out, sk); err != nil {
					fmt.Fprintf(env.stderr, "mcpbench: writing soak.json: %v\n", err)
				}
			}
			r.close()
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
		},
	}
	f.register(cmd)
	// A bare soak is the soak profile, not the 5 s smoke run.
	f.profile = "soak-churn"
	cmd.Flags().Lookup("profile").DefValue = "soak-churn"
	cmd.Flags().DurationVar(&checkpoint, "checkpoint", 0, "write the summary so far to checkpoint.json this often (default 1m)")
	return cmd
}
