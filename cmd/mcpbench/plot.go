package main

import (
	"github.com/mcpbench/mcpbench/launch"
	"github.com/spf13/cobra"
)

// plotFlags are the flags of `mcpbench plot`.
type plotFlags struct {
	format, out, html string
	perOp             bool
}

func newPlotCmd() *cobra.Command {
	f := &plotFlags{}
	cmd := &cobra.Command{
		Use:   "plot DIR",
		Short: "Draw the charts and the HTML report of a results directory",
		Long: `plot reads a results directory written by "mcpbench run --out DIR" and draws
its charts — response time and throughput over time, the percentile
spectrum per op, throughput and errors, resumes and reconnects, time to
resume — as PNG and/or SVG, and writes one self-contained HTML report (run
metadata, summary tables, thresholds, storms, replay ledger, every chart as
inline SVG; no JavaScript, no network).

It also draws the run's VUs, sessions and GET streams, the CPU, memory and
open files of mcpbench and (with --target-pid) the target, and latency per
op over time. A chart with nothing to show (no resumes, say) is skipped and
said so; every chart has a caption that says what to look at.

For a sweep directory ("mcpbench sweep --out DIR") it draws the capacity
charts — latency percentiles (p99 with its 95 % interval), achieved
throughput and error rate against the load offered, with the SLO, the knee
and the highest load under the SLO marked; CPU, memory and open files per
step; memory per session with its fit (session sweeps) — and the sweep's
HTML report. For a soak directory ("mcpbench soak --out DIR") the run's
charts, the soak's trend chart (the Theil–Sen lines its verdicts judged)
and an HTML report with the verdicts.`,
		Example: `  mcpbench run --duration 30s --out results/r1
  mcpbench plot results/r1                       # results/r1/plots/*.png|svg, results/r1/report.html
  mcpbench plot results/r1 --format svg --out /tmp/charts --html /tmp/r1.html
  mcpbench plot results/cap                      # a sweep: capacity charts and its report
  mcpbench plot results/soak                     # a soak: its trends and verdicts too`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return launch.Plot(args[0], f.format, f.out, f.html, f.perOp, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "both", "chart files: png, svg or both")
	fl.StringVarP(&f.out, "out", "o", "", "directory for the chart files (default DIR/plots)")
	fl.StringVar(&f.html, "html", "", "HTML report file (default DIR/report.html)")
	fl.BoolVar(&f.perOp, "per-op", false, "also draw one latency-over-time chart per op")
	return cmd
}
