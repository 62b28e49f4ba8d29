package chaos

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/httpclient"
)

// Wrap returns VU vu's transport: rt with the plan's faults. With an empty
// plan it returns rt itself, so chaos off costs nothing.
func (in *Injector) Wrap(vu int, rt http.RoundTripper) http.RoundTripper {
	if in == nil || in.plan.Empty() {
		return rt
	}
	return &transport{rt: rt, vuState: &vuState{in: in, vu: vu,
		rngPOST: rng(in.seed, vu, streamPOST), rngGET: rng(in.seed, vu, streamGET), rngReq: rng(in.seed, vu, streamReq),
		rngInit: rng(in.seed, vu, streamInit)}}
}

// transport is one VU's fault-injecting RoundTripper.
type transport struct {
	*vuState
	rt http.RoundTripper
}

// vuState is a VU's fault schedule, shared by the transports of its
// sessions.
type vuState struct {
	in *Injector
	vu int

	mu                               sync.Mutex
	rngPOST, rngGET, rngReq, rngInit *rand.Rand
	log                              []Applied // decisions applied, in order (for tests)
}

var _ httpclient.PerSession = (*transport)(nil)

// ForSession gives a session the connections of its own that the
// transport under it offers (HTTP/2: one connection per session), under
// the same VU's fault schedule; t itself when there are none
// (httpclient.PerSession).
func (t *transport) ForSession() http.RoundTripper {
	fs, ok := t.rt.(httpclient.PerSession)
	if !ok {
		return t
	}
	srt := fs.ForSession()
	if srt == t.rt {
		return t
	}
	return &transport{vuState: t.vuState, rt: srt}
}

// CloseIdleConnections closes the connections of the transport under it
// (a session's own, when ForSession gave them).
func (t *transport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Applied records one stream's decision as applied.
type Applied struct {
	GET      bool
	Decision Decision
}

// RoundTrip implements http.RoundTripper. A body fault is drawn for every
// request of a kind (so the k-th request of a VU always meets the same
// fault); count- and byte-triggered faults act on SSE answers only; a
// random-time fault ("between") is timed from when the request is sent, so
// it can also cut a request whose answer has not begun (the round trip
// then fails with ErrReset, as when the connection drops).
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodPost {
		return t.rt.RoundTrip(req)
	}
	k := kindOf(req)
	phase := phaseOf(req.Context())
	get := k == kindGET
	if t.in.hasDelays() {
		t.mu.Lock()
		d := t.in.decideDelay(t.rngFor(k, true), k)
		t.mu.Unlock()
		if d > 0 {
			t.in.count(countDelay, phase)
			tm := time.NewTimer(d)
			select {
			case <-tm.C:
			case <-req.Context().Done():
				tm.Stop()
				if req.Body != nil {
					req.Body.Close()
				}
				return nil, context.Cause(req.Context())
			}
		}
	}
	dec := Decision{Fault: -1}
	if t.in.hasBodyFaults() {
		t.mu.Lock()
		dec = t.in.decideBody(t.rngFor(k, false), k)
		t.log = append(t.log, Applied{GET: get, Decision: dec})
		t.mu.Unlock()
	}
	var f *Fault
	if dec.Fault >= 0 {
		ff := t.in.plan.Faults[dec.Fault]
		f = &ff
	}
	var pend *pending
	if f != nil && len(f.When.Between) == 2 {
		ctx, cancel := context.WithCancel(req.Context())
		req = req.WithContext(ctx)
		pend = &pending{cancel: cancel, close: f.Close, in: t.in, phase: phase}
		pend.timer = time.AfterFunc(dec.At, pend.fire)
	}
	resp, err := t.rt.RoundTrip(req)
	if pend != nil && pend.cutBeforeAnswer(err) {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, ErrReset
	}
	if err != nil || resp.StatusCode != http.StatusOK || !isSSE(resp.Header.Get("Content-Type")) {
		if pend != nil {
			pend.timer.Stop()
			pend.cancel()
		}
		return resp, err
	}
	storm := t.in.plan.Storm != nil && k != kindInit && t.in.plan.Storm.Target.matches(k)
	if f == nil && !storm {
		return resp, nil
	}
	b := &body{rc: resp.Body, in: t.in, get: get, f: f, phase: phase}
	if storm {
		t.in.register(b)
	}
	resp.Body = b
	if pend != nil {
		pend.attach(b)
	}
	return resp, nil
}

// rngFor returns the generator of a request kind: POST streams, GET
// streams, set-up requests and delays draw from separate sequences, so the
// k-th operation stream of a VU meets the same fault however many set-up
// requests came before it (t.mu held).
func (t *transport) rngFor(k kind, delay bool) *rand.Rand {
	switch {
	case k == kindInit:
		return t.rngInit
	case delay:
		return t.rngReq
	case k == kindGET:
		return t.rngGET
	}
	return t.rngPOST
}

// pending is a random-time cut in flight: it aborts the request if it fires
// before the answer's headers, else cuts the body (or stalls it).
type pending struct {
	in     *Injector
	cancel context.CancelFunc
	close  Close
	timer  *time.Timer
	phase  Phase

	mu      sync.Mutex
	fired   bool
	aborted bool
	b       *body
}

func (p *pending) fire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fired = true
	if p.b != nil {
		go p.b.trigger()
		return
	}
	p.aborted = true
	if p.close == CloseFIN {
		p.in.count(countFIN, p.phase)
	} else {
		p.in.count(countRST, p.phase)
	}
	p.cancel()
}

// cutBeforeAnswer reports whether the timer aborted the round trip.
func (p *pending) cutBeforeAnswer(err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.aborted
}

// attach hands the timer to the answer's body.
func (p *pending) attach(b *body) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.timer = p.timer
	if p.fired {
		go b.trigger()
		return
	}
	p.b = b
}

// Log returns the decisions a VU transport made so far (for tests).
func Log(rt http.RoundTripper) []Applied {
	t, ok := rt.(*transport)
	if !ok {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Applied(nil), t.log...)
}

func isSSE(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}
