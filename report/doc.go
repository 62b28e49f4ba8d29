// Package report prints what a run recorded: the text report (the table
// every run prints, wrk2 style), its markdown form, the percentile
// spectrum, and the compare table. It reads only results.Summary (and the
// results files), so a saved summary.json prints the same text.
//
// It owns formatting only: it must not compute statistics or judge (the
// threshold results it prints were judged by verdict).
package report
