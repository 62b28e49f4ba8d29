package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/plots"
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
			return plotResults(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "both", "chart files: png, svg or both")
	fl.StringVarP(&f.out, "out", "o", "", "directory for the chart files (default DIR/plots)")
	fl.StringVar(&f.html, "html", "", "HTML report file (default DIR/report.html)")
	fl.BoolVar(&f.perOp, "per-op", false, "also draw one latency-over-time chart per op")
	return cmd
}

func plotResults(cmd *cobra.Command, dir string, f *plotFlags) error {
	format, err := plots.ParseFormat(f.format)
	if err != nil {
		return usageError("--format: %v", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageError("%s: not a directory", dir)
	}
	out, html := f.out, f.html
	if out == "" { // DIR/plots is plot's own: redrawn whole, no stale chart
		out = filepath.Join(dir, "plots")
		if err := clearCharts(out); err != nil {
			return withCode(exitFailed, err)
		}
	}
	if html == "" {
		html = filepath.Join(dir, "report.html")
	}
	if sw, err := metrics.ReadSweep(dir); err == nil {
		written, err := plots.WriteSweepCharts(out, sw, plots.Options{Formats: format})
		if err != nil {
			return withCode(exitFailed, err)
		}
		return writeReport(cmd, written, html, func(w io.Writer) error { return plots.SweepHTMLReport(w, sw) })
	}
	res, err := metrics.ReadResults(dir)
	if err != nil {
		return withCode(exitFailed, err)
	}
	written, err := plots.WriteCharts(out, res, plots.Options{Formats: format, PerOp: f.perOp})
	if err != nil {
		return withCode(exitFailed, err)
	}
	if sk, err := metrics.ReadSoak(dir); err == nil { // a soak: its trends too
		more, err := plots.WriteSoakCharts(out, res, sk, plots.Options{Formats: format})
		if err != nil {
			return withCode(exitFailed, err)
		}
		return writeReport(cmd, append(more, written...), html, func(w io.Writer) error { return plots.SoakHTMLReport(w, res, sk) })
	}
	return writeReport(cmd, written, html, func(w io.Writer) error { return plots.HTMLReport(w, res) })
}

// writeReport lists the chart files written (and the skipped charts with
// their reason) and writes the HTML report.
func writeReport(cmd *cobra.Command, written []plots.Output, html string, report func(io.Writer) error) error {
	stdout := cmd.OutOrStdout()
	for _, o := range written {
		if o.Skipped != "" {
			fmt.Fprintf(stdout, "skipped %s: %s\n", o.Name, o.Skipped)
			continue
		}
		for _, file := range o.Files {
			fmt.Fprintln(stdout, file)
		}
	}
	var buf bytes.Buffer
	if err := report(&buf); err != nil {
		return withCode(exitFailed, err)
	}
	if err := os.WriteFile(html, buf.Bytes(), 0o644); err != nil {
		return withCode(exitFailed, err)
	}
	fmt.Fprintln(stdout, html)
	return nil
}

// clearCharts removes the chart files (*.png, *.svg) an earlier drawing
// left in dir, the default DIR/plots that plot owns: a chart skipped this
// time (nothing to show) must not remain from the last one.
func clearCharts(dir string) error {
	for _, pat := range []string{"*.png", "*.svg"} {
		files, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range files {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}
