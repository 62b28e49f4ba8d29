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
