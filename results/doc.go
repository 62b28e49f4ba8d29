// Package results is what a results directory is: the summary model
// (summary.json, sweep.json and soak.json are its types), the interval
// rows (intervals.csv) and their aggregates (Interval, OpStats), the
// HdrHistogram logs (summary.hlog, histograms.hlog: encode and decode),
// the Sink interface a run's outputs implement, ResultsDir (the
// directory's only writer), ReadResults and Rebuild (reading one back),
// MergeResults (the results of a test's execution segments merged
// exactly) and Tail (following a directory another process writes). It
// also samples processes (/proc, getrusage).
//
// It imports only the outcome vocabulary and leaves, never the driver or
// the HTTP client, so the packages that judge and print results (verdict,
// report, plots, live) compile no MCP session. Recording is package
// metrics'.
//
// Units: histograms hold microseconds (1 µs … 1 h, 3 significant digits);
// reports give milliseconds. Types are plain data unless their doc says
// otherwise (ResultsDir and Tail say what is safe for concurrent use).
package results
