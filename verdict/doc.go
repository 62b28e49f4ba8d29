// Package verdict judges recorded results: thresholds (--threshold) and
// the registry of metrics they read — every number the summary prints,
// with op, post:, get: and sessions: scopes and any percentile —,
// comparisons of two runs and their regression limits (compare
// --fail-if), the analysis of reconnect-storm waves, and the verdicts
// as JUnit XML for CI (junit.go: --junit).
//
// It owns judging only: it reads results.Summary values (and, for
// percentiles a summary does not keep, a QuantileSource); it must not
// record or print reports, and writes one file only: the JUnit report,
// atomically (results.WriteFileAtomic), where the command says.
package verdict
