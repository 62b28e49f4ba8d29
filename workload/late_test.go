package workload

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
)

// Ops that start late are explained by what made them late. Planted: one
// VU, calls of 30 ms arriving every 20 ms, so op k is due at 20k ms and
// starts at 30k ms: every op from the second on (10k ms late on a
// response time of 10k + 30 ms: over 10 % of it) is a late start, waiting
// for the busy VU (queued), none for the generator or churn; the
// recorder counts the same late starts, and the warning says why.
func TestLateStartQueuedBehindBusyVU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		engineOf := watchEngine(t)
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(30 * time.Millisecond)
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := echoProfile()
		p.VUs, p.MaxVUs, p.Rate, p.Duration = 1, 1, 50, profile.Duration(time.Second)
		sum := runFake(t, p, fake)
		e := engineOf()
		q, w, o := e.late.queued.Load(), e.late.woke.Load(), e.late.other.Load()
		if want := sum.All.Count - 1; q != want || w != 0 || o != 0 || sum.All.LateStarts != want {
			t.Fatalf("late ops queued %d, woke %d, other %d, late starts %d; want %d queued and late starts (all but the first of %d), 0, 0", q, w, o, sum.All.LateStarts, want, sum.All.Count)
		}
		if b := sum.Generator.Bottleneck; !strings.Contains(b, "every VU was busy waiting on the target") {
			t.Errorf("warning %q does not name the busy VUs", b)
		}
	})
}

// Planted: sessions live ~100 ms (churn) and the server takes 40 ms to
// initialize, so the op that finds its session expired waits for the
// replacement (DELETE and initialize) before it is sent: those ops are
// late for churn, none for a busy VU or the generator.
func TestLateStartBehindChurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		engineOf := watchEngine(t)
		fake := okFake()
		fake.Handle(mcptest.K("POST", mcptest.Any, "initialize", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(40 * time.Millisecond)
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Result(r, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "fake", "version": "0"}})
		})
		p := echoProfile()
		p.VUs, p.MaxVUs, p.Rate, p.Duration = 2, 2, 10, profile.Duration(2*time.Second)
		p.Churn.Rate = 20
		sum := runFake(t, p, fake)
		e := engineOf()
		q, w, o := e.late.queued.Load(), e.late.woke.Load(), e.late.other.Load()
		if sum.Sessions.Churned == 0 || o != sum.Sessions.Churned || q != 0 || w != 0 {
			t.Fatalf("churned %d; late ops queued %d, woke %d, other %d: want every replacement's op late for churn, nothing else", sum.Sessions.Churned, q, w, o)
		}
		if b := sum.Generator.Bottleneck; !strings.Contains(b, "replacing churned sessions") {
			t.Errorf("warning %q does not name churn", b)
		}
	})
}

// The cause named is the one of most late ops; a generator that woke late
// is named as such, with its CPU.
func TestLateCausesWhy(t *testing.T) {
	var c lateCauses
	if got := c.why(2, 0.5); !strings.Contains(got, "does not know") {
		t.Errorf("no late op: %q", got)
	}
	c.queued.Add(3)
	c.woke.Add(5)
	c.other.Add(1)
	got := c.why(1, 0.97)
	if !strings.Contains(got, "mcpbench itself woke late for them (5 of 9 late ops)") || !strings.Contains(got, "0.97 cores used, GOMAXPROCS 1") {
		t.Errorf("woke-late majority: %q", got)
	}
	c.queued.Add(3)
	if got := c.why(1, 0.97); !strings.Contains(got, "every VU was busy") {
		t.Errorf("queued majority: %q", got)
	}
}
