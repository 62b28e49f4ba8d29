// Package archtest holds no code: its test enforces the import rules of
// docs/ARCHITECTURE.md (which package may import which) over the module's
// non-test files, so a layer cannot grow an upward or sideways import
// unnoticed.
package archtest
