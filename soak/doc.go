// Package soak runs a long run and judges it: latency drift, correctness
// drift, target leaks and session hygiene, with robust slopes
// (Theil–Sen); it writes soak.json (its only writer) and prints the
// verdict table.
//
// It runs load only through workload.Run (its points come from a sink);
// it must not record or write a run's own files.
package soak
