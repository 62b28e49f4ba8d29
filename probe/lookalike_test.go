package probe

import (
	"regexp"
	"testing"
)

// lookalikeID keeps an id's shape (length, alphabet, prefix, layout) and
// changes its value, so that only a lookup can tell it is unknown.
func TestLookalikeID(t *testing.T) {
	tests := []struct {
		sid, want string
		shape     *regexp.Regexp
	}{
		// mcp-go: a prefix and a UUID; the last 8 hex digits rotate.
		{"mcp-session-84167c5d-8472-4dd0-9bb7-3cb19ba5a3b3", "mcp-session-84167c5d-8472-4dd0-9bb7-3cb1ba5a3b39",
			regexp.MustCompile(`^mcp-session-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)},
		// go-sdk: base32 (A-Z, 2-7); rotating keeps the alphabet.
		{"ITWK6E5KINE3KXGP2RK6CUSTXB", "ITWK6E5KINE3KXGP2R6CUSTXBK", regexp.MustCompile(`^[A-Z2-7]{26}$`)},
		// One character after the separator: rotating changes nothing, so
		// it changes within its kind.
		{"sess-1", "sess-6", regexp.MustCompile(`^sess-[0-9]$`)},
		{"aaaa", "dddd", regexp.MustCompile(`^[a-f]{4}$`)},
		{"zz", "pp", regexp.MustCompile(`^[g-z]{2}$`)},
		{"ZZ", "PP", regexp.MustCompile(`^[G-Z]{2}$`)},
		{"---", "6f1c2a8e-3b4d-4e5f-9a7b-1c2d3e4f5a6b", regexp.MustCompile(`^[0-9a-f-]{36}$`)},
	}
	for _, tt := range tests {
		got := lookalikeID(tt.sid)
		if got != tt.want || got == tt.sid || !tt.shape.MatchString(got) {
			t.Errorf("lookalikeID(%q) = %q, want %q (shape %s)", tt.sid, got, tt.want, tt.shape)
		}
	}
}
