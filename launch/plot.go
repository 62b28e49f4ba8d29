package launch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/plots"
	"github.com/mcpbench/mcpbench/results"
)

// Plot is 'mcpbench plot DIR': the charts of the results directory dir
// (a run's, a soak's with its trends, a sweep's capacity charts) in
// formats (plots.ParseFormat) into out ("": DIR/plots, redrawn whole),
// perOp adding one latency chart per op, and the HTML report into html
// ("": DIR/report.html); each file written is listed on stdout, each
// chart skipped with its reason. Errors carry their exit code.
func Plot(dir, formats, out, html string, perOp bool, stdout io.Writer) error {
	format, err := plots.ParseFormat(formats)
	if err != nil {
		return Usagef("%s: %v", setting.PlotFormats, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return Usagef("%s: not a directory", dir)
	}
	if out == "" { // DIR/plots is plot's own: redrawn whole, no stale chart
		out = filepath.Join(dir, "plots")
		if err := clearCharts(out); err != nil {
			return WithExitCode(ExitFailed, err)
		}
	}
	if html == "" {
		html = filepath.Join(dir, "report.html")
	}
	if sw, err := results.ReadSweep(dir); err == nil {
		written, err := plots.WriteSweepCharts(out, sw, plots.Options{Formats: format})
		if err != nil {
			return WithExitCode(ExitFailed, err)
		}
		return writeReport(stdout, written, html, func(w io.Writer) error { return plots.SweepHTMLReport(w, sw) })
	}
	res, err := results.ReadResults(dir)
	if err != nil {
		return WithExitCode(ExitFailed, err)
	}
	written, err := plots.WriteCharts(out, res, plots.Options{Formats: format, PerOp: perOp})
	if err != nil {
		return WithExitCode(ExitFailed, err)
	}
	if sk, err := results.ReadSoak(dir); err == nil { // a soak: its trends too
		more, err := plots.WriteSoakCharts(out, res, sk, plots.Options{Formats: format})
		if err != nil {
			return WithExitCode(ExitFailed, err)
		}
		return writeReport(stdout, append(more, written...), html, func(w io.Writer) error { return plots.SoakHTMLReport(w, res, sk) })
	}
	return writeReport(stdout, written, html, func(w io.Writer) error { return plots.HTMLReport(w, res) })
}

// writeReport lists the chart files written (and the skipped charts with
// their reason) and writes the HTML report.
func writeReport(stdout io.Writer, written []plots.Output, html string, report func(io.Writer) error) error {
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
		return WithExitCode(ExitFailed, err)
	}
	if err := os.WriteFile(html, buf.Bytes(), 0o644); err != nil {
		return WithExitCode(ExitFailed, err)
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
