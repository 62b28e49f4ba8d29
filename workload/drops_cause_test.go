package workload

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
)

// A 20 ms tool behind 4 workers (200 calls/s at most) offered 400/s: the
// server is saturated — its service time rises with the VUs in flight —
// long before the 2000-VU cap. The drop cause says so, not that VUs could
// not be added fast enough (issue 20: "VUs could not be added fast enough
// (300 of max 2000)" while the handler's p50 was 73 ms for a 20 ms tool).
func TestDropCauseIsSaturationBelowTheVUCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		workers := make(chan struct{}, 4)
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "initialize", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
			workers <- struct{}{} // new sessions queue behind the calls
			time.Sleep(time.Millisecond)
			<-workers
			initResult(w, r)
		})
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			workers <- struct{}{}
			time.Sleep(20 * time.Millisecond)
			<-workers
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs, p.Duration = 400, 1, 2000, profile.Duration(6*time.Second)
		sum := runFake(t, p, fake)
		w := sum.DropWarning
		if sum.DroppedRate < 0.01 || sum.VUs >= 2000 {
			t.Fatalf("dropped %.1f%% with %d VUs: want drops below the cap", 100*sum.DroppedRate, sum.VUs)
		}
		if !strings.Contains(w, "cause: the target is saturated: its service time") || !strings.Contains(w, "of max 2000 VUs were started, and more would only queue more work") || strings.Contains(w, "could not be added fast enough") {
			t.Fatalf("warning %q", w)
		}
		if testing.Verbose() {
			t.Log(w)
		}
	})
}

// Sessions that take 400 ms to initialize (4 at a time: 10 VUs/s), on a
// server whose service time stays at 50 ms, offered 1000/s (50 VUs in
// flight): the VUs could not be added fast enough, and the target is not
// blamed.
func TestDropCauseIsSlowSpawningWhenServiceStaysFlat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "initialize", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(400 * time.Millisecond)
			initResult(w, r)
		})
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(50 * time.Millisecond)
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs, p.Duration = 1000, 1, 2000, profile.Duration(6*time.Second)
		sum := runFake(t, p, fake)
		w := sum.DropWarning
		if sum.DroppedRate < 0.01 || !strings.Contains(w, "cause: VUs could not be added fast enough") {
			t.Fatalf("dropped %.1f%% with %d VUs, warning %q", 100*sum.DroppedRate, sum.VUs, w)
		}
	})
}

// initResult answers initialize as mcptest's default handler does.
func initResult(w *mcptest.Writer, r *mcptest.Request) {
	var in struct {
		V string `json:"protocolVersion"`
	}
	json.Unmarshal(r.Params, &in) //nolint:errcheck // the version echoed back, "" when absent
	w.Header().Set("Mcp-Session-Id", "s1")
	w.Result(r, map[string]any{"protocolVersion": in.V, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "fake", "version": "0"}})
}
