package workload

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
)

// listenFake speaks 2026-07-28; its first held subscriptions/listen
// streams stay open until the client closes them, every later one ends at
// once after a 700 ms retry hint, as mcp-go's do: the client re-opens
// those all the time, storm or not.
func listenFake(held int64) *mcptest.Server {
	fake := mcptest.New()
	fake.SessionID = ""
	var listens atomic.Int64
	fake.Handle(mcptest.K("POST", mcptest.Any, mcptest.Any, mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
		switch r.RPCMethod {
		case "server/discover":
			w.Result(r, map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "fake", "version": "0"}, "resultType": "complete"})
		case "subscriptions/listen":
			w.Events(mcptest.Event{Retry: 700, Comment: "listening"})
			if listens.Add(1) <= held {
				<-r.Ctx.Done()
			}
		default:
			w.Result(r, map[string]any{"resultType": "complete", "content": []any{}})
		}
	})
	return fake
}

// runListenStorm runs 7 VUs with listen streams (held of them kept open by
// the server) through a storm at 2 s of a 6 s run.
func runListenStorm(t *testing.T, held int64) *results.Summary {
	t.Helper()
	p := echoProfile()
	p.VUs, p.Duration, p.GETStream = 7, profile.Duration(6*time.Second), true
	p.ThinkTime = profile.Duration(100 * time.Millisecond)
	p.Protocol = "2026-07-28"
	p.Chaos = &chaos.Plan{Storm: &chaos.Storm{At: profile.Duration(2 * time.Second), Target: chaos.TargetGET}}
	return runFake(t, p, listenFake(held))
}

// A storm that finds no stream open cuts nothing, and causes no reconnect:
// the listen streams' normal re-opens around it are counted apart (issue
// 20: "0 streams cut by storms" beside "Storm at 3.0s: 32 reconnect
// attempts … wave 3320 ms wide").
func TestStormThatCutsNothingCausesNoReconnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum := runListenStorm(t, 0)
		if len(sum.Storms) != 1 {
			t.Fatalf("storms %+v", sum.Storms)
		}
		w := sum.Storms[0]
		if sum.Chaos.StormCuts != 0 || w.Cuts != 0 || w.Attempts != 0 || w.Early != 0 || w.PeakPerSec != 0 {
			t.Fatalf("storm %+v (%d storm cuts): want nothing cut, no reconnect caused", w, sum.Chaos.StormCuts)
		}
		// 7 streams re-opened every 700 ms: about 10/s, before and after.
		if w.Normal < 20 || w.NormalPerSec < 5 {
			t.Fatalf("normal re-opens %d (%.1f/s before): want the listen streams' re-opens counted apart", w.Normal, w.NormalPerSec)
		}
		var out bytes.Buffer
		report.WriteText(&out, sum)
		if line := stormLine(out.String()); !strings.Contains(line, "Storm at 2.0s: no reconnect attempt followed the cut: 0 reconnect attempts caused by its 0 cuts (no wave to time); beside them") {
			t.Fatalf("storm line %q", line)
		}
	})
}

// A storm that cuts the 3 held streams causes exactly 3 reconnects, while
// the other 4 streams go on re-opening beside it.
func TestStormCountsTheReconnectsItsCutsCaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum := runListenStorm(t, 3)
		if len(sum.Storms) != 1 {
			t.Fatalf("storms %+v", sum.Storms)
		}
		w := sum.Storms[0]
		if sum.Chaos.StormCuts != 3 || w.Cuts != 3 || w.Attempts != 3 {
			t.Fatalf("storm %+v (%d storm cuts): want 3 cuts and their 3 reconnects", w, sum.Chaos.StormCuts)
		}
		if w.FirstMS < 700 || w.LastMS > 700+10 {
			t.Fatalf("storm %+v: want the 3 re-opens after the 700 ms hint", w)
		}
		if w.Normal < 20 {
			t.Fatalf("normal re-opens %d: want the 4 short streams' re-opens beside", w.Normal)
		}
		var out bytes.Buffer
		report.WriteText(&out, sum)
		if line := stormLine(out.String()); !strings.Contains(line, "Storm at 2.0s: 3 reconnect attempts caused by its 3 cuts, peak") {
			t.Fatalf("storm line %q", line)
		}
	})
}

func stormLine(text string) string {
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, "Storm at ") {
			return l
		}
	}
	return ""
}
