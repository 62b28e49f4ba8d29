package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
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

	// waveCuts[k] counts the streams wave k cut (in the measured window
	// or not; under mu).
	waveCuts []int64

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
	countStreamReset // a cut that reset one HTTP/2 stream, its connection kept
	countConnClose   // a cut that closed a connection (HTTP/1.1: every cut)
	numCounts
)

// countLayer counts what a cut broke: one stream, or a connection.
func (in *Injector) countLayer(streamOnly bool, p Phase) {
	if streamOnly {
		in.countOnly(countStreamReset, p)
	} else {
		in.countOnly(countConnClose, p)
	}
}

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
	if !in.countOnly(c, p) {
		in.outside.Add(1)
	}
}

// countOnly counts c when p is in the measured window and reports whether
// it was (the caller counts the fault outside it once).
func (in *Injector) countOnly(c int, p Phase) bool {
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
	}
	return measured
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

// Stats counts what was injected: the faults of measured operations (and
// of streams, inside the measured window), and apart the rest (warm-up,
// set-up with target=init, after the window).
type Stats struct {
	CutsFIN   int64 `json:"cuts_fin"`
	CutsRST   int64 `json:"cuts_rst"`
	Stalls    int64 `json:"stalls"`
	Delays    int64 `json:"delays"`
	StormCuts int64 `json:"storm_cuts"`
	// StreamResets and ConnCloses split the cuts (faults and storms) by
	// what they broke: one HTTP/2 stream (RST_STREAM, its connection and
	// the other streams on it kept), or a connection (every stream on it;
	// over HTTP/1.1 every cut).
	StreamResets int64       `json:"stream_resets"`
	ConnCloses   int64       `json:"conn_closes"`
	Outside      int64       `json:"outside_window"`
	Waves        []time.Time `json:"storm_waves,omitempty"`
	// WaveCuts counts the streams each wave cut (index as Waves; in the
	// measured window or not).
	WaveCuts []int64 `json:"storm_wave_cuts,omitempty"`
}

// Seed returns the seed that drives the fault schedule (the plan's, or the
// run's when the plan has none): --chaos-seed with it reproduces the run.
func (in *Injector) Seed() int64 { return in.seed }

// Stats returns the counts so far.
func (in *Injector) Stats() Stats {
	in.mu.Lock()
	waves := append([]time.Time(nil), in.waves...)
	waveCuts := append([]int64(nil), in.waveCuts...)
	in.mu.Unlock()
	return Stats{CutsFIN: in.counts[countFIN].Load(), CutsRST: in.counts[countRST].Load(), Stalls: in.counts[countStall].Load(),
		Delays: in.counts[countDelay].Load(), StormCuts: in.counts[countStorm].Load(), Outside: in.outside.Load(), Waves: waves, WaveCuts: waveCuts,
		StreamResets: in.counts[countStreamReset].Load(), ConnCloses: in.counts[countConnClose].Load()}
}
