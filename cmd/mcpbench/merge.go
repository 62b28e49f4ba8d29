package main

import (
	"path/filepath"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/spf13/cobra"
)

func newMergeCmd() *cobra.Command {
	var out string
	var thresholds []string
	var jsonOut, overwrite bool
	var format, junit string
	cmd := &cobra.Command{
		Use:   "merge DIR... --out DIR",
		Short: "Merge the results of a test's segments (--segment, --processes, k8s-job) into one results directory",
		Long: `merge combines the results directories of a test's execution segments into the
results directory of the whole test, so report, plot and compare read it as one
run:

  - histograms are merged exactly from each segment's files (histograms.hlog
    for the intervals, summary.hlog for the summary): the merged percentiles
    are those of one histogram of every sample, never averaged percentiles;
  - intervals are aligned by wall-clock time (segments started with one
    --start-at line up exactly);
  - counters, replay-ledger verdicts, sessions and gauges are summed; rates
    are counts over the union of the segments' measured windows;
  - each segment's own generator cost (CPU, cores, memory) is kept in the
    summary's segments;
  - the thresholds of the segments' profile and --threshold are checked on
    the merged run (a crossed one exits 99).

A segment given twice is refused (it would count twice); segments that do not
cover the whole test are merged with a note saying what share they are. A
segment that did not finish (no summary.json) is merged from its interval
files.`,
		Example: `  mcpbench run --segment 0/2 --start-at +10s --out results/a &
  mcpbench run --segment 1/2 --start-at +10s --out results/b
  mcpbench merge results/a results/b --out results/all
  mcpbench report results/all`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError("--out: the merged results directory is required")
			}
			for _, a := range args {
				if filepath.Clean(a) == filepath.Clean(out) {
					return usageError("--out %s is one of the directories merged", out)
				}
				if overwrite && launch.Within(a, out) {
					return usageError("--out %s holds %s, one of the directories merged: --overwrite would remove it", out, a)
				}
			}
			if err := launch.CheckJUnitPath(junit); err != nil {
				return usageError("%v", err)
			}
			if _, err := launch.CheckOut("--out", out, overwrite); err != nil {
				return err // before reading anything: claimed when the merge is done
			}
			var ths []verdict.Threshold
			for _, e := range thresholds {
				th, err := verdict.ParseThreshold(e)
				if err != nil {
					return usageError("--threshold: %v", err)
				}
				ths = append(ths, th)
			}
			return launch.MergeInto(args, out, overwrite, ths, format, junit, invokedAs(cmd.Context()), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the merged results directory (required)")
	cmd.Flags().StringArrayVar(&thresholds, "threshold", nil, "pass/fail criterion checked on the merged run (repeatable; added to the profile's), as run --threshold")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "empty a non-empty --out results directory first (without it, a non-empty --out is refused)")
	cmd.Flags().StringVar(&junit, "junit", "", "write the merged run's thresholds as JUnit XML to this file (one test case per threshold), as run --junit")
	addFormat(cmd.Flags(), &format, &jsonOut, "text", "json", "markdown")
	return cmd
}
