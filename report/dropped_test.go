package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// droppedRun is issue 20's run: 20 s at 200/s, 3826 ops completed (the
// slowest at 1442 and 1471 ms), 174 dropped at the 1 s max delay.
func droppedRun() *results.Summary {
	o := &results.OpStats{Response: results.NewHist(), DropLB: results.NewHist()}
	for _, v := range []struct{ us, n int64 }{{100_000, 3700}, {1_442_000, 86}, {1_471_000, 40}} {
		for range v.n {
			o.Response.RecordValue(v.us)
		}
		o.Count += v.n
	}
	for range 174 {
		o.DropLB.RecordValue(1_000_000)
	}
	o.Dropped = 174
	op := results.OpSummaryOf("tools/call:echo", o, 20)
	return &results.Summary{Tool: "mcpbench test", Model: "open", DurationS: 20, TargetRate: 200, Ops: []results.OpSummary{op}, All: op}
}

// The table with the dropped ops counts the offered ops, and marks ≥ the
// values that rest on a dropped op's lower bound: its p99 reads below the
// completed-only p99 (the drops enter at the max delay), so it is only a
// bound; its p50 rests on completed ops alone and is exact.
func TestDroppedTableCountsOfferedOpsAndMarksBounds(t *testing.T) {
	s := droppedRun()
	o := s.All
	if o.Offered != 4000 || o.OfferedRate != 200 || o.CensoredFromMS > 1000 || o.CensoredFromMS < 990 {
		t.Fatalf("offered %d at %v/s, censored from %v ms: want 4000 at 200/s, from ~1000 ms", o.Offered, o.OfferedRate, o.CensoredFromMS)
	}
	if o.WithDropped.P99 >= o.Response.P99 {
		t.Fatalf("p99 with drops %v, completed %v: the case needs the drops' bound below the completed tail", o.WithDropped.P99, o.Response.P99)
	}
	var out bytes.Buffer
	if err := WriteText(&out, s); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	i := strings.Index(text, "Response time with the 174 dropped ops")
	if i < 0 {
		t.Fatalf("no table with the dropped ops:\n%s", text)
	}
	lines := strings.Split(text[i:], "\n")
	if testing.Verbose() {
		t.Log("\n" + strings.Join(lines[:3], "\n"))
	}
	if !strings.Contains(lines[0], "count and rate: offered ops") || !strings.Contains(lines[0], "marked ≥") {
		t.Fatalf("title %q", lines[0])
	}
	f := strings.Fields(lines[2]) // op offered rate errors p50 p90 p99 p99.9 max mean
	if len(f) != 10 || f[0] != "tools/call:echo" || f[1] != "4000" || f[2] != "200.0" {
		t.Fatalf("row %q: want tools/call:echo with 4000 offered at 200.0/s", lines[2])
	}
	for k, col := range []string{"p50", "p90", "p99", "p99.9", "max", "mean"} {
		bound := strings.HasPrefix(f[4+k], "≥")
		if want := col != "p50" && col != "p90"; bound != want {
			t.Errorf("%s %q: bound %v, want %v (censored from %v ms)", col, f[4+k], bound, want, o.CensoredFromMS)
		}
	}
}
