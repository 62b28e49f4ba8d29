package procrun

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/pflag"
)

// SegmentArgs gives the flags set, by name, one argument per value of a
// repeatable flag, without those dropped or left unset.
func TestSegmentArgs(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.String("url", "", "")
	fs.Float64("rate", 0, "")
	fs.StringArray("header", nil, "")
	fs.String("out", "", "")
	fs.Bool("get-stream", false, "")
	fs.Int("vus", 10, "") // not set: not passed on
	if err := fs.Parse([]string{"--url", "http://h/mcp", "--header", "A: 1", "--rate=50", "--out", "x", "--header", "B: $(X)", "--get-stream"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"--get-stream=true", "--header=A: 1", "--header=B: $(X)", "--rate=50", "--url=http://h/mcp"}
	if diff := cmp.Diff(want, SegmentArgs(fs, ScaleDrop)); diff != "" {
		t.Errorf("SegmentArgs (-want +got):\n%s", diff)
	}
	for _, n := range []string{"segment", "out", "processes", "no-progress"} {
		if !ProcessDrop[n] {
			t.Errorf("ProcessDrop lacks %s, which each child is given its own value of", n)
		}
	}
}

// lastBytes keeps the last max bytes, across writes.
func TestLastBytes(t *testing.T) {
	l := &lastBytes{max: 8}
	l.Write([]byte("abcdef"))
	l.Write([]byte("ghij\n"))
	if got := l.String(); got != "defghij\n" {
		t.Errorf("kept %q, want %q", got, "defghij\n")
	}
	if got := LastLine("one\ntwo\n\n"); got != "two" {
		t.Errorf("LastLine = %q", got)
	}
}

// A closed-model test needs a VU per process; the start delay is given,
// or 5 s plus 1 ms per session a child sets up.
func TestShareAndStartDelay(t *testing.T) {
	plan := &workload.Plan{VUs: 3}
	if err := CheckShare(plan, 4); err == nil || !strings.Contains(err.Error(), "--vus 4") {
		t.Errorf("3 VUs on 4 processes: %v, want the refusal naming --vus 4", err)
	}
	if err := CheckShare(plan, 3); err != nil {
		t.Errorf("3 VUs on 3 processes: %v", err)
	}
	plan.VUs = 2000
	if got, want := StartDelay(0, plan, 4), 5*time.Second+500*time.Millisecond; got != want {
		t.Errorf("StartDelay = %v, want %v", got, want)
	}
	if got := StartDelay(time.Second, plan, 4); got != time.Second {
		t.Errorf("StartDelay given 1s = %v", got)
	}
}

// HideArgs leaves the subcommand and FlagsFromEnv in the argv and every
// flag, in order, in the environment (a parent's own FlagsEnv variables
// dropped); ExpandFlagsFromEnv puts them back where FlagsFromEnv was.
func TestHideArgsRoundTrip(t *testing.T) {
	args := []string{"run", "--header=Authorization: Bearer S1", "--url=http://u:S2@h/mcp?api_key=S3", "--header=X: S4", "--env=K=S5=6", "--args="}
	environ := []string{"PATH=/bin", FlagsEnv + "=9", FlagsEnv + "_8=stale", "HOME=/h"}
	argv, env := HideArgs(args, environ)
	if diff := cmp.Diff([]string{"run", FlagsFromEnv}, argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	for _, kv := range env {
		if strings.Contains(kv, "stale") || kv == FlagsEnv+"=9" {
			t.Errorf("the parent's own %s survived: %q", FlagsEnv, kv)
		}
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	got, names, err := ExpandFlagsFromEnv(append(argv, "--segment=0/2", "--out=d"), func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(args[:len(args):len(args)], "--segment=0/2", "--out=d"), got); diff != "" {
		t.Errorf("expanded (-want +got):\n%s", diff)
	}
	if want := []string{FlagsEnv, FlagsEnv + "_0", FlagsEnv + "_1", FlagsEnv + "_2", FlagsEnv + "_3", FlagsEnv + "_4"}; !cmp.Equal(want, names) {
		t.Errorf("names %q, want %q", names, want)
	}
	if vars["PATH"] != "/bin" || vars["HOME"] != "/h" {
		t.Errorf("the parent's environment is not kept: %q", env)
	}

	// Not a child's: as is. A child's without its variables: an error
	// naming them, never a value.
	plain := []string{"run", "--url=http://h/mcp"}
	if got, names, err := ExpandFlagsFromEnv(plain, func(string) (string, bool) { return "", false }); err != nil || names != nil || !cmp.Equal(plain, got) {
		t.Errorf("plain args: %q, %q, %v", got, names, err)
	}
	if _, _, err := ExpandFlagsFromEnv([]string{"run", FlagsFromEnv}, func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), "$"+FlagsEnv+" is not set") {
		t.Errorf("no %s: %v", FlagsEnv, err)
	}
	partial := map[string]string{FlagsEnv: "2", FlagsEnv + "_0": "--header=X: S9"}
	if _, _, err := ExpandFlagsFromEnv([]string{"run", FlagsFromEnv}, func(k string) (string, bool) { v, ok := partial[k]; return v, ok }); err == nil || !strings.Contains(err.Error(), FlagsEnv+"_1") || strings.Contains(err.Error(), "S9") {
		t.Errorf("a missing flag: %v", err)
	}
	if argv, env := HideArgs([]string{"run"}, environ); !cmp.Equal([]string{"run"}, argv) || !cmp.Equal(environ, env) {
		t.Errorf("no flags: %q, %q", argv, env)
	}
}
