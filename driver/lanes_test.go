package driver_test

import (
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// runLanes runs calls ops on each of n lanes of s at once and returns
// every result.
func runLanes(t *testing.T, s *driver.Session, n, calls int, op *driver.Op) []driver.Result {
	t.Helper()
	lanes := s.Lanes(n)
	if len(lanes) != n {
		t.Fatalf("Lanes(%d) gave %d", n, len(lanes))
	}
	out := make([]driver.Result, n*calls)
	var wg sync.WaitGroup
	for k, l := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				l.Do(t.Context(), op, &out[k*calls+i])
			}
		}()
	}
	wg.Wait()
	return out
}

// ledgerTotals sums the verdicts of results by name, and counts errors.
func ledgerTotals(rs []driver.Result) (map[string]int, int) {
	var sum [driver.NumVerdicts]int
	errs := 0
	for i := range rs {
		for v, c := range rs[i].Ledger.Counts {
			sum[v] += c
		}
		if rs[i].Err != nil {
			errs++
		}
	}
	return driver.VerdictMap(sum), errs
}

// A server that writes some progress notifications of one call on the
// stream of another call of the same session in flight: each is judged
// misrouted exactly once (on the stream it came on, with both request
// ids in the evidence), and none is lost for its own request.
func TestLanesMisroutedAsPlanted(t *testing.T) {
	fake := mcptest.New()
	mr := &mcptest.Misrouter{Steps: 4, Every: 2, Gap: time.Millisecond}
	mr.Install(fake)
	s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.StreamIdleTimeout = 5 * time.Second })
	defer stop()
	op, _ := driver.NewOp("progress", "tools/call", []byte(`{"name":"progress"}`), true)
	op.ExpectProgress = 4
	rs := runLanes(t, s, 4, 25, op)
	got, errs := ledgerTotals(rs)
	if mr.Planted() == 0 {
		t.Fatal("no call overlapped another: nothing planted (the test proves nothing)")
	}
	want := map[string]int{"misrouted": int(mr.Planted())}
	if d := cmp.Diff(want, got); d != "" || errs != 0 {
		t.Fatalf("verdicts (-want +got, %d planted over %d calls):\n%s errors %d", mr.Planted(), mr.Calls(), d, errs)
	}
	both := regexp.MustCompile(`^misrouted: progress \d of request (\d+) \(in flight on another lane\) arrived on the stream of request (\d+)$`)
	seen, capped := 0, 0 // evidence is kept for the first MaxEvidence faults of a stream
	for i := range rs {
		capped += min(rs[i].Ledger.Counts[driver.VerdictMisrouted], driver.MaxEvidence)
		for _, ev := range rs[i].Ledger.Evidence {
			m := both.FindStringSubmatch(ev)
			if m == nil {
				t.Fatalf("evidence %q does not name both requests", ev)
			}
			if m[1] == m[2] {
				t.Fatalf("evidence %q: the same request twice", ev)
			}
			seen++
		}
	}
	if seen != capped {
		t.Fatalf("%d evidence lines for %d planted (%d expected with the cap)", seen, mr.Planted(), capped)
	}
}

// The official go-sdk server keeps each call's notifications on its own
// stream: four lanes of one session with progress streams and a GET
// stream open stay clean, and every call ran once.
func TestLanesCleanOnRefServer(t *testing.T) {
	srv := startRef(t, refserver.ModeStateful)
	cfg := &driver.Config{URL: srv.URL(), RequestTimeout: 10 * time.Second}
	s, err := driver.NewSession(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatal(err)
	}
	if err := s.OpenStream(t.Context()); err != nil {
		t.Fatal(err)
	}
	op, _ := driver.NewOp("progress", "tools/call", []byte(`{"name":"progress","arguments":{"count":3,"interval_ms":1}}`), true)
	op.ExpectProgress = 3
	before := srv.Stats().ToolCalls
	rs := runLanes(t, s, 4, 30, op)
	got, errs := ledgerTotals(rs)
	if len(got) != 0 || errs != 0 {
		t.Fatalf("verdicts %v, errors %d against a correct server", got, errs)
	}
	for i := range rs {
		if rs[i].Progress != 3 {
			t.Fatalf("call %d got %d progress notifications on its stream, want 3", i, rs[i].Progress)
		}
	}
	if n := srv.Stats().ToolCalls - before; n != 120 {
		t.Fatalf("server ran %d calls, want 120", n)
	}
	s.Close(t.Context())
	if st := s.StreamStats(); st.Ledger.Faulty() {
		t.Fatalf("GET stream ledger %v", driver.VerdictMap(st.Ledger.Counts))
	}
}

// When the session disappears (404) under four lanes, it is
// re-initialized once, not once per lane, and every call then succeeds.
func TestLanesReinitializeOnce(t *testing.T) {
	fake := mcptest.New()
	var mu sync.Mutex
	gone := false
	fake.Handle(mcptest.K("POST", "s1", "tools/call", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
		mu.Lock()
		g := gone
		mu.Unlock()
		if g {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Result(r, map[string]any{"content": []any{}})
	})
	fake.Handle(mcptest.K("POST", "s2", "tools/call", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"content": []any{}})
	})
	s, _, stop := pipeSession(t, fake, nil)
	defer stop()
	mu.Lock()
	gone, fake.SessionID = true, "s2"
	mu.Unlock()
	op, _ := driver.NewOp("echo", "tools/call", []byte(`{"name":"echo"}`), false)
	rs := runLanes(t, s, 4, 5, op)
	reinits := 0
	for i := range rs {
		if rs[i].Err != nil {
			t.Fatalf("call %d: %v", i, rs[i].Err)
		}
		reinits += rs[i].Reinits
	}
	inits := len(fake.Find(mcptest.K("POST", mcptest.Any, "initialize", mcptest.Any)))
	if inits != 2 || reinits != 1 || s.ID() != "s2" {
		t.Fatalf("initialize sent %d times, reinits %d, session %q; want 2 (the first and one re-initialize), 1, s2", inits, reinits, s.ID())
	}
}

// A server answering a call as JSON sends the call's progress on the GET
// stream just after the response: the request waits a little for them
// (its expectation says two are due), so they are misrouted, not lost
// (before the fix the request stopped listening while it waited, and
// counted both lost).
func TestProgressOnGETStreamAfterJSONResponse(t *testing.T) {
	fake := mcptest.New()
	toks := make(chan string, 1)
	fake.Handle(mcptest.K("GET", "s1", "", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.StartSSE()
		w.Flush()
		select {
		case tok := <-toks:
			w.Events(mcptest.Event{Data: mcptest.Progress(tok, 1, 2)}, mcptest.Event{Data: mcptest.Progress(tok, 2, 2)})
		case <-r.Ctx.Done():
		}
		<-r.Ctx.Done()
	})
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"content": []any{}})
		w.Flush()
		toks <- r.ProgressToken()
	})
	s, _, stop := pipeSession(t, fake, nil)
	defer stop()
	if err := s.OpenStream(t.Context()); err != nil {
		t.Fatal(err)
	}
	op, _ := driver.NewOp("p", "tools/call", []byte(`{"name":"p"}`), true)
	op.ExpectProgress = 2
	res := do(t, s, op)
	if got := driver.VerdictMap(res.Ledger.Counts); !cmp.Equal(got, map[string]int{"misrouted": 2}) {
		t.Fatalf("request's verdicts %v, want misrouted 2", got)
	}
	s.Close(t.Context())
	if st := s.StreamStats(); st.Ledger.Faulty() {
		t.Fatalf("the GET stream judged them too: %v", driver.VerdictMap(st.Ledger.Counts))
	}
}
