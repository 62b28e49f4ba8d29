package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/results"
)

// Ops whose streams were unterminated held their VUs 2 s each: the
// summary counts that time and the text says, under the throughput, that
// it lowered it. A run without such tails (a correct server) says
// nothing.
func TestTailWaitLoweredThroughput(t *testing.T) {
	run := func(tails int) (*results.Summary, string) {
		rec := metrics.NewRecorder([]string{"tools/call:echo"}, 1)
		for i := range 10 {
			r := result(0, 0, i, i+3, driver.ClassOK, 200)
			if i < tails {
				r.TailWait = 2 * time.Second
			}
			rec.Shard(0).Record(r)
		}
		rec.Tick(time.Now(), time.Time{})
		ops, all := rec.Summarize(10)
		s := &results.Summary{Model: "closed", Rate: all.Rate, DurationS: 10, VUs: 2, Ops: ops, All: all}
		var b bytes.Buffer
		if err := WriteText(&b, s); err != nil {
			t.Fatal(err)
		}
		return s, b.String()
	}
	s, out := run(5)
	if s.All.TailWaits != 5 || s.All.TailWaitS != 10 {
		t.Fatalf("tail waits %d, %v s: want 5 of 2 s", s.All.TailWaits, s.All.TailWaitS)
	}
	want := "Throughput: 1.0 ops/s\n  VUs waited 10.0 s on the tails of 5 unterminated response streams (2.00 s each: the stream stayed open after its response until judged unterminated), 50% of the VU time (2 VUs × 10.0 s): not latency, but no op started meanwhile, so this lowered the throughput\n"
	if !strings.Contains(out, want) {
		t.Fatalf("text:\n%s", out)
	}
	if s, out = run(0); s.All.TailWaits != 0 || strings.Contains(out, "VUs waited") {
		t.Fatalf("no tail: %d\n%s", s.All.TailWaits, out)
	}
}
