package launch

import (
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// slowDupFake answers every tools/call after 400 ms with progress 1
// twice (a duplicated message: every stream faulty) and the response, so
// the ops sent in the window's last 400 ms end in the graceful stop after
// it.
func slowDupFake(calls *atomic.Int64) *mcptest.Server {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		calls.Add(1)
		select {
		case <-time.After(400 * time.Millisecond):
		case <-r.Ctx.Done():
			return
		}
		tok := r.ProgressToken()
		w.Events(mcptest.Event{Data: mcptest.Progress(tok, 1, 2)}, mcptest.Event{Data: mcptest.Progress(tok, 1, 2)},
			mcptest.Event{Data: mcptest.Progress(tok, 2, 2)}, mcptest.Event{Data: mcptest.Response(r.ID, map[string]any{"content": []any{}})})
	})
	return fake
}

// The soak's correctness verdict counts the faulty streams the summary
// counts, those of ops that ended after the window included (the soak
// said 1708 where the summary and intervals.csv said 1709).
func TestSoakFaultyAgreesWithSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a soak for 2 s")
	}
	var calls atomic.Int64
	srv := httptest.NewServer(slowDupFake(&calls))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "soak")
	p := toolProfile(t, "smoke", "work", nil, true, "rate", 20.0, "duration", 2*time.Second, "warmup", time.Duration(0))
	p.URL = srv.URL
	_, errs, code := testRun(t, Spec{Command: "soak", Profile: p, Out: dir, Quiet: true}, (*Test).Soak)
	if code != int(ExitThresholds) {
		t.Fatalf("exit %d, want 99\n%s", code, errs)
	}
	sum := readSum(t, dir)
	v := verdictOf(t, readSoak(t, dir), "correctness drift")
	if sum.All.Ledger == nil || sum.All.Ledger.Faulty < 10 || int64(v.Value) != sum.All.Ledger.Faulty {
		t.Fatalf("correctness drift counts %v faulty streams, the summary %+v (%d calls)", v.Value, sum.All.Ledger, calls.Load())
	}
}
