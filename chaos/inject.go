package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrReset is what a reader sees when a stream is cut with RST. It wraps
// syscall.ECONNRESET, as a real reset would.
var ErrReset = fmt.Errorf("chaos: connection reset: %w", syscall.ECONNRESET)

// Decision is what the plan does to one stream (or request, for delays).
type Decision struct {
	// Fault is the index of the body fault (cut or stall) in the plan, -1
	// for none.
	Fault int
	// At is the trigger time for a "between" fault.
	At time.Duration
	// Delay is how long the request is held back (sum of the delays drawn).
	Delay time.Duration
}

// Injector applies a plan. Safe for concurrent use.
type Injector struct {
	plan Plan
	seed int64

	mu      sync.Mutex
	open    map[*body]struct{}
	storm   *time.Timer
	waves   []time.Time
	stopped bool

	// counts[c] are the faults of kind c injected in the measured window;
	// outside those injected in warm-up, set-up or after the window.
	counts  [numCounts]atomic.Int64
	outside atomic.Int64
	window  atomic.Pointer[[2]time.Time] // measured window, for streams
}

// What Stats counts.
const (
	countFIN = iota
	countRST
	countStall
	countDelay
	countStorm
	numCounts
)

// Phase says what a request belongs to; the engine marks each request's
// context (WithPhase). Faults act on the requests of operations (and the
// streams they read) unless they name target=init; counts keep the
// measured window apart from the rest.
type Phase uint8

// Phases.
const (
	// PhaseMeasure: an operation in the measured window (the default for
	// an unmarked request).
	PhaseMeasure Phase = iota
	// PhaseWarmup: an operation of the warm-up.
	PhaseWarmup
	// PhaseSetup: session set-up and teardown (initialize, DELETE, the
	// deleted-session probe): only target=init faults act on it.
	PhaseSetup
	// PhaseStream: a long-lived stream (the standalone GET stream); its
	// faults count by when they fire (Injector.Window).
	PhaseStream
)

type phaseKey struct{}

// WithPhase marks ctx's requests with phase p.
func WithPhase(ctx context.Context, p Phase) context.Context {
	return context.WithValue(ctx, phaseKey{}, p)
}

func phaseOf(ctx context.Context) Phase {
	p, _ := ctx.Value(phaseKey{}).(Phase)
	return p
}

// Window sets the measured window: faults on PhaseStream streams that fire
// inside [from, to) count as measured, the others apart.
func (in *Injector) Window(from, to time.Time) {
	in.window.Store(&[2]time.Time{from, to})
}

// count counts one injected fault of kind c for a request of phase p.
func (in *Injector) count(c int, p Phase) {
	measured := p == PhaseMeasure
	if p == PhaseStream {
		if w := in.window.Load(); w != nil {
			now := time.Now()
			measured = !now.Before(w[0]) && now.Before(w[1])
		} else {
			measured = true
		}
	}
	if measured {
		in.counts[c].Add(1)
	} else {
		in.outside.Add(1)
	}
}

// kind is what a request is, for a fault's target.
type kind uint8

const (
	kindPOST kind = iota // a POST of an operation (its answer may be a stream)
	kindGET              // a GET (standalone stream, resume) or a subscriptions/listen stream
	kindInit             // a set-up request (initialize and the rest of PhaseSetup)
)

// kindOf classifies a request: a 2026-07-28 subscriptions/listen POST is a
// GET-kind stream (it replaces the GET stream).
func kindOf(req *http.Request) kind {
	switch {
	case phaseOf(req.Context()) == PhaseSetup:
		return kindInit
	case req.Method == http.MethodGet || req.Header.Get("Mcp-Method") == "subscriptions/listen":
		return kindGET
	}
	return kindPOST
}

// New returns an injector for plan (after Defaults and Validate); seed is
// used when the plan has none.
func New(plan Plan, seed int64) *Injector {
	in := &Injector{plan: plan, seed: plan.Seed, open: map[*body]struct{}{}}
	if in.seed == 0 {
		in.seed = seed
	}
	return in
}

// Plan returns the plan applied.
func (in *Injector) Plan() Plan { return in.plan }

// rng returns the generator of a VU's stream kind: POST streams, GET
// streams, and requests (delays) draw from separate sequences, so the
// schedule of one does not depend on how many of the others there were.
func rng(seed int64, vu int, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(vu)<<8|stream))
}

const (
	streamPOST = iota
	streamGET
	streamReq
	streamInit
)

// decideBody draws the body fault of the next stream of a kind. It draws
// the same numbers whatever the outcome, so the k-th stream's decision
// depends only on (seed, VU, kind, k).
func (in *Injector) decideBody(r *rand.Rand, k kind) Decision {
	d := Decision{Fault: -1}
	for i := range in.plan.Faults {
		f := &in.plan.Faults[i]
		if f.Action == ActionDelay || !f.Target.matches(k) {
			continue
		}
		roll, frac := r.Float64(), r.Float64()
		if d.Fault >= 0 || roll >= f.Probability {
			continue
		}
		d.Fault = i
		if b := f.When.Between; len(b) == 2 {
			d.At = b[0].D() + time.Duration(frac*float64(b[1].D()-b[0].D()))
		}
	}
	return d
}

// decideDelay draws the delay of the next request of a kind.
func (in *Injector) decideDelay(r *rand.Rand, k kind) time.Duration {
	var total time.Duration
	for i := range in.plan.Faults {
		f := &in.plan.Faults[i]
		if f.Action != ActionDelay || !f.Target.matches(k) {
			continue
		}
		if r.Float64() < f.Probability {
			total += f.Delay.D()
		}
	}
	return total
}

// Schedule returns the decisions for the first n POST streams and the
// first n GET streams of VU vu, as a run with this plan and seed makes
// them (for reproducibility checks and reports).
func (in *Injector) Schedule(vu, n int) (post, get []Decision) {
	rp, rg := rng(in.seed, vu, streamPOST), rng(in.seed, vu, streamGET)
	for range n {
		post = append(post, in.decideBody(rp, kindPOST))
		get = append(get, in.decideBody(rg, kindGET))
	}
	return post, get
}

func (in *Injector) hasDelays() bool {
	for _, f := range in.plan.Faults {
		if f.Action == ActionDelay {
			return true
		}
	}
	return false
}

func (in *Injector) hasBodyFaults() bool {
	for _, f := range in.plan.Faults {
		if f.Action != ActionDelay {
			return true
		}
	}
	return false
}

// Wrap returns VU vu's transport: rt with the plan's faults. With an empty
// plan it returns rt itself, so chaos off costs nothing.
func (in *Injector) Wrap(vu int, rt http.RoundTripper) http.RoundTripper {
	if in == nil || in.plan.Empty() {
		return rt
	}
	return &transport{in: in, rt: rt, vu: vu,
		rngPOST: rng(in.seed, vu, streamPOST), rngGET: rng(in.seed, vu, streamGET), rngReq: rng(in.seed, vu, streamReq),
		rngInit: rng(in.seed, vu, streamInit)}
}

// transport is one VU's fault-injecting RoundTripper.
type transport struct {
	in *Injector
	rt http.RoundTripper
	vu int

	mu                               sync.Mutex
	rngPOST, rngGET, rngReq, rngInit *rand.Rand
	log                              []Applied // decisions applied, in order (for tests)
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

// Applied returns the decisions a VU transport made so far (for tests).
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

func (in *Injector) register(b *body) {
	in.mu.Lock()
	in.open[b] = struct{}{}
	in.mu.Unlock()
}

func (in *Injector) unregister(b *body) {
	in.mu.Lock()
	delete(in.open, b)
	in.mu.Unlock()
}

// Start starts the storm clock: the plan's storm fires At after t0 (and
// every Every after). Call it once, when the run starts.
func (in *Injector) Start(t0 time.Time) {
	s := in.plan.Storm
	if s == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	var fire func()
	next := t0.Add(s.At.D())
	fire = func() {
		in.mu.Lock()
		if in.stopped {
			in.mu.Unlock()
			return
		}
		in.waves = append(in.waves, time.Now())
		var victims []*body
		for b := range in.open {
			k := kindPOST
			if b.get {
				k = kindGET
			}
			if s.Target.matches(k) {
				victims = append(victims, b)
			}
		}
		if s.Every > 0 {
			next = next.Add(s.Every.D())
			in.storm = time.AfterFunc(time.Until(next), fire)
		}
		in.mu.Unlock()
		for _, b := range victims {
			if b.cut(s.Close) {
				in.count(countStorm, b.phase)
			}
		}
	}
	in.storm = time.AfterFunc(time.Until(next), fire)
}

// Stop stops the storm clock.
func (in *Injector) Stop() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.stopped = true
	if in.storm != nil {
		in.storm.Stop()
	}
}

// Stats counts what was injected: the faults of measured operations (and
// of streams, inside the measured window), and apart the rest (warm-up,
// set-up with target=init, after the window).
type Stats struct {
	CutsFIN   int64       `json:"cuts_fin"`
	CutsRST   int64       `json:"cuts_rst"`
	Stalls    int64       `json:"stalls"`
	Delays    int64       `json:"delays"`
	StormCuts int64       `json:"storm_cuts"`
	Outside   int64       `json:"outside_window"`
	Waves     []time.Time `json:"storm_waves,omitempty"`
}

// Seed returns the seed that drives the fault schedule (the plan's, or the
// run's when the plan has none): --chaos-seed with it reproduces the run.
func (in *Injector) Seed() int64 { return in.seed }

// Stats returns the counts so far.
func (in *Injector) Stats() Stats {
	in.mu.Lock()
	waves := append([]time.Time(nil), in.waves...)
	in.mu.Unlock()
	return Stats{CutsFIN: in.counts[countFIN].Load(), CutsRST: in.counts[countRST].Load(), Stalls: in.counts[countStall].Load(),
		Delays: in.counts[countDelay].Load(), StormCuts: in.counts[countStorm].Load(), Outside: in.outside.Load(), Waves: waves}
}

// body wraps a response body and applies a fault to it.
type body struct {
	rc    io.ReadCloser
	in    *Injector
	f     *Fault // nil: only storms can cut it
	get   bool
	phase Phase

	// SSE event counting (WHATWG line rules: CR, LF, CRLF).
	events    int
	bytes     int64
	lineStart bool // at the start of a line
	prevCR    bool // the previous byte was CR (a following LF is part of it)
	fields    bool // the current event has a non-comment line
	comment   bool // the current line is a comment
	timer     *time.Timer

	pending  []byte      // bytes held back by a stall
	fired    bool        // the fault has fired (a fault fires once)
	stallReq atomic.Bool // the next Read stalls

	mu     sync.Mutex
	cutErr error // set once the stream is cut: what Read returns from then on
	closed bool
	done   chan struct{} // closed by a cut or Close: ends a stall
}

// trigger fires a "between" fault from its timer: a cut cuts now, a stall
// makes the next Read wait.
func (b *body) trigger() {
	if b.f.Action == ActionCut {
		b.faultCut(b.f.Close)
		return
	}
	b.stallReq.Store(true)
}

// cut ends the stream: the underlying body is closed (RST: reset) and Read
// returns io.EOF (FIN) or ErrReset from then on. It reports whether it cut.
func (b *body) cut(c Close) bool {
	b.mu.Lock()
	if b.cutErr != nil || b.closed {
		b.mu.Unlock()
		return false
	}
	if c == CloseFIN {
		b.cutErr = io.EOF
	} else {
		b.cutErr = ErrReset
	}
	b.wake()
	b.mu.Unlock()
	if r, ok := b.rc.(interface{ Reset() error }); ok && c == CloseRST {
		r.Reset()
	} else {
		b.rc.Close()
	}
	return true
}

// wake ends a stall in progress (b.mu held).
func (b *body) wake() {
	if b.done == nil {
		b.done = make(chan struct{})
	}
	select {
	case <-b.done:
	default:
		close(b.done)
	}
}

func (b *body) doneCh() chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done == nil {
		b.done = make(chan struct{})
	}
	return b.done
}

func (b *body) cutError() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cutErr
}

// Read implements io.Reader, applying the fault when its trigger is met.
func (b *body) Read(p []byte) (int, error) {
	if err := b.cutError(); err != nil {
		return 0, err
	}
	if b.stallReq.CompareAndSwap(true, false) {
		b.in.count(countStall, b.phase)
		t := time.NewTimer(b.f.Stall.D())
		select {
		case <-t.C:
		case <-b.doneCh():
			t.Stop()
			if err := b.cutError(); err != nil {
				return 0, err
			}
			return 0, errClosed
		}
	}
	if len(b.pending) > 0 {
		n := copy(p, b.pending)
		b.pending = b.pending[n:]
		return n, nil
	}
	f := b.f
	if f != nil && !b.fired && f.When.BeforeFirstEvent {
		b.fired = true
		if f.Action == ActionStall {
			b.stallReq.Store(true)
			return b.Read(p)
		}
		b.faultCut(f.Close)
		return 0, b.cutError()
	}
	n, err := b.rc.Read(p)
	if cerr := b.cutError(); cerr != nil {
		return 0, cerr // cut while we were reading (storm or timer)
	}
	if f == nil || b.fired || n == 0 {
		b.scan(p[:n], -1)
		return n, err
	}
	i := b.scan(p[:n], b.stopAt())
	if i < 0 {
		return n, err
	}
	// The trigger is met at byte i: deliver what came before it.
	b.fired = true
	if f.Action == ActionStall {
		b.pending = append(b.pending[:0], p[i:n]...)
		b.stallReq.Store(true)
		if i == 0 {
			return b.Read(p)
		}
		return i, nil
	}
	b.faultCut(f.Close)
	if i == 0 {
		return 0, b.cutError()
	}
	return i, nil
}

// faultCut cuts the stream for its fault and counts the cut.
func (b *body) faultCut(c Close) {
	if b.cut(c) {
		if c == CloseFIN {
			b.in.count(countFIN, b.phase)
		} else {
			b.in.count(countRST, b.phase)
		}
	}
}

var errClosed = errors.New("chaos: body closed")

// stopAt tells scan which trigger to look for.
func (b *body) stopAt() int {
	switch {
	case b.f.When.AfterEvents > 0:
		return trigEvents
	case b.f.When.AfterBytes > 0:
		return trigBytes
	case b.f.When.MidEvent != nil:
		return trigMid
	}
	return -1
}

const (
	trigEvents = iota
	trigBytes
	trigMid
)

// scan counts events and bytes in buf and returns the index just after the
// point where trigger trig is met (-1: not met in buf).
func (b *body) scan(buf []byte, trig int) int {
	for i, c := range buf {
		b.bytes++
		if trig == trigBytes && b.bytes == b.f.When.AfterBytes {
			return i + 1
		}
		switch {
		case c == '\n' && b.prevCR:
			b.prevCR = false
			continue
		case c == '\r' || c == '\n':
			b.prevCR = c == '\r'
			if b.lineStart {
				// A blank line: dispatches an event if it had a field.
				if b.fields {
					b.events++
					b.fields = false
					if trig == trigEvents && b.events == b.f.When.AfterEvents {
						return i + 1
					}
				}
			} else if !b.comment {
				b.fields = true
				if trig == trigMid && b.events == *b.f.When.MidEvent {
					return i + 1 // the event's first line is in; its end is not
				}
			}
			b.lineStart, b.comment = true, false
		default:
			b.prevCR = false
			if b.lineStart {
				b.comment = c == ':'
			}
			b.lineStart = false
		}
	}
	return -1
}

// Close implements io.Closer.
func (b *body) Close() error {
	b.mu.Lock()
	already := b.closed
	b.closed = true
	b.wake()
	b.mu.Unlock()
	if already {
		return nil
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	b.in.unregister(b)
	return b.rc.Close()
}
