package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/profiles"
)

// A child reads back exactly the profile its parent resolved: every
// built-in, with overrides and the fields JSON does not carry (the data
// files' directory, the flags' thresholds and checks), and the parent's
// command line and flags with the child's own added.
func TestChildFileRoundTrip(t *testing.T) {
	for _, name := range profiles.Names() {
		p, err := profile.LoadProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Override(profile.Override{Field: "vus", Value: new(int)}); err != nil {
			t.Fatal(err)
		}
		p.Thresholds = append(p.Thresholds, "p99<1s")
		p.ThresholdFlags, p.CheckFlags = 1, 0
		p.SetDir("/data")
		p.URL = "http://127.0.0.1:9/mcp"
		e := &Test{spec: Spec{Argv: []string{"mcpbench", "run", "-H", "Authorization: Bearer x"}, Flags: map[string]string{"header": "Authorization: Bearer x"}, Procs: 3}}
		data, err := e.childFileOf(childRun, p, false)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "launch.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s := Spec{Argv: []string{"mcpbench", "run", "--" + ChildFileFlag + "=" + path, "--segment=0/2"}, Flags: map[string]string{ChildFileFlag: path, "segment": "0/2"}}
		if err := s.LoadChild(path); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(p)
		got, _ := json.Marshal(s.Profile)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s: the child's profile differs (-parent +child):\n%s", name, diff)
		}
		if s.Profile.Dir() != "/data" || s.Profile.ThresholdFlags != 1 || s.Procs != 3 || s.child.Kind != childRun {
			t.Errorf("%s: dir %q, threshold flags %d, procs %d, kind %q", name, s.Profile.Dir(), s.Profile.ThresholdFlags, s.Procs, s.child.Kind)
		}
		if got := strings.Join(s.Argv, " "); got != "mcpbench run -H Authorization: Bearer x --segment=0/2" {
			t.Errorf("%s: argv %q", name, got)
		}
		if s.Flags["header"] == "" || s.Flags["segment"] != "0/2" || s.Flags[ChildFileFlag] != "" {
			t.Errorf("%s: flags %v", name, s.Flags)
		}
	}
}

// A launch file that is not one is a usage error naming the flag.
func TestChildFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(path, []byte("{"), 0o600)
	var s Spec
	if err := s.LoadChild(path); CodeOf(err) != ExitUsage || !strings.Contains(err.Error(), "--"+ChildFileFlag) {
		t.Errorf("LoadChild(bad) = %v (exit %d)", err, CodeOf(err))
	}
	if err := s.LoadChild(filepath.Join(t.TempDir(), "none")); CodeOf(err) != ExitUsage || !strings.Contains(err.Error(), "do not give it") {
		t.Errorf("LoadChild(missing) = %v", err)
	}
}
