package outcome

import (
	"slices"
	"strings"
	"testing"
)

// Every class has a name of its own; a value past the enum says its number.
func TestClassNames(t *testing.T) {
	seen := map[string]Class{}
	for c := range NumClasses {
		n := c.String()
		if n == "" || strings.HasPrefix(n, "class-") {
			t.Errorf("class %d has no name", c)
		}
		if o, dup := seen[n]; dup {
			t.Errorf("classes %d and %d are both %q", o, c, n)
		}
		seen[n] = c
	}
	if got := NumClasses.String(); got != "class-17" {
		t.Errorf("NumClasses.String() = %q, want class-17", got)
	}
}

// Verdicts lists each verdict once: the stream verdicts, then the session
// ones; VerdictMap keeps the non-zero counts by name.
func TestVerdictLists(t *testing.T) {
	all := Verdicts()
	if len(all) != int(NumVerdicts) {
		t.Fatalf("Verdicts() has %d, want %d", len(all), NumVerdicts)
	}
	for v := range NumVerdicts {
		if !slices.Contains(all, v) || v.String() == "" {
			t.Errorf("verdict %d missing or unnamed", v)
		}
		if slices.Contains(StreamVerdicts, v) == slices.Contains(SessionVerdicts, v) {
			t.Errorf("verdict %s must be a stream verdict or a session one", v)
		}
	}
	var c [NumVerdicts]int
	c[VerdictLost], c[VerdictWrongMissingStatus] = 2, 1
	m := VerdictMap(c)
	if len(m) != 2 || m["lost"] != 2 || m["wrong-missing-session-status"] != 1 {
		t.Errorf("VerdictMap = %v", m)
	}
}

// IsModern: 2026-07-28 and later are the stateless revisions.
func TestIsModern(t *testing.T) {
	for p, want := range map[string]bool{"2025-11-25": false, "2025-03-26": false, Protocol20260728: true} {
		if IsModern(p) != want {
			t.Errorf("IsModern(%q) = %v", p, !want)
		}
	}
}
