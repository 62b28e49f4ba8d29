package launch

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// Merge adds up the segments and checks, on the merged run, the
// thresholds of the profile they ran and the extra ones; an extra
// threshold naming an op the run lacks is ErrThreshold, a segment given
// twice results.ErrNotSegments.
func TestMerge(t *testing.T) {
	start := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if writeSegment(a, 0, 2, start, 10, true, int(ExitOK)) != int(ExitOK) || writeSegment(b, 1, 2, start, 20, true, int(ExitOK)) != int(ExitOK) {
		t.Fatal("could not write the segments")
	}
	slow, err := verdict.ParseThreshold("p99<1ms")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge([]string{a, b}, []verdict.Threshold{slow})
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary.All.Count != 30 {
		t.Errorf("merged %d ops, want 30", m.Summary.All.Count)
	}
	var got []string
	for _, th := range m.Summary.Thresholds {
		got = append(got, th.Expr+" "+map[bool]string{true: "pass", false: "fail"}[th.Pass])
	}
	if diff := cmp.Diff([]string{"p99<1s pass", "p99<1ms fail"}, got); diff != "" {
		t.Errorf("thresholds (-want +got):\n%s", diff)
	}

	bad, err := verdict.ParseThreshold("tools/call:nope:p99<1s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge([]string{a, b}, []verdict.Threshold{bad}); !errors.Is(err, ErrThreshold) || !strings.HasPrefix(err.Error(), "profile.Profile.Thresholds: ") {
		t.Errorf("a threshold on no op: %v, want ErrThreshold", err)
	}
	if _, err := Merge([]string{a, a}, nil); !errors.Is(err, results.ErrNotSegments) {
		t.Errorf("a segment twice: %v, want results.ErrNotSegments", err)
	}
}
