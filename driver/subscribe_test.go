package driver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// updates records a session's subscription events.
type updates struct {
	mu  sync.Mutex
	evs []driver.ResourceUpdate
}

func (u *updates) add(e driver.ResourceUpdate) {
	u.mu.Lock()
	u.evs = append(u.evs, e)
	u.mu.Unlock()
}

// summary renders the events: kind (and latency).
func (u *updates) summary() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	names := map[driver.UpdateKind]string{driver.UpdateChange: "change", driver.UpdateNotified: "notified", driver.UpdateUnmatched: "unmatched", driver.UpdateUnnotified: "unnotified"}
	var out []string
	for _, e := range u.evs {
		s := names[e.Kind]
		if e.Kind == driver.UpdateNotified {
			s += " " + e.Latency().String()
		}
		out = append(out, s)
	}
	return out
}

// subscriptionFake serves subscribe/unsubscribe, a GET stream, and a
// touch tool that notifies the update on the GET stream after its
// argument ms (none when hold), then answers; fail: a JSON-RPC error.
func subscriptionFake() *mcptest.Server {
	fake := mcptest.New()
	get := make(chan map[string]any, 16)
	fake.Handle(mcptest.K("GET", "s1", "", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.StartSSE()
		w.Flush()
		for {
			select {
			case m := <-get:
				w.Events(mcptest.Event{Data: m})
			case <-r.Ctx.Done():
				return
			}
		}
	})
	ok := func(w *mcptest.Writer, r *mcptest.Request) { w.Result(r, map[string]any{}) }
	fake.Handle(mcptest.K("POST", "s1", "resources/subscribe", ""), ok)
	fake.Handle(mcptest.K("POST", "s1", "resources/unsubscribe", ""), ok)
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		var p struct {
			Arguments struct {
				URI  string `json:"uri"`
				MS   int    `json:"ms"`
				Hold bool   `json:"hold"`
				Fail bool   `json:"fail"`
			} `json:"arguments"`
		}
		json.Unmarshal(r.Params, &p)
		a := p.Arguments
		if a.Fail {
			w.JSON(http.StatusOK, mcptest.ErrorResponse(r.ID, -32602, "no such resource"))
			return
		}
		time.Sleep(time.Duration(a.MS) * time.Millisecond)
		if !a.Hold {
			get <- note("notifications/resources/updated", map[string]any{"uri": a.URI})
		}
		time.Sleep(5 * time.Millisecond)
		w.Result(r, map[string]any{"content": []any{}})
	})
	return fake
}

// The latency of an update runs from the change's send to the
// notification's arrival: with the fake clock it is exactly the delay the
// server put in. Each notification matches the oldest pending change, a
// notification of no change is unmatched, a change never notified is
// unnotified at Close, and changes that failed or were made while not
// subscribed are due nothing.
func TestSubscriptionUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var u updates
		s, _, stop := pipeSession(t, subscriptionFake(), func(c *driver.Config) { c.OnResourceUpdate = u.add })
		defer stop()
		if err := s.OpenStream(t.Context()); err != nil {
			t.Fatal(err)
		}
		op := func(method, params, changes string) {
			t.Helper()
			o, err := driver.NewOp("", method, []byte(params), false)
			if err != nil {
				t.Fatal(err)
			}
			o.Changes = changes
			var res driver.Result
			s.Do(t.Context(), o, &res)
			synctest.Wait()
		}
		touch := func(args string) { op("tools/call", `{"name":"touch","arguments":`+args+`}`, "x://a") }
		touch(`{"uri":"x://a","ms":7}`) // not subscribed yet: its notification is unmatched
		op("resources/subscribe", `{"uri":"x://a"}`, "")
		touch(`{"uri":"x://a","ms":30}`)
		touch(`{"uri":"x://a","ms":3,"hold":true}`)
		touch(`{"uri":"x://a","ms":20}`) // matched with the held change: the oldest pending
		touch(`{"uri":"x://a","fail":true}`)
		op("resources/unsubscribe", `{"uri":"x://a"}`, "")
		touch(`{"uri":"x://a","hold":true}`) // not subscribed: due nothing
		op("resources/subscribe", `{"uri":"x://a"}`, "")
		touch(`{"uri":"x://a","hold":true}`)
		s.Close(t.Context())
		want := []string{"unmatched", "change", "notified 30ms", "change", "change", "notified 28ms", "change", "change", "unnotified", "unnotified"}
		if d := cmp.Diff(want, u.summary()); d != "" {
			t.Fatalf("subscription events (-want +got):\n%s", d)
		}
	})
}

// observer times, independently of the driver, when each touch request
// went out and when each notifications/resources/updated came in on the
// GET stream, at the transport.
type observer struct {
	base    http.RoundTripper
	mu      sync.Mutex
	sent    []time.Time
	arrived []time.Time
}

func (o *observer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(`"name":"touch"`)) {
			o.mu.Lock()
			o.sent = append(o.sent, time.Now())
			o.mu.Unlock()
		}
	}
	resp, err := o.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet {
		resp.Body = &arrivals{ReadCloser: resp.Body, o: o}
	}
	return resp, err
}

// arrivals stamps every read of the GET stream that holds an update.
type arrivals struct {
	io.ReadCloser
	o *observer
}

func (a *arrivals) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	if c := bytes.Count(p[:n], []byte("notifications/resources/updated")); c > 0 {
		now := time.Now()
		a.o.mu.Lock()
		for range c {
			a.o.arrived = append(a.o.arrived, now)
		}
		a.o.mu.Unlock()
	}
	return n, err
}

// Against the go-sdk server, every touch of a subscribed resource is
// notified once, and each latency the driver reports agrees within 2 ms
// with the one timed at the transport (request out → notification bytes
// in), an independent clock on the same events.
func TestSubscriptionLatencyRefServer(t *testing.T) {
	srv, err := refserver.Start(t.Context(), "", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	obs := &observer{base: http.DefaultTransport}
	var u updates
	s, err := driver.NewSession(&driver.Config{URL: srv.URL(), HTTPClient: &http.Client{Transport: obs}, OnResourceUpdate: u.add}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ir driver.Result
	if err := s.Initialize(t.Context(), &ir); err != nil {
		t.Fatal(err)
	}
	if err := s.OpenStream(t.Context()); err != nil {
		t.Fatal(err)
	}
	sub, _ := driver.NewOp("", "resources/subscribe", []byte(`{"uri":"mcpbench://items/1"}`), false)
	do(t, s, sub)
	touch, _ := driver.NewOp("", "tools/call", []byte(`{"name":"touch","arguments":{"uri":"mcpbench://items/1"}}`), false)
	touch.Changes = "mcpbench://items/1"
	const n = 20
	for range n {
		do(t, s, touch)
		waitFor(t, "the update", func() bool {
			obs.mu.Lock()
			defer obs.mu.Unlock()
			return len(obs.arrived) == len(obs.sent)
		})
	}
	s.Close(t.Context())
	var lat []time.Duration
	u.mu.Lock()
	for _, e := range u.evs {
		switch e.Kind {
		case driver.UpdateNotified:
			lat = append(lat, e.Latency())
		case driver.UpdateUnmatched, driver.UpdateUnnotified:
			t.Errorf("event %+v: want every touch notified, once", e)
		}
	}
	u.mu.Unlock()
	if len(lat) != n || len(obs.sent) != n || len(obs.arrived) != n {
		t.Fatalf("%d latencies, %d touches sent, %d notifications seen at the transport; want %d each", len(lat), len(obs.sent), len(obs.arrived), n)
	}
	// The driver stamps its send before the transport's and its arrival
	// after the transport's read, so its latency is never shorter than
	// the transport's (2 ms of slack for the clocks' granularity), and
	// typically (the median) within 2 ms of it: a loaded machine may
	// deschedule the reader between the two stamps now and then, so one
	// sample far apart is the machine, the median is the driver.
	var worst time.Duration
	var diffs []time.Duration
	for i, l := range lat {
		ind := obs.arrived[i].Sub(obs.sent[i])
		d := l - ind
		worst = max(worst, d.Abs())
		diffs = append(diffs, d.Abs())
		if d < -2*time.Millisecond {
			t.Errorf("touch %d: driver %v, transport %v: the driver's latency is shorter than the wire's by more than 2ms", i, l, ind)
		}
	}
	slices.Sort(diffs)
	if med := diffs[len(diffs)/2]; med > 2*time.Millisecond {
		t.Errorf("the driver's latencies and the transport's are %v apart at the median, want ≤ 2ms (at most %v)", med, worst)
	}
	t.Logf("%d updates: the driver's latencies and the transport's differ by %v at most", n, worst)
}
