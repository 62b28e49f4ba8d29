// Package units holds value types shared by profile sections: a duration
// that reads "1.5s", "200ms" or a number of seconds from YAML.
package units

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration that reads "1.5s", "200ms" or a number of
// seconds from YAML, and writes itself as a string.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML implements yaml.Unmarshaler. A bad value is reported as a
// *yaml.TypeError so the decoder goes on and reports every mistake.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a duration like 10s or 250ms", n.Line)}}
	}
	if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
		*d = Duration(f * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		if hint, ok := UnitHint(n.Value); ok {
			return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration: %s", n.Line, n.Value, hint)}}
		}
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration (want e.g. 10s, 250ms)", n.Line, n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalJSON writes the duration as a string ("1.5s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1.5s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.ParseDuration(s)
		*d = Duration(v)
		return err
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("duration: %s", b)
	}
	*d = Duration(f * float64(time.Second))
	return nil
}
