package main

import (
	"bytes"
	"fmt"
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

A chart with nothing to show (no resumes, say) is skipped and said so.

For a sweep directory ("mcpbench sweep --out DIR") it draws the capacity
charts: latency against throughput, errors against offered load, CPU and
memory per step (with --target-pid), memory per session (session sweeps).`,
		Example: `  mcpbench run --duration 30s --out results/r1
  mcpbench plot results/r1                       # results/r1/plots/*.png|svg, results/r1/report.html
  mcpbench plot results/r1 --format svg --out /tmp/charts --html /tmp/r1.html`,
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
	stdout := cmd.OutOrStdout()
	format, err := plots.ParseFormat(f.format)
	if err != nil {
		return usageError("--format: %v", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageError("%s: not a directory", dir)
	}
	if sw, err := metrics.ReadSweep(dir); err == nil {
		return plotSweep(cmd, dir, sw, format, f)
	}
	res, err := metrics.ReadResults(dir)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	out := f.out
	if out == "" {
		out = filepath.Join(dir, "plots")
	}
	html := f.html
	if html == "" {
		html = filepath.Join(dir, "report.html")
	}
	written, err := plots.WriteCharts(out, res, plots.Options{Formats: format, PerOp: f.perOp})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
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
	if err := plots.HTMLReport(&buf, res); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if err := os.WriteFile(html, buf.Bytes(), 0o644); err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	fmt.Fprintln(stdout, html)
	return nil
}

// plotSweep draws a sweep's capacity charts (and each step's charts).
func plotSweep(cmd *cobra.Command, dir string, sw *metrics.Sweep, format plots.Format, f *plotFlags) error {
	out := f.out
	if out == "" {
		out = filepath.Join(dir, "plots")
	}
	written, err := plots.WriteSweepCharts(out, sw, plots.Options{Formats: format})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	for _, o := range written {
		if o.Skipped != "" {
			fmt.Fprintf(cmd.OutOrStdout(), "skipped %s: %s\n", o.Name, o.Skipped)
			continue
		}
		for _, file := range o.Files {
			fmt.Fprintln(cmd.OutOrStdout(), file)
		}
	}
	return nil
}
