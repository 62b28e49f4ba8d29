package units

import (
	"fmt"
	"strings"
	"time"
)

// durationUnits are time.ParseDuration's units, largest first, each with
// the next smaller one: the unit a number left bare after it most likely
// meant ("1m30" → "1m30s", "1h5" → "1h5m").
var durationUnits = []struct{ unit, next string }{
	{"h", "m"}, {"m", "s"}, {"ms", "us"}, {"us", "ns"}, {"µs", "ns"}, {"s", "ms"},
}

// DurationHint returns the duration s most likely meant when s is a number
// with its unit left out, as time.ParseDuration reads it: "30" → "30s",
// "1.5" → "1.5s", "1m30" → "1m30s", "1h5" → "1h5m". ok is false when s is
// not missing just its last unit (then no guess is better than the
// parse error).
func DurationHint(s string) (hint string, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[len(s)-1] < '0' || s[len(s)-1] > '9' {
		return "", false
	}
	// The bare number at the end, and the unit before it.
	i := len(s)
	for i > 0 && (s[i-1] >= '0' && s[i-1] <= '9' || s[i-1] == '.') {
		i--
	}
	unit := "s" // a number alone: seconds
	if i > 0 {
		j := i
		for j > 0 && !(s[j-1] >= '0' && s[j-1] <= '9' || s[j-1] == '.') {
			j--
		}
		prev := s[j:i]
		unit = ""
		for _, u := range durationUnits {
			if u.unit == prev {
				unit = u.next
				break
			}
		}
		if unit == "" {
			return "", false
		}
	}
	hint = s + unit
	if _, err := time.ParseDuration(hint); err != nil {
		return "", false
	}
	return hint, true
}

// UnitHint is what to tell a user whose duration s is missing its unit
// (DurationHint): "add a unit: 1m30s", or for a bare number, where seconds
// is a guess, "add a unit: 30s? (or 30ms)". ok is false as DurationHint's.
func UnitHint(s string) (string, bool) {
	hint, ok := DurationHint(s)
	if !ok {
		return "", false
	}
	if n := strings.TrimSpace(s); !strings.ContainsAny(n, "hmsuµn") {
		return "add a unit: " + hint + "? (or " + n + "ms)", true
	}
	return "add a unit: " + hint, true
}

// ParseDuration is time.ParseDuration, whose error for a number missing
// its unit says which to add (`"2": add a unit: 2s`) instead of "missing
// unit in duration".
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		if hint, ok := UnitHint(s); ok {
			return 0, fmt.Errorf("%q: %s", s, hint)
		}
	}
	return d, err
}
