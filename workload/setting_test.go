package workload

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/profile"
)

// Issue 35 item 5: library errors name settings by their YAML path; a
// caller renders them with its own names (the CLI: its flags), the
// cause still wrapped.
func TestSettingErrorNamesSettings(t *testing.T) {
	flags := map[string]string{"segment": "--segment", "segment_sequence": "--segment-sequence", "get_stream": "--get-stream"}
	name := func(s string) string { return flags[s] }
	_, err := ParseSegment("", "0,1")
	var se *profile.SettingError
	if !errors.As(err, &se) || se.Error() != "segment_sequence needs segment" || se.Text(name) != "--segment-sequence needs --segment" {
		t.Fatalf("%v: want a *SettingError naming the settings", err)
	}
	_, err = ParseSegment("1/2:x", "")
	if !errors.As(err, &se) || errors.Unwrap(se) == nil || !strings.HasPrefix(se.Text(name), `--segment "1/2:x": `) {
		t.Fatalf("%v: want a *SettingError wrapping its cause", err)
	}
	p := &profile.Profile{GETStream: false, Ops: []profile.OpSpec{{Method: "resources/subscribe", URI: "file:///x"}}}
	for _, e := range p.Validate() {
		if !strings.Contains(e.Error(), "resources/subscribe needs") {
			continue
		}
		if !errors.As(e, &se) || strings.Contains(e.Error(), "--") || !strings.Contains(se.Text(name), "get_stream: true (--get-stream): servers") {
			t.Fatalf("%v: want the setting, and the flag only when named", e)
		}
	}
}
