package workload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/results"
	"golang.org/x/sync/errgroup"
)

// Options configure a run beyond the plan.
type Options struct {
	// Interval between sink intervals and metric merges; 0 means 1 s.
	Interval time.Duration
	// Sinks receive the run's results as they are made (see results.Sink):
	// the results directory, the progress display, a soak's or a sweep
	// step's collector.
	Sinks []results.Sink
	// RunInfo describes the run for the sinks (run.json); the engine fills
	// in the start, the negotiated protocol, the target and the op names.
	// nil: a minimal description.
	RunInfo *results.RunInfo
	// Checkpoint, when > 0, hands the summary of the measured window so
	// far to the sinks that are metrics.Checkpointers this often.
	Checkpoint time.Duration
	// Recorder to record into; nil makes one.
	Recorder *metrics.Recorder
	// Embedded marks a target that is the in-process reference server.
	Embedded bool
	// Tool is "mcpbench <version>" for the summary.
	Tool string
	// SetupConcurrency bounds concurrent session set-ups; 0 means 64.
	SetupConcurrency int
	// TargetPID, when > 0, is the target server's process (same host,
	// Linux): its CPU, RSS, open files and threads are sampled each
	// interval and summarised.
	TargetPID int
	// SettleMemory reads the process's memory once more at the end of the
	// last interval before the window's end, every session still open,
	// after forced GCs that return freed memory to the OS
	// (Generator.SettledRSSMB): what the open sessions hold, not the GC's
	// headroom or pages the previous load left (a sessions sweep's memory
	// per session). The GCs cost that interval a few milliseconds.
	SettleMemory bool
	// Server, when set, reads the embedded reference server's counters
	// into the summary (before thresholds are checked).
	Server func() *results.ServerStats
	// Segment is the execution segment to run (nil: the whole test) and
	// StartAt, when set, the time the clock starts at (see segment.go).
	Segment *Segment
	StartAt time.Time
	// StopNow, when set, is done at a second Ctrl-C (a stop at once): the
	// sessions' closes still to come or in flight are cut (each DELETE
	// would wait for its answer up to 5 s), so the run ends and its
	// summary is written without waiting for the server; a cut close
	// counts as a close failure, and a note in the summary says how many
	// were cut. Nil: never.
	StopNow context.Context
	// NotApplicable are requested features the caller knows cannot apply
	// before the run starts (e.g. ServerNotApplicable: the profile's
	// server: block against an external server); the run names them with
	// its own (run.json, the summary).
	NotApplicable []results.NotApplicable
}

// ErrSetup is returned when no session could be initialized.
var ErrSetup = errors.New("no session could be initialized")

// ErrInterrupted is returned when the run was cancelled before its clock
// started (during session set-up); the summary says so.
var ErrInterrupted = errors.New("interrupted during set-up")

type job struct {
	intended time.Time
	op       int
	scen     int // 1 + the scenario of an iteration; 0: one op of the mix
}

type engine struct {
	pl   *Plan
	opts Options
	rec  *metrics.Recorder
	inj  *chaos.Injector   // nil without chaos
	tl   *results.Timeline // reconnect attempts over time
	rows []results.Row     // one per interval (collector goroutine)

	start, warmEnd, end time.Time
	runCtx              context.Context // cancelled at the hard stop
	warmCtx, measCtx    context.Context // runCtx marked for the chaos layer
	// admit is the admission window: done at the window's end or on
	// Ctrl-C; VUs start no op once it is.
	admit     context.Context
	stopAdmit context.CancelFunc
	stoppedAt atomic.Pointer[time.Time]

	sched    Schedule // open model: arrivals; closed model with stages: active VUs
	next     atomic.Uint64
	spawning atomic.Int64
	maxDelay time.Duration
	live     atomic.Int64
	started  atomic.Int64
	dropped  atomic.Int64
	wg       sync.WaitGroup

	// The open model's worker pool (open.go): the idle sessions, longest
	// first; the workers sleeping on a claimed slot; the workers, spawns
	// and arrival watcher still running.
	idle                 chan *vuState
	waiting, starting    atomic.Int64
	workers, peakWorkers atomic.Int64
	wwg                  sync.WaitGroup

	iters   iterationCount         // --iterations (iterations.go)
	aborted atomic.Pointer[string] // why abort_on_fail stopped the run (abort.go)

	late    lateCauses // ops that started late, by cause (late.go)
	spawnMu sync.Mutex

	vus, maxVUs, peakVUs int // the segment's VUs up front, cap, peak (segment.go)

	settled         bool  // SettleMemory done (collector goroutine)
	settledRSS      int64 // bytes, under mu
	settledSessions int64

	cfgs []driver.Config // per endpoint, when the run has several (VU i on i mod n)

	parkMu sync.Mutex
	parked []*driver.Session // the sessions of the VUs that ended with the run, closed after the summary

	sessionsOpen atomic.Int64
	streamsOpen  atomic.Int64
	closesCut    atomic.Int64 // closes cut by Options.StopNow

	mu         sync.Mutex
	negotiated string        // the protocol version the first session agreed on
	protoWhy   string        // how auto decided
	usage0     results.Usage // at the end of the warm-up
	notes      []string      // said in the summary
	setupStop  bool          // interrupted before the clock started

	notApp []results.NotApplicable // under mu: requested features that cannot apply (applies.go)

	// Process sampling (collector goroutine, then summary).
	selfPrev, tgtPrev results.ProcSample
	tgtFirst, tgtLast results.ProcSample
	tgtMaxRSS         int64
	tgtMaxFDs         int
	tgtErr            error
	tgtStarted        bool
}

// Run executes the plan and returns its summary. It returns when the
// measured window and the graceful stop are over, or soon after ctx is
// cancelled (the summary is then marked interrupted, with what was
// gathered; the measured window ends at the interrupt). The sinks get the
// run as it goes and its end. The error is non-nil only when the run
// could not start: ErrSetup (no session could be initialized) or
// ErrInterrupted (cancelled during set-up), with the summary still filled
// in.
//
// Run never writes pl's fields: what it settles (the protocol, features
// switched off, ops left out of the mix, the client when
// Plan.Driver.HTTPClient is nil) lives on the run's own copy. What the
// plan's ops and renderers keep is shared with every run of the plan:
// driver.Op's ParamHeaders (set by driver.PrepareOps under 2026-07-28),
// the {{seq}} counters and sequential data rows (they go on from one run
// to the next) and the execution segment of the argument counters (the
// last Run's): a plan run more than once at a time must be run with one
// segment.
func Run(ctx context.Context, pl *Plan, opts Options) (*results.Summary, error) {
	e := newEngine(pl, opts)
	pl = e.pl // the run's own copy: pl itself is only read (runCopy)
	if err := e.decideProtocol(ctx); err != nil {
		return e.finish(ctx, e.summary(ctx, time.Now(), time.Now(), results.Usage{}, results.Usage{}), err)
	}
	if e.cfgs = pl.endpointConfigs(); e.cfgs != nil {
		e.rec.SetEndpoints(pl.EndpointsShown)
	}
	sessions := e.setup(ctx, e.vus)
	e.waitStart(ctx, sessions)
	if sum, err := e.checkSetup(ctx, sessions); sum != nil {
		return e.finish(ctx, sum, err)
	}
	e.preflight(ctx, sessions)
	cancelHard := e.startClock(ctx)
	defer cancelHard(nil)
	if e.inj != nil {
		defer e.inj.Stop()
	}
	warm, warmDone := e.watchWarmup()
	defer warm.Stop()
	collectorDone, stopCollector := make(chan struct{}), make(chan struct{})
	go e.collect(stopCollector, collectorDone)
	e.launchAll(sessions)
	<-e.admit.Done()
	e.gracefulStop(cancelHard)
	if e.pl.Open {
		e.dropUnclaimed(time.Now())
	}
	usage1 := results.ReadUsage()
	usage0 := e.warmUsage(warm, warmDone, usage1)
	close(stopCollector)
	<-collectorDone
	sum := e.summary(ctx, e.warmEnd, e.measuredEnd(), usage0, usage1)
	if e.measured(sum) {
		sum = e.summary(ctx, e.warmEnd, e.measuredEnd(), usage0, usage1)
	}
	return e.finish(ctx, sum, nil)
}

// parkClose keeps a session whose VU ended with the run for the closes
// after the summary (measured); a VU that ends before the admission
// window does (a stage ramping down) closes its session at once.
func (e *engine) parkClose(s *driver.Session) {
	// A VU that sees the window's end before the admission window's timer
	// does must park too: its DELETE would hold the summary back.
	if e.admit.Err() == nil && time.Now().Before(e.end) {
		e.closeSession(s)
		return
	}
	e.parkMu.Lock()
	e.parked = append(e.parked, s)
	e.parkMu.Unlock()
}

// measured hands the sinks the run's summary now that its ops have ended
// (MeasuredSink: the results directory writes summary.json), then closes
// the sessions the VUs left (DELETE, 64 at a time, each bounded by its
// own timeout). It reports whether it closed any: the summary then has
// changed (the closes' tallies).
func (e *engine) measured(sum *results.Summary) bool {
	e.parkMu.Lock()
	parked := e.parked
	e.parked = nil
	e.parkMu.Unlock()
	pre := *sum
	if len(parked) > 0 {
		pre.Notes = append(slices.Clip(pre.Notes), fmt.Sprintf("written before the %d sessions were closed: their DELETEs are not counted", len(parked)))
	}
	for _, s := range e.opts.Sinks {
		if m, ok := s.(results.MeasuredSink); ok {
			m.Measured(&pre)
		}
	}
	var g errgroup.Group
	g.SetLimit(64)
	for _, s := range parked {
		g.Go(func() error { e.closeSession(s); return nil })
	}
	g.Wait()
	return len(parked) > 0
}

// runCopy is the run's own copy of plan pl: what Run settles (the
// protocol, the log level, the resource-update callback, the HTTP client
// when the plan has none, features switched off, ops taken out of the
// mix) is set on the copy, so pl is never written and may be run again,
// or by several runs at once (TestPlanReadOnlyUnderRun). The ops and the
// argument renderers are shared: see Run.
func runCopy(pl *Plan) *Plan {
	c := *pl
	c.cum = slices.Clone(pl.cum)
	if c.Driver.HTTPClient == nil && c.Driver.URL != "" {
		// Compile's zero value: one client for the run's sessions.
		c.Driver.HTTPClient = driver.NewHTTPClient(&c.Driver)
	}
	return &c
}

func newEngine(plan *Plan, opts Options) *engine {
	pl := runCopy(plan)
	e := &engine{pl: pl, opts: opts, rec: opts.Recorder, notApp: slices.Clone(opts.NotApplicable)}
	e.share()
	e.startIterations()
	pl.useSegment(opts.Segment)
	if pl.Chaos != nil {
		e.inj = chaos.New(*pl.Chaos, pl.Seed)
	}
	if e.rec == nil {
		e.rec = metrics.NewRecorder(pl.Names, e.maxVUs*pl.Concurrency)
	}
	e.opts.Interval = cmp.Or(e.opts.Interval, time.Second)
	if pl.HasChecks() {
		e.rec.SetChecks(plan.CheckExprs()) // keyed by the plan's ops
	}
	if len(pl.Scenarios) > 0 {
		names, steps := make([]string, len(pl.Scenarios)), make([][]string, len(pl.Scenarios))
		for i, sc := range pl.Scenarios {
			names[i] = sc.Name
			for _, st := range sc.Steps {
				steps[i] = append(steps[i], pl.Names[st.Op])
			}
		}
		e.rec.SetScenarios(names, steps)
	}
	pl.Driver.OnResourceUpdate = e.onResourceUpdate
	pl.corr.start() // correlate_run.go
	if pl.Open {
		e.maxDelay = pl.MaxDelay
	}
	return e
}

// checkSetup ends a run whose set-up was interrupted or failed entirely:
// it returns that summary and error (nil summary: go on).
func (e *engine) checkSetup(ctx context.Context, sessions []*driver.Session) (*results.Summary, error) {
	live := 0
	for _, s := range sessions {
		if s != nil {
			live++
		}
	}
	now := time.Now()
	if ctx.Err() != nil {
		// Interrupted during set-up: close what was opened, report nothing
		// as measured.
		e.setupStop = true
		for _, s := range sessions {
			if s != nil {
				e.closeSession(s)
			}
		}
		return e.summary(ctx, now, now, results.Usage{}, results.Usage{}), ErrInterrupted
	}
	if live == 0 && len(sessions) > 0 {
		sum := e.summary(ctx, now, now, results.Usage{}, results.Usage{})
		return sum, fmt.Errorf("%w: %d of %d failed (%s)", ErrSetup, len(sessions), len(sessions), failClasses(sum.Sessions.FailClasses))
	}
	return nil, nil
}

// startClock starts the run's clock: the window's times, the schedule,
// the reconnect timeline, the fault plan, the sinks, the hard-stop and
// admission contexts, and Ctrl-C's handling. It returns the hard stop.
func (e *engine) startClock(ctx context.Context) context.CancelCauseFunc {
	pl := e.pl
	e.start = e.clockStart()
	e.warmEnd = e.start.Add(pl.Warmup)
	e.end = e.warmEnd.Add(pl.Window)
	e.rec.SetWindow(e.warmEnd, e.end) // requests in flight, counted inside the window only
	e.sched = e.segmentSchedule(pl.Schedule)
	var span time.Duration // bins only for storm analysis: 16 B per 10 ms
	if pl.Chaos != nil && pl.Chaos.Storm != nil {
		span = e.end.Sub(e.start) + pl.GracefulStop + 30*time.Second
	}
	e.tl = results.NewTimeline(e.start, span)
	e.rec.Begin(e.start, e.start.Add(e.opts.Interval))
	e.rec.SetTimeline(e.tl)
	if e.inj != nil {
		e.inj.Window(e.warmEnd, e.end)
		e.inj.Start(e.start)
	}
	info := e.runInfo()
	for _, s := range e.opts.Sinks {
		s.Start(info)
	}
	hard, cancelHard := context.WithCancelCause(context.WithoutCancel(ctx))
	e.runCtx = hard
	e.warmCtx = chaos.WithPhase(hard, chaos.PhaseWarmup)
	e.measCtx = chaos.WithPhase(hard, chaos.PhaseMeasure)
	e.admit, e.stopAdmit = context.WithDeadline(hard, e.end)
	// Ctrl-C: the measured window ends now; stop admitting and cut
	// in-flight ops.
	stop := context.AfterFunc(ctx, func() {
		now := time.Now()
		e.stoppedAt.CompareAndSwap(nil, &now)
		e.stopAdmit()
		cancelHard(stopCause{context.Cause(ctx)})
	})
	// The hook must go when the run does: ctx outlives it (a sweep's or
	// soak's, the process's), and the hook holds the engine, so each
	// finished step kept its recorder (~30 MB of histograms) and sessions'
	// leftovers alive to the end of the process.
	return func(cause error) {
		stop()
		cancelHard(cause)
	}
}

// runInfo is the run's description for the sinks.
func (e *engine) runInfo() *results.RunInfo {
	info := &results.RunInfo{Tool: "mcpbench", Profile: e.pl.Name}
	if e.opts.RunInfo != nil {
		c := *e.opts.RunInfo
		info = &c
	}
	e.mu.Lock()
	info.ProtocolNegotiated = e.negotiated
	e.mu.Unlock()
	info.NotApplicable = e.notApplicable()
	if n := httpclient.TransportStats(e.pl.Driver.HTTPClient); n != nil {
		info.HTTPProtocol, info.Proxy = n.Protocol(), results.ProxyText(n.Proxies)
	}
	info.Started, info.Ops = e.start, e.pl.Names
	info.Segment = e.opts.Segment.Info(e.opts.StartAt)
	info.Target = cmp.Or(info.Target, e.pl.Target)
	return info
}

// watchWarmup reads the process's CPU use when the warm-up ends (the
// generator's cost covers the measured window only); done closes once it
// has.
func (e *engine) watchWarmup() (t *time.Timer, done chan struct{}) {
	done = make(chan struct{})
	return time.AfterFunc(time.Until(e.warmEnd), func() {
		u := results.ReadUsage()
		e.mu.Lock()
		e.usage0 = u
		e.mu.Unlock()
		close(done)
	}), done
}

// warmUsage returns the usage at the end of the warm-up, or now's when
// the run stopped during it.
func (e *engine) warmUsage(warm *time.Timer, done <-chan struct{}, now results.Usage) results.Usage {
	if warm.Stop() { // had not fired: stopped during warm-up
		return now
	}
	<-done
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.usage0
}

// launchAll starts the VUs: one per session set up (the closed model
// retries failed ones; the open model adds VUs on demand), plus, with
// stages, the VUs a later stage activates.
func (e *engine) launchAll(sessions []*driver.Session) {
	open := e.pl.Open
	if e.pooled() {
		e.launchPool(sessions)
		return
	}
	for i, s := range sessions {
		if s == nil && open {
			continue
		}
		e.launch(i, s)
	}
	for i := len(sessions); !open && i < e.peakVUs; i++ {
		e.launch(i, nil)
	}
	if open && e.maxVUs > e.vus {
		go e.watchArrivals()
	}
}

// gracefulStop lets in-flight ops finish for the graceful stop, then cuts
// them.
func (e *engine) gracefulStop(cancelHard context.CancelCauseFunc) {
	finished := make(chan struct{})
	go func() { e.wg.Wait(); close(finished) }()
	grace := time.NewTimer(e.pl.GracefulStop)
	defer grace.Stop()
	select {
	case <-finished:
	case <-grace.C:
		cancelHard(stopCause{errors.New("graceful stop expired")})
		<-finished
	case <-e.runCtx.Done():
		<-finished
	}
}

// measuredEnd is the end of the measured window: the interrupt, when
// there was one before the window's end (closing the sessions is not
// measured time).
func (e *engine) measuredEnd() time.Time {
	if at := e.stoppedAt.Load(); at != nil && at.Before(e.end) {
		if at.Before(e.warmEnd) {
			return e.warmEnd
		}
		return *at
	}
	return e.end
}

// testEngineDone, set by tests, sees each engine as its run finishes.
var testEngineDone func(*engine)

// finish hands the run's end to the sinks.
func (e *engine) finish(ctx context.Context, sum *results.Summary, err error) (*results.Summary, error) {
	// The run's sessions are closed: release the connections they left
	// idle, or each run of a sweep or a program would keep its own pool
	// (sockets and read buffers) until the process ends.
	if hc := e.pl.Driver.HTTPClient; hc != nil {
		hc.CloseIdleConnections()
	}
	if testEngineDone != nil {
		testEngineDone(e)
	}
	hs := e.rec.Histograms()
	maps.Copy(hs, results.NetHistograms(httpclient.TransportStats(e.pl.Driver.HTTPClient))) // the net block's times, for merges
	end := &results.RunEnd{Info: e.runInfo(), Summary: sum, Offenders: e.rec.OffendersFile(), Histograms: hs}
	for _, s := range e.opts.Sinks {
		s.End(end)
	}
	return sum, err
}

// setup initializes n sessions concurrently; failed ones are nil.
func (e *engine) setup(ctx context.Context, n int) []*driver.Session {
	out := make([]*driver.Session, n)
	var g errgroup.Group
	g.SetLimit(max(1, cmp.Or(e.opts.SetupConcurrency, 64)))
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			id := e.vuID(i)
			s, _ := driver.NewSession(e.cfgFor(id), id)
			if e.initSession(ctx, s, id) {
				out[i] = s
			}
			return nil
		})
	}
	g.Wait()
	return out
}

// launch starts the segment's VU local (vuID(local) in the whole test)
// with session s (nil: initialize first).
func (e *engine) launch(local int, s *driver.Session) {
	e.wg.Add(1)
	e.live.Add(1)
	e.started.Add(1)
	go e.vu(local, s)
}

// cfgFor returns the driver config of VU vu: the plan's, with the VU's
// chaos transport when a fault plan is on.
func (e *engine) cfgFor(vu int) *driver.Config {
	base := &e.pl.Driver
	if n := len(e.cfgs); n > 0 {
		base = &e.cfgs[vu%n] // the VU's endpoint
	}
	if e.inj == nil {
		return base
	}
	c := *base
	rt := http.DefaultTransport
	if c.HTTPClient != nil && c.HTTPClient.Transport != nil {
		rt = c.HTTPClient.Transport
	}
	c.HTTPClient = &http.Client{Transport: e.inj.Wrap(vu, rt)}
	return &c
}

func failClasses(m map[string]int64) string {
	if len(m) == 0 {
		return "no attempt finished"
	}
	return textfmt.Counts(m)
}

// stopCause is why the run cut its in-flight ops (Ctrl-C, the graceful
// stop expired). It is also context.Canceled, so the driver classes the
// ops it cut as canceled: interrupted by the run, not errors of the
// server, and kept out of latency and the replay ledger.
type stopCause struct{ why error }

func (c stopCause) Error() string   { return c.why.Error() }
func (c stopCause) Unwrap() []error { return []error{c.why, context.Canceled} }
