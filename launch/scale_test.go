package launch

import (
	"testing"
	"time"
)

// --start-at's forms: RFC 3339, unix seconds (a fraction allowed),
// +DURATION from now; anything else is refused.
func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                          {},
		"2026-11-21T06:00:10Z":      now.Add(10 * time.Second),
		"2026-11-21T07:00:10+01:00": now.Add(10 * time.Second),
		"1795240810":                now.Add(10 * time.Second),
		"1795240810.5":              now.Add(10500 * time.Millisecond),
		"+1m":                       now.Add(time.Minute),
	} {
		got, err := ParseStartAt(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseStartAt(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"+x", "-5", "yesterday", "+-1s"} {
		if _, err := ParseStartAt(bad, now); err == nil {
			t.Errorf("ParseStartAt(%q): no error", bad)
		}
	}
}
