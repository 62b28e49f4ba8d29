package main

import (
	"time"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/profile"
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
// --processes, its segment), or as child processes (launch.Test.Soak).
func runSoak(cmd *cobra.Command, f *runFlags, checkpoint time.Duration) error {
	if err := f.scale.check(cmd.Flags().Changed); err != nil {
		return usageError("%v", err)
	}
	var mod func(*profile.Profile) error
	if f.dryRun && cmd.Flags().Changed("checkpoint") {
		mod = func(p *profile.Profile) error {
			p.Soak = &profile.SoakSpec{Checkpoint: profile.Duration(checkpoint)}
			return nil
		}
	}
	return runTestWith(cmd, f, mod, func(s *launch.Spec) {
		if cmd.Flags().Changed("checkpoint") {
			s.Checkpoint = checkpoint
		}
	}, (*launch.Test).Soak)
}
