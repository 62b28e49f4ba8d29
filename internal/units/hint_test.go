package units

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestDurationHint(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"30", "30s", true},
		{"1.5", "1.5s", true},
		{"1m30", "1m30s", true},
		{"1h5", "1h5m", true},
		{"2s500", "2s500ms", true},
		{" 45 ", "45s", true},
		{"10s", "", false},   // has its unit
		{"250ms", "", false}, // has its unit
		{"abc", "", false},
		{"1x30", "", false}, // not a unit to continue from
		{"", "", false},
		{"1..5", "", false}, // no duration even with a unit
	} {
		got, ok := DurationHint(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("DurationHint(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestUnitHintAndParseDuration(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"30", "add a unit: 30s? (or 30ms)"},
		{"1m30", "add a unit: 1m30s"},
		{"1.5", "add a unit: 1.5s? (or 1.5ms)"},
	} {
		if got, ok := UnitHint(tc.in); !ok || got != tc.want {
			t.Errorf("UnitHint(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
		if _, err := ParseDuration(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDuration(%q) = %v, want it to say %q", tc.in, err, tc.want)
		}
	}
	if d, err := ParseDuration("1m30s"); err != nil || d.Seconds() != 90 {
		t.Errorf("ParseDuration(1m30s) = %v, %v", d, err)
	}
	if _, err := ParseDuration("soon"); err == nil || strings.Contains(err.Error(), "add a unit") {
		t.Errorf("ParseDuration(soon) = %v, want time's error", err)
	}
}

// A profile duration missing its unit says which unit to add; a bare
// number stays seconds (documented), and other mistakes keep the generic
// text.
func TestDurationYAMLSaysAddAUnit(t *testing.T) {
	var v struct {
		D Duration `yaml:"d"`
	}
	err := yaml.Unmarshal([]byte("d: 1m30\n"), &v)
	if err == nil || !strings.Contains(err.Error(), `"1m30" is not a duration: add a unit: 1m30s`) {
		t.Fatalf("1m30: err = %v, want it to say add a unit: 1m30s", err)
	}
	err = yaml.Unmarshal([]byte("d: soon\n"), &v)
	if err == nil || !strings.Contains(err.Error(), "want e.g. 10s, 250ms") || strings.Contains(err.Error(), "add a unit") {
		t.Fatalf("soon: err = %v, want the generic text", err)
	}
	if err := yaml.Unmarshal([]byte("d: 30\n"), &v); err != nil || v.D.D().Seconds() != 30 {
		t.Fatalf("30: %v, %v; want 30 s", v.D.D(), err)
	}
}
