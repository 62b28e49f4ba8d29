// Package verdict judges recorded results: thresholds (--threshold) and
// the registry of metrics they read — every number the summary prints,
// with op, post:, get: and sessions: scopes and any percentile —,
// comparisons of two runs and their regression limits (compare
// --fail-if), and the analysis of reconnect-storm waves.
//
// It owns judging only: it reads metrics.Summary values (and, for
// percentiles a summary does not keep, a QuantileSource); it must not
// record, write files or print reports.
package verdict
