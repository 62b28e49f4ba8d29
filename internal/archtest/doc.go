// Package archtest holds no code. Its layers table (layers_test.go) is the
// one package map of the module: which package may import which. Its
// tests enforce it over the module's non-test files, so a layer cannot
// grow an upward or sideways import unnoticed, and check that
// docs/ARCHITECTURE.md's "## Packages" table states the same packages with
// the same imports and that the page's relative links resolve
// (doc_test.go).
package archtest
