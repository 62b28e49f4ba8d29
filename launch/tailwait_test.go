package launch

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/testenv"
)

// lingerFake answers each tools/call over SSE at once; with linger it
// keeps the stream open after the response (an unterminated stream).
func lingerFake(linger bool) *mcptest.Server {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Events(mcptest.Event{ID: "a1", Data: mcptest.Response(r.ID, map[string]any{"content": []any{}})})
		if linger {
			<-r.Ctx.Done()
		}
	})
	return fake
}

// A closed-model run against a server that leaves every stream open
// after its response: each VU waits 2 s per op on the tail, and the text
// says so under the throughput, with the time waited; the control (the
// same server ending its streams), run at the same time, waits on none.
func TestTailWaitUnderThroughput(t *testing.T) {
	testenv.Long(t)
	if testing.Short() {
		t.Skip("runs mcpbench for 3 s twice")
	}
	type outcome struct {
		out  string
		rate float64
		n    int64
		wait float64
	}
	do := func(linger bool) outcome {
		srv := httptest.NewServer(lingerFake(linger))
		defer srv.Close()
		dir := filepath.Join(t.TempDir(), "run")
		p := toolProfile(t, "smoke", "work", nil, false, "vus", 2, "duration", 3*time.Second, "warmup", time.Duration(0))
		p.URL = srv.URL
		out, errs, code := testRun(t, Spec{Command: "run", Profile: p, Out: dir, Quiet: true}, (*Test).Run)
		if code != 0 && code != int(ExitThresholds) {
			t.Fatalf("exit %d\n%s\n%s", code, out, errs)
		}
		s := readSum(t, dir)
		return outcome{out, s.Rate, s.All.TailWaits, s.All.TailWaitS}
	}
	tail, control := do(true), do(false)
	if tail.n == 0 || tail.wait < 1.9*float64(tail.n) || !strings.Contains(tail.out, "unterminated response streams (2.") ||
		!strings.Contains(tail.out, "so this lowered the throughput") {
		t.Fatalf("%d tail waits, %v s:\n%s", tail.n, tail.wait, tail.out)
	}
	if control.n != 0 || strings.Contains(control.out, "VUs waited") {
		t.Fatalf("control: %d tail waits\n%s", control.n, control.out)
	}
	t.Logf("throughput %.1f ops/s with unterminated tails, %.1f ops/s on the control; VUs waited %.1f s on %d tails", tail.rate, control.rate, tail.wait, tail.n)
}
