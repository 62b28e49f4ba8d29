package main

import (
	"github.com/mcpbench/mcpbench/launch"
	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	var format string
	var spectrum bool
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Print the report of a run, a sweep or a soak from its results directory (text, markdown or JSON)",
		Long: `report prints a finished run's report from its results directory alone: the same
summary the run printed, then (text) the detailed percentile spectrum of every
op from histograms.hlog. If summary.json is missing (the run crashed or was
killed), the summary is rebuilt from intervals.csv and histograms.hlog.

A sweep directory (sweep.json) prints the step table and the verdict with
their confidence intervals; a soak directory (soak.json) the run's report
followed by the soak's verdicts. JSON prints sweep.json for a sweep, and
{"summary": …, "soak": …} for a soak.`,
		Example: `  mcpbench report results/20261121-060320-smoke
  mcpbench report results/run1 --format markdown > run1.md
  mcpbench report results/run1 --format json | jq .all.response_time_ms
  mcpbench report results/cap                      # a sweep
  mcpbench report results/soak --format markdown   # a soak`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return launch.Report(cmd.OutOrStdout(), args[0], format, spectrum, invokedAs(cmd.Context()))
		},
	}
	format = "text"
	cmd.Flags().VarP(&formatValue{format: &format, allowed: []string{"text", "markdown", "json"}}, "format", "f", "output format: text, markdown or json")
	cmd.Flags().BoolVar(&spectrum, "spectrum", true, "text: append the percentile spectrum of each op")
	return cmd
}

func newCompareCmd() *cobra.Command {
	var failIf []string
	var jsonOut, force bool
	var format, junit string
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs, sweeps or soaks; says what is beyond the noise; --fail-if limits turn a regression into exit 99",
		Long: `compare prints two runs side by side. It opens with a headline on all ops
together: throughput, dropped arrivals, errors, p50, p90 and p99, each with
its direction, its size and whether it is beyond the noise, by a test right
for the quantity (beyond when p < 0.05): Welch's t test on the per-interval
throughput (intervals.csv), the two-proportion z test on dropped arrivals
and on errors, a Mann–Whitney U test of the per-interval percentiles. Then
op by op: rate, error rate, response-time percentiles, service time and
faulty streams, with B − A and the relative change. A and B are results
directories (or summary.json files, which have no intervals to test).

Runs that differ in profile, load model, offered rate, VUs (max VUs for the
open model), stages, protocol or target are not like-for-like: compare names
the differences and refuses (exit 2) unless --force, which compares them
anyway under a NOT LIKE-FOR-LIKE line.

Two sweep directories compare their verdicts — maximum sustainable rate,
highest load under the SLO, the SLO's bracket (last passing load, first
failing load) and the knee with its 95 % interval — and p99 at each load
both ran with the steps' intervals; a difference is beyond the noise when
the two intervals (or brackets) do not overlap. Sweeps of a different
profile, dimension, protocol, target, step length or SLO are refused unless
--force. Two soak directories compare as runs, then their verdicts side by
side.

--fail-if sets a regression limit on the change from A to B, e.g. 'p99>+10%'
(p99 of all ops grew more than 10 %), 'tools/call:p99>+5ms', 'p(95)>+10%',
'rate<-5%', 'error_rate>+0.5pp' (percentage points), 'get:lost>+0'. It reads
the same metrics as run --threshold (see run --help): any percentile (from
histograms.hlog when the summary does not keep it), every counter the
summary prints, with the scopes OP:, post:, get:, sessions:. For sweeps the
figures are max_sustainable_rate, max_load, slo_crossing, knee and knee_rate
('max_sustainable_rate<-5%'). Every limit is printed, passing or crossed; a
crossed one exits 99; an unknown metric exits 2 listing the valid names.`,
		Example: `  mcpbench compare results/v1.2 results/v1.3
  mcpbench compare results/main results/pr --fail-if 'p99>+10%' --fail-if 'rate<-5%'
  mcpbench compare results/cap-v1 results/cap-v2 --fail-if 'max_sustainable_rate<-5%'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return launch.Compare{A: args[0], B: args[1], FailIf: failIf, JSON: jsonOut, Force: force, JUnit: junit,
				Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}.Run()
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "compare runs (or sweeps) that are not like-for-like (different profile or resolved profile (run.json spec: op arguments, mix, …), model, offered rate, VUs, stages, protocol or target), under a NOT LIKE-FOR-LIKE line")
	cmd.Flags().StringArrayVar(&failIf, "fail-if", nil, "regression limit (repeatable), e.g. 'p99>+10%', 'rate<-5%', 'error_rate>+0.5pp'; sweeps: 'max_sustainable_rate<-5%'")
	cmd.Flags().StringVar(&junit, "junit", "", "write the --fail-if limits as JUnit XML to this file (one test case per limit and op), as run --junit")
	addFormat(cmd.Flags(), &format, &jsonOut, "text", "json")
	return cmd
}
