// Package plots draws charts of a results directory (gonum/plot, PNG or
// SVG) and writes a self-contained HTML report of a run.
//
// It reads what the metrics package wrote and read back
// ([results.ReadResults]): the interval rows of intervals.csv and the
// HdrHistograms of histograms.hlog. It draws; it does not compute the
// statistics the metrics package owns: interval percentiles are the ones
// intervals.csv holds, whole-run percentiles come from the merged
// histograms (values in µs, drawn in ms), and the summary tables print
// summary.json (or [results.Results.Rebuild] when the run crashed before
// writing it).
//
// The charts:
//
//   - [LatencyOverTime]: interval p50/p90/p99/max response time (ms) over
//     time (s since the start), above the target and achieved rate (ops/s).
//   - [Spectrum]: the response-time percentile spectrum of every op on a
//     log "nines" axis (0%, 90%, 99%, 99.9%…), HdrHistogram style.
//   - [ThroughputErrors]: completed ops/s over time; errors per interval
//     by class and, apart, arrivals dropped per interval (counts, which
//     add up to the summary's).
//   - [ResumesReconnects]: resume and reconnect attempts per second over
//     time, with storm waves marked.
//   - [TimeToResume]: the time-to-resume distribution and its percentile
//     spectrum, when streams were resumed.
//   - [LatencyPerOp]: interval p99 and p50 of each op, one line per op.
//   - [LoadOverTime]: VUs, sessions and GET streams at each interval's end
//     (the row written after the stop left out).
//   - [ResourcesOverTime]: CPU (against the cores mcpbench may use; its
//     line says when it includes the embedded server), RSS (and open
//     files, threads) of mcpbench and of the --target-pid process.
//
// Every chart over time draws an interval's values at the interval's
// middle (intervals.csv holds its end and length), warm-up and stopping
// shaded, so the panels of a report line up.
//
// The capacity charts of a sweep ([CapacityLatency], [CapacityErrors],
// [CapacityResources], [CapacityMemory]) read sweep.json only and draw
// against the load offered (the swept dimension), with the steps'
// confidence intervals, the SLO, the knee and the highest load under the
// SLO. [SoakTrends] draws a soak's series with the Theil–Sen lines its
// verdicts judged (soak.json). Every chart has a Caption saying what to
// look at.
//
// HTML: [HTMLReport] (a run), [SweepHTMLReport] (a sweep) and
// [SoakHTMLReport] (a soak: the run's report with its verdicts), each one
// self-contained page.
//
// A chart with nothing to show is not drawn: its function returns an
// error wrapping [ErrNoData], and [Charts], [WriteCharts] and
// [HTMLReport] list it as skipped with the reason.
//
// Output is deterministic: the same results give byte-identical SVG (the
// golden tests rely on it). Nothing here is safe for concurrent use on
// the same [Chart]; distinct charts may be drawn concurrently.
//
// # Owns and must not
//
// It owns drawing: the figure and its panels (chart.go), axes, ticks and
// scales (axes.go), marks such as error bars (marks.go), the time axis
// shared by the charts over time (timeaxis.go), the charts of a run over
// time (timecharts.go, runcharts.go) and of its distributions
// (spectrum.go), the capacity charts of a sweep (sweep.go), a soak's
// trends (soak.go), the chart set of a run and its files (charts.go), and
// the HTML reports (html.go, reports.go, report.html.tmpl,
// sweep.html.tmpl, style.html.tmpl).
//
// It must not compute statistics the metrics package owns (percentiles,
// rates, merges, verdicts, the sweep's knee): it draws the numbers the
// result files hold. It must not run load, touch the network or write
// anywhere but the writer or directory it is given.
package plots
