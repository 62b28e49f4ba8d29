package units

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Size is a byte count that reads "64MiB", "512KiB", "16MB", "1GiB" or a
// plain number of bytes from YAML and flags, and writes itself in the
// largest exact binary unit.
type Size int64

// ParseSize reads a size: a number with an optional unit B, KB/KiB, MB/MiB
// or GB/GiB (KB, MB and GB are read as binary units too: 1 KB = 1024 B,
// the way the limits are meant). Negative sizes are errors.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a size (want e.g. 64MiB, 512KiB, 1048576)", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (want B, KiB, MiB or GiB)", s, unit)
	}
	return Size(f * mult), nil
}

// String renders the size: "64MiB", "1536KiB", "100B".
func (s Size) String() string {
	switch {
	case s >= 1<<30 && s%(1<<30) == 0:
		return strconv.FormatInt(int64(s>>30), 10) + "GiB"
	case s >= 1<<20 && s%(1<<20) == 0:
		return strconv.FormatInt(int64(s>>20), 10) + "MiB"
	case s >= 1<<10 && s%(1<<10) == 0:
		return strconv.FormatInt(int64(s>>10), 10) + "KiB"
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// Set implements pflag.Value (for --max-message-bytes).
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = n
	return nil
}

// Type implements pflag.Value.
func (s *Size) Type() string { return "size" }

// UnmarshalYAML implements yaml.Unmarshaler; a bad value is a
// *yaml.TypeError so the decoder reports every mistake.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a size (want e.g. 64MiB, 512KiB)", n.Line, n.Value)}}
	}
	*s = v
	return nil
}

// MarshalYAML writes the size as a string.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

// MarshalJSON writes the size as a string ("64MiB").
func (s Size) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads "64MiB" or a number of bytes.
func (s *Size) UnmarshalJSON(b []byte) error {
	var str string
	if json.Unmarshal(b, &str) == nil {
		return s.Set(str)
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("size: %s", b)
	}
	*s = Size(n)
	return nil
}
