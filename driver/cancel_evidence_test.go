package driver_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// The after-cancel verdict rests on what the server's messages prove, not
// on when a busy generator read them: these tests run on real time, many
// requests in flight at once, and must hold with the cores saturated by
// another process (stress-ng --cpu 4).

// cancelTally sums what a set of cancelled ops reported.
type cancelTally struct {
	mu                         sync.Mutex
	cancelled, raced, after, n int
	errs                       []error
}

func (t *cancelTally) add(res *driver.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	if res.Cancelled {
		t.cancelled++
	}
	t.raced += res.CancelRaced
	t.after += res.Ledger.Counts[driver.VerdictAfterCancel]
	if res.Err != nil && len(t.errs) < 3 {
		t.errs = append(t.errs, res.Err)
	}
}

// runCancelLanes runs calls ops of op on each of n lanes of s at once.
func runCancelLanes(t *testing.T, s *driver.Session, n, calls int, op *driver.Op, tally *cancelTally) {
	t.Helper()
	var wg sync.WaitGroup
	for _, l := range s.Lanes(n) {
		wg.Go(func() {
			for range calls {
				var res driver.Result
				l.Do(t.Context(), op, &res)
				tally.add(&res)
			}
		})
	}
	wg.Wait()
}

// A server that ignores cancels (it answers with progress and a success
// result after acknowledging each cancel) is counted exactly: every
// message it wrote after a cancel is after-cancel, none raced — with 8
// requests in flight. On fake time: a generator stalled long enough reads
// the answer's headers only after it sent the cancel, and then nothing
// proves the server knew the request first (raced, by design).
func TestCancelEvidenceIgnorerCountedExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		ci := &mcptest.CancelIgnorer{Work: 200 * time.Millisecond, Late: 10 * time.Millisecond}
		ci.Install(fake)
		s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.Seed = 3 })
		defer stop()
		op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"slow"}`), true)
		op.Cancel = &driver.Cancel{After: 50 * time.Millisecond, P: 0.5}
		var tally cancelTally
		runCancelLanes(t, s, 8, 6, op, &tally)
		if tally.errs != nil {
			t.Fatalf("errors: %v", tally.errs)
		}
		if tally.cancelled == 0 || tally.cancelled == tally.n {
			t.Fatalf("%d of %d calls cancelled: want some, not all (p 0.5)", tally.cancelled, tally.n)
		}
		if int64(tally.after) != ci.Planted() || tally.raced != 0 || int64(tally.cancelled) != ci.Cancels() {
			t.Fatalf("after-cancel %d, raced %d, cancelled %d; the server planted %d messages after %d cancels", tally.after, tally.raced, tally.cancelled, ci.Planted(), ci.Cancels())
		}
	})
}

// stopper answers a tools/call over SSE (priming event first) after work
// with a success result, unless a cancel for it comes first: then it stops
// and answers an error result ("context canceled", as the go-sdk does)
// late after the acknowledgement — the answer a loaded generator reads
// well after the cancel's round trip.
type stopper struct {
	work, late time.Duration
	mu         sync.Mutex
	calls      map[string]chan struct{}
}

func (st *stopper) install(fake *mcptest.Server) {
	st.calls = map[string]chan struct{}{}
	fake.Handle(mcptest.K("POST", "s1", "notifications/cancelled", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		json.Unmarshal(r.Params, &p)
		st.mu.Lock()
		ch := st.calls[string(p.RequestID)]
		delete(st.calls, string(p.RequestID))
		st.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		if ch != nil {
			close(ch)
		}
	})
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		ch := make(chan struct{})
		st.mu.Lock()
		st.calls[string(r.ID)] = ch
		st.mu.Unlock()
		w.Events(mcptest.Event{ID: "p", EmptyData: true})
		result := map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
		select {
		case <-time.After(st.work):
		case <-ch:
			time.Sleep(st.late)
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "context canceled"}}, "isError": true}
		}
		w.Events(mcptest.Event{ID: "r", Data: mcptest.Response(r.ID, result)})
	})
}

// A server that stops on the cancel but still answers it with an error
// result, late, is clean: the error says it stopped (raced, never
// after-cancel), however late it is read. The timing rule this replaces
// counted every such answer read later than the acknowledgement plus the
// cancel's round trip.
func TestCancelEvidenceErrorAnswerClean(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		(&stopper{work: 200 * time.Millisecond, late: 30 * time.Millisecond}).install(fake)
		s, _, stop := pipeSession(t, fake, nil)
		defer stop()
		op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"slow"}`), true)
		op.Cancel = &driver.Cancel{After: 50 * time.Millisecond, P: 0.5}
		var tally cancelTally
		runCancelLanes(t, s, 4, 10, op, &tally)
		if tally.errs != nil {
			t.Fatalf("errors: %v", tally.errs)
		}
		if tally.cancelled == 0 || tally.after != 0 || tally.raced != tally.cancelled {
			t.Fatalf("cancelled %d, after-cancel %d, raced %d: want every cancelled call's error answer raced, none after-cancel", tally.cancelled, tally.after, tally.raced)
		}
	})
}

// The same stopping server on real time with 8 requests in flight (the
// load that made the timing rule misjudge): clean.
func TestCancelEvidenceErrorAnswerCleanLoaded(t *testing.T) {
	fake := mcptest.New()
	(&stopper{work: 200 * time.Millisecond, late: 5 * time.Millisecond}).install(fake)
	s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.StreamIdleTimeout = 5 * time.Second })
	defer stop()
	op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"slow"}`), true)
	op.Cancel = &driver.Cancel{After: 50 * time.Millisecond, P: 0.5}
	var tally cancelTally
	runCancelLanes(t, s, 8, 4, op, &tally)
	if tally.errs != nil {
		t.Fatalf("errors: %v", tally.errs)
	}
	if tally.cancelled == 0 || tally.after != 0 {
		t.Fatalf("cancelled %d, after-cancel %d: want some cancelled, none after-cancel", tally.cancelled, tally.after)
	}
}

// The reference server (the go-sdk with cancels honoured) is clean with
// 32 sessions cancelling at once on loopback.
func TestCancelEvidenceRefServerLoaded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server")
	}
	srv, err := refserver.Start(t.Context(), "", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"slow","arguments":{"ms":200}}`), true)
	op.Cancel = &driver.Cancel{After: 50 * time.Millisecond, P: 0.5}
	var tally cancelTally
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			s, err := driver.NewSession(&driver.Config{URL: srv.URL(), Seed: int64(i)}, i+1)
			if err != nil {
				t.Error(err)
				return
			}
			var ir driver.Result
			if err := s.Initialize(t.Context(), &ir); err != nil {
				t.Error(err)
				return
			}
			defer s.Close(t.Context())
			for range 4 {
				var res driver.Result
				s.Do(t.Context(), op, &res)
				tally.add(&res)
			}
		})
	}
	wg.Wait()
	if tally.errs != nil {
		t.Fatalf("errors: %v", tally.errs)
	}
	if tally.cancelled == 0 || tally.after != 0 {
		t.Fatalf("cancelled %d, after-cancel %d: want some cancelled, none after-cancel", tally.cancelled, tally.after)
	}
	// A cancel can overtake its call (another connection) or follow its
	// answer: the server counts only those naming a call in flight.
	if got := srv.Stats().Cancels; got == 0 || got > int64(tally.cancelled) {
		t.Fatalf("the server counted %d cancels of calls in flight, the driver cancelled %d calls", got, tally.cancelled)
	}
}
