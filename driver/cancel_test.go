package driver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// cancelFake is a fake's tools/call that reacts to notifications/cancelled
// the way servers do (how), after a priming event.
type cancelFake struct {
	how     string
	mu      sync.Mutex
	streams map[string]chan string // request id → what the cancel asks of the call
}

func newCancelFake(how string) (*mcptest.Server, *cancelFake) {
	fake := mcptest.New()
	cf := &cancelFake{how: how, streams: map[string]chan string{}}
	fake.Handle(mcptest.K("POST", "s1", "notifications/cancelled", ""), cf.cancelled)
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), cf.call)
	return fake, cf
}

func (cf *cancelFake) cancelled(w *mcptest.Writer, r *mcptest.Request) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	json.Unmarshal(r.Params, &p)
	cf.mu.Lock()
	ch := cf.streams[string(p.RequestID)]
	cf.mu.Unlock()
	if ch != nil {
		ch <- "cancelled"
		if cf.how == "raced" {
			<-ch // the call wrote its response before the cancel is acknowledged
			time.Sleep(10 * time.Millisecond)
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

func (cf *cancelFake) call(w *mcptest.Writer, r *mcptest.Request) {
	ch := make(chan string)
	cf.mu.Lock()
	cf.streams[string(r.ID)] = ch
	cf.mu.Unlock()
	resp := mcptest.Event{ID: "e2", Data: mcptest.Response(r.ID, map[string]any{"content": []any{}})}
	switch cf.how {
	case "fast":
		time.Sleep(10 * time.Millisecond)
		w.Events(resp)
		return
	case "honour-or-answer": // answers after 20 ms unless cancelled before
		select {
		case <-ch:
		case <-time.After(20 * time.Millisecond):
			w.Events(resp)
		}
		return
	}
	if cf.how != "json-ignore" {
		w.Events(mcptest.Event{ID: "e0", EmptyData: true})
	}
	select {
	case <-ch:
	case <-r.Ctx.Done():
		return
	}
	switch cf.how {
	case "ignore": // a server that ignores the cancel: progress and the response after it
		time.Sleep(10 * time.Millisecond)
		w.Events(mcptest.Event{ID: "e1", Data: mcptest.Progress(r.ProgressToken(), 1, 1)}, resp)
	case "json-ignore":
		time.Sleep(10 * time.Millisecond)
		w.Result(r, map[string]any{"content": []any{}})
	case "raced": // the response was on its way when the cancel arrived
		w.Events(resp)
		ch <- "written"
	case "silent": // stops, but keeps the stream open
		<-r.Ctx.Done()
	case "honour": // stops and ends the stream
	}
}

// A cancelled call is judged by what came after the server acknowledged
// the cancel: a server that ignores it (and answers, over SSE or JSON) is
// caught, a message on its way before the acknowledgement is the allowed
// race, a server that stops is clean — whether it ends the stream or
// leaves it open (the op ends CancelGrace after the acknowledgement). A
// call answered before After is not cancelled.
func TestCancelJudged(t *testing.T) {
	const calls = 5
	for _, tc := range []struct {
		how                string
		cancelled, after   int
		raced, cancelsSent int
		service            time.Duration // how long each call held the lane
	}{
		{how: "ignore", cancelled: calls, after: 2 * calls, cancelsSent: calls, service: 60 * time.Millisecond},
		// an application/json answer shows nothing before it: the server may
		// not have known the request when the cancel came (raced)
		{how: "json-ignore", cancelled: calls, raced: calls, cancelsSent: calls, service: 60 * time.Millisecond},
		{how: "raced", cancelled: calls, raced: calls, cancelsSent: calls, service: 60 * time.Millisecond},
		{how: "honour", cancelled: calls, cancelsSent: calls, service: 50 * time.Millisecond},
		{how: "silent", cancelled: calls, cancelsSent: calls, service: 50*time.Millisecond + driver.CancelGrace},
		{how: "fast", service: 10 * time.Millisecond},
	} {
		t.Run(tc.how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake, _ := newCancelFake(tc.how)
				s, _, stop := pipeSession(t, fake, nil)
				defer stop()
				op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"slow"}`), true)
				op.Cancel = &driver.Cancel{After: 50 * time.Millisecond, P: 1}
				var cancelled, raced, errs int
				var sum [driver.NumVerdicts]int
				for range calls {
					var res driver.Result
					s.Do(t.Context(), op, &res)
					if res.Cancelled {
						cancelled++
					}
					raced += res.CancelRaced
					for v, c := range res.Ledger.Counts {
						sum[v] += c
					}
					if res.Err != nil {
						errs++
						t.Errorf("error %v", res.Err)
					}
					if res.ServiceTime() != tc.service {
						t.Errorf("service time %v, want %v", res.ServiceTime(), tc.service)
					}
				}
				want := map[string]int{}
				if tc.after > 0 {
					want["after-cancel"] = tc.after
				}
				if d := cmp.Diff(want, driver.VerdictMap(sum)); d != "" {
					t.Errorf("verdicts (-want +got):\n%s", d)
				}
				sent := fake.Find(mcptest.K("POST", "s1", "notifications/cancelled", ""))
				if cancelled != tc.cancelled || raced != tc.raced || len(sent) != tc.cancelsSent {
					t.Errorf("cancelled %d, raced %d, cancels sent %d; want %d, %d, %d", cancelled, raced, len(sent), tc.cancelled, tc.raced, tc.cancelsSent)
				}
				calls := fake.Find(mcptest.K("POST", "s1", "tools/call", ""))
				for i, c := range sent {
					var p struct {
						RequestID json.RawMessage `json:"requestId"`
					}
					json.Unmarshal(c.Params, &p)
					if !bytes.Equal(p.RequestID, calls[i].ID) {
						t.Errorf("cancel %d names request %s, want %s", i, p.RequestID, calls[i].ID)
					}
				}
			})
		})
	}
}

// Only the share P of calls is drawn for cancellation, from the lane's
// seeded generator: the same seed draws the same calls.
func TestCancelShare(t *testing.T) {
	draw := func() (cancelled []int) {
		synctest.Test(t, func(t *testing.T) {
			fake, _ := newCancelFake("honour-or-answer")
			s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.Seed = 7 })
			defer stop()
			op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"slow"}`), false)
			op.Cancel = &driver.Cancel{After: 10 * time.Millisecond, P: 0.25}
			for i := range 400 {
				var res driver.Result
				s.Do(t.Context(), op, &res)
				if res.Err != nil || res.Ledger.Faulty() {
					t.Fatalf("call %d: %v %v", i, res.Err, res.Ledger.Evidence)
				}
				if res.Cancelled {
					cancelled = append(cancelled, i)
				}
			}
			if n := len(fake.Find(mcptest.K("POST", "s1", "notifications/cancelled", ""))); n != len(cancelled) {
				t.Errorf("%d cancels sent, %d calls cancelled", n, len(cancelled))
			}
		})
		return cancelled
	}
	a, b := draw(), draw()
	if len(a) < 60 || len(a) > 140 {
		t.Errorf("%d of 400 calls cancelled, want about 100 (p 0.25)", len(a))
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("the same seed drew other calls (-first +second):\n%s", d)
	}
}

// countingRT counts notifications/cancelled POSTs.
type countingRT struct {
	base    http.RoundTripper
	cancels atomic.Int64
}

func (c *countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(`"notifications/cancelled"`)) {
			c.cancels.Add(1)
		}
	}
	return c.base.RoundTrip(r)
}

// Against the reference server every cancelled call is clean (nothing
// after the cancel: it stops the tool and keeps the SDK's late error
// response from the client), and the server counted exactly the cancels
// the driver sent. Under 2026-07-28 the cancel closes the stream and no
// notifications/cancelled is sent.
func TestCancelRefServer(t *testing.T) {
	t.Parallel()
	for _, mode := range []refserver.Mode{refserver.ModeStateful, refserver.ModeJSON, refserver.Mode2026} {
		t.Run(string(mode), func(t *testing.T) {
			srv, err := refserver.Start(t.Context(), "", refserver.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			rt := &countingRT{base: http.DefaultTransport}
			cfg := &driver.Config{URL: srv.URL(), HTTPClient: &http.Client{Transport: rt}}
			if mode == refserver.Mode2026 {
				cfg.Protocol = driver.Protocol20260728
			}
			s, err := driver.NewSession(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			var ir driver.Result
			if err := s.Initialize(t.Context(), &ir); err != nil {
				t.Fatal(err)
			}
			defer s.Close(t.Context())
			op, _ := driver.NewOp("", "tools/call", []byte(`{"name":"slow","arguments":{"ms":3000}}`), true)
			op.Cancel = &driver.Cancel{After: 20 * time.Millisecond, P: 1}
			const n = 10
			for range n {
				var res driver.Result
				s.Do(t.Context(), op, &res)
				if !res.Cancelled || res.Err != nil || res.CancelRaced != 0 || res.Ledger.Faulty() {
					t.Fatalf("cancelled %v, err %v, raced %d, ledger %v", res.Cancelled, res.Err, res.CancelRaced, res.Ledger.Evidence)
				}
				if d := res.ServiceTime(); d > time.Second {
					t.Fatalf("a cancelled call took %v: the server did not end it", d)
				}
			}
			sent, got := rt.cancels.Load(), srv.Stats().Cancels
			want := int64(n)
			if mode == refserver.Mode2026 {
				want = 0 // closing the stream is the cancel
			}
			if sent != want || got != want {
				t.Fatalf("notifications/cancelled: %d sent, %d counted by the server; want %d", sent, got, want)
			}
		})
	}
}
