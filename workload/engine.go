package workload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/metrics"
	"golang.org/x/sync/errgroup"
)

// Plan is a compiled, validated profile: driver config and ops ready to
// send. Immutable once built. Driver holds the real URL and the expanded
// header values: never show it. Profile is the profile as written
// (defaults applied, ${NAME} references unexpanded, URL shown as Target)
// and Target is the URL for display (ShowURL): both are safe to show.
type Plan struct {
	Profile    Profile
	Driver     driver.Config
	Target     string
	Ops        []*driver.Op
	Names      []string
	Thresholds []metrics.Threshold
	cum        []int // cumulative weights, for the op mix
}

// Compile validates p (after Defaults) and builds the plan; hc is the HTTP
// client the sessions share (nil: driver.NewHTTPClient). Every problem of
// the profile is returned at once, as a *ProfileError.
func Compile(p *Profile, hc *http.Client) (*Plan, error) {
	p.Defaults()
	if errs := p.Validate(); len(errs) > 0 {
		return nil, &ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}
	}
	ep, _ := p.endpoint(os.LookupEnv) // Validate reported its problems
	ops, _ := p.expandOps(os.LookupEnv)
	pl := &Plan{Profile: *p, Target: ep.Shown}
	pl.Profile.URL = ep.Shown
	for _, t := range p.Thresholds {
		th, _ := metrics.ParseThreshold(t) // Validate checked it
		pl.Thresholds = append(pl.Thresholds, th)
	}
	d := &pl.Driver
	d.URL = ep.URL
	d.Protocol = p.Protocol
	d.ConnectTimeout = p.Timeouts.Connect.D()
	d.RequestTimeout = p.Timeouts.Request.D()
	d.StreamIdleTimeout = p.Timeouts.StreamIdle.D()
	d.Reconnect = p.Resume.Policy
	d.DefaultRetry = p.Resume.DefaultRetry.D()
	d.MaxResumes = p.Resume.MaxAttempts
	d.ReissueUnresumable = p.Resume.Reissue
	d.MaxReissues = p.Resume.MaxReissues
	d.CheckDeleted = p.CheckDeleted
	d.Seed = p.Seed
	d.MaxMessageBytes = int64(p.MaxMessageBytes)
	d.MaxEventBytes = int(p.MaxEventBytes)
	d.FollowRedirects = p.FollowRedirects
	// One large-message budget for the run: its peak memory is about VUs ×
	// the small per-session buffers + this.
	d.Budget = driver.NewBudget(max(int64(p.MaxBufferedBytes), d.BudgetNeed()))
	d.Header = ep.Header
	d.HTTPClient = hc
	if d.HTTPClient == nil && d.URL != "" {
		d.HTTPClient = driver.NewHTTPClient(d)
	}
	total := 0
	for i := range ops {
		o := &ops[i] // expanded; the name comes from the op as written
		if *o.Weight == 0 {
			continue
		}
		params, err := o.params()
		if err != nil {
			return nil, fmt.Errorf("ops[%d].arguments: %w", i, err)
		}
		op, err := driver.NewOp(p.Ops[i].opName(), o.Method, params, o.Progress)
		if err != nil {
			return nil, err
		}
		op.ExpectProgress = o.Expect.Progress
		total += *o.Weight
		pl.Ops = append(pl.Ops, op)
		pl.Names = append(pl.Names, op.Name)
		pl.cum = append(pl.cum, total)
	}
	return pl, nil
}

// SetURL points the plan at url (used for the embedded server, whose
// address is known only once it listens).
func (pl *Plan) SetURL(url string, hc *http.Client) {
	pl.Driver.URL = url
	pl.Target = secret.RedactURL(url)
	pl.Profile.URL = pl.Target
	pl.Driver.HTTPClient = hc
	if hc == nil {
		pl.Driver.HTTPClient = driver.NewHTTPClient(&pl.Driver)
	}
}

// pick chooses an op index by weight.
func (pl *Plan) pick(rng *rand.Rand) int {
	return searchCum(pl.cum, rng.IntN(pl.cum[len(pl.cum)-1]))
}

// opFor chooses the op of arrival slot h (open model): a hash of the seed
// and h, so the mix is the same whichever VU runs the slot.
func (pl *Plan) opFor(h uint64) int {
	x := h + uint64(pl.Profile.Seed)*0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return searchCum(pl.cum, int(x%uint64(pl.cum[len(pl.cum)-1])))
}

// weight returns op i's weight in the mix.
func (pl *Plan) weight(i int) int {
	if i == 0 {
		return pl.cum[0]
	}
	return pl.cum[i] - pl.cum[i-1]
}

// disable takes op i out of the mix (its row stays, with no ops).
func (pl *Plan) disable(i int) {
	w := pl.weight(i)
	for j := i; j < len(pl.cum); j++ {
		pl.cum[j] -= w
	}
}

// searchCum maps a draw n in [0, total) to the op whose cumulative weight
// range holds it (ops of weight 0 are never chosen).
func searchCum(cum []int, n int) int { return sort.SearchInts(cum, n+1) }

// Progress is what the engine reports once per interval.
type Progress struct {
	Interval   metrics.Interval
	Row        metrics.Row // the interval as intervals.csv writes it
	Names      []string
	Elapsed    time.Duration // since the start (warm-up included)
	Phase      string        // "warm-up", "measure", "stopping"
	Remaining  time.Duration
	TargetRate float64
	VUs        int64 // VUs running
	Sessions   int64 // sessions open
	Streams    int64 // GET streams open
	Dropped    int64 // so far
}

// Options configure a run beyond the plan.
type Options struct {
	// Interval between progress reports and metric merges; 0 means 1 s.
	Interval time.Duration
	// OnInterval is called once per interval from the collector goroutine;
	// it must not block for long (a slow sink must not push back on load).
	OnInterval func(Progress)
	// OnStart is called once the sessions are set up, when the clock starts,
	// with the start time and the negotiated protocol version.
	OnStart func(start time.Time, protocol string)
	// Recorder to record into; nil makes one.
	Recorder *metrics.Recorder
	// Embedded marks a target that is the in-process reference server.
	Embedded bool
	// Tool is "mcpbench <version>" for the summary.
	Tool string
	// SetupConcurrency bounds concurrent session set-ups; 0 means 64.
	SetupConcurrency int
	// Checkpoint, when > 0, calls OnCheckpoint this often (from the
	// collector goroutine) with the summary of the measured window so far.
	Checkpoint   time.Duration
	OnCheckpoint func(*metrics.Summary)
	// TargetPID, when > 0, is the target server's process (same host,
	// Linux): its CPU, RSS, open files and threads are sampled each
	// interval and summarised.
	TargetPID int
	// Server, when set, reads the embedded reference server's counters
	// into the summary (before thresholds are checked).
	Server func() *metrics.ServerStats
}

// ErrSetup is returned when no session could be initialized.
var ErrSetup = errors.New("no session could be initialized")

type job struct {
	intended time.Time
	op       int
}

type engine struct {
	pl   *Plan
	opts Options
	rec  *metrics.Recorder
	inj  *chaos.Injector   // nil without chaos
	tl   *metrics.Timeline // reconnect attempts over time
	rows []metrics.Row     // one per interval (collector goroutine)

	start, warmEnd, end time.Time
	runCtx              context.Context // cancelled at the hard stop
	warmCtx, measCtx    context.Context // runCtx marked for the chaos layer
	stopAdmit           chan struct{}   // closed when the window ends or ctx is cancelled
	stoppedAt           atomic.Pointer[time.Time]

	sched    Schedule
	next     atomic.Uint64 // next arrival slot to claim (open model)
	spawning atomic.Int64  // VUs added by spawn still initializing
	maxDelay time.Duration
	live     atomic.Int64
	started  atomic.Int64
	dropped  atomic.Int64
	wg       sync.WaitGroup
	spawnMu  sync.Mutex

	sessionsOpen atomic.Int64
	streamsOpen  atomic.Int64

	mu       sync.Mutex
	sess     metrics.SessionSummary
	initHist *hdr.Histogram
	failCls  [driver.NumClasses]int64
	failEx   [driver.NumClasses]string
	get      getAgg
	hyg      hygAgg
	// negotiated is the protocol version the first session agreed on.
	negotiated string
	protoWhy   string        // how auto decided
	usage0     metrics.Usage // at the end of the warm-up
	notes      []string      // said in the summary
	setupStop  bool          // interrupted before the clock started

	// Process sampling (collector goroutine, then summary).
	selfPrev, tgtPrev metrics.ProcSample
	tgtFirst, tgtLast metrics.ProcSample
	tgtMaxRSS         int64
	tgtMaxFDs         int
	tgtErr            error
	tgtStarted        bool
	churned           int64
}

// ErrInterrupted is returned when the run was cancelled before its clock
// started (during session set-up); the summary says so.
var ErrInterrupted = errors.New("interrupted during set-up")

// Run executes the plan and returns its summary. It returns when the
// measured window and the graceful stop are over, or soon after ctx is
// cancelled (the summary is then marked interrupted, with what was
// gathered; the measured window ends at the interrupt). The error is
// non-nil only when the run could not start: ErrSetup (no session could
// be initialized) or ErrInterrupted (cancelled during set-up), with the
// summary still filled in.
func Run(ctx context.Context, pl *Plan, opts Options) (*metrics.Summary, error) {
	p := &pl.Profile
	e := &engine{pl: pl, opts: opts, rec: opts.Recorder, initHist: metrics.NewHistogram(), stopAdmit: make(chan struct{})}
	if p.Chaos != nil && !p.Chaos.Empty() {
		e.inj = chaos.New(*p.Chaos, p.Seed)
	}
	if e.rec == nil {
		e.rec = metrics.NewRecorder(pl.Names, p.MaxVUs)
	}
	if e.opts.Interval <= 0 {
		e.opts.Interval = time.Second
	}
	if p.Open() {
		e.maxDelay = p.MaxDelay.D()
	}
	if err := e.decideProtocol(ctx); err != nil {
		return e.summary(time.Now(), time.Now(), metrics.Usage{}, metrics.Usage{}, ctx), err
	}

	// Set up the initial sessions before the clock starts.
	sessions := e.setup(ctx, p.VUs)
	started := time.Now()
	live := 0
	for _, s := range sessions {
		if s != nil {
			live++
		}
	}
	if ctx.Err() != nil {
		// Interrupted during set-up: close what was opened, report nothing
		// as measured.
		e.setupStop = true
		for _, s := range sessions {
			if s != nil {
				e.closeSession(s)
			}
		}
		return e.summary(started, started, metrics.Usage{}, metrics.Usage{}, ctx), ErrInterrupted
	}
	if live == 0 {
		sum := e.summary(started, started, metrics.Usage{}, metrics.Usage{}, ctx)
		return sum, fmt.Errorf("%w: %d of %d failed (%s)", ErrSetup, p.VUs, p.VUs, failClasses(sum.Sessions.FailClasses))
	}

	e.start = time.Now()
	e.warmEnd = e.start.Add(p.Warmup.D())
	e.end = e.warmEnd.Add(p.Duration.D())
	if p.Open() {
		e.sched = Constant{PerSec: p.Rate, Duration: e.end.Sub(e.start)}
	}
	var span time.Duration // bins only for storm analysis: 16 B per 10 ms
	if p.Chaos != nil && p.Chaos.Storm != nil {
		span = e.end.Sub(e.start) + p.GracefulStop.D() + 30*time.Second
	}
	e.tl = metrics.NewTimeline(e.start, span)
	e.rec.Begin(e.start)
	e.rec.SetTimeline(e.tl)
	if e.inj != nil {
		e.inj.Window(e.warmEnd, e.end)
		e.inj.Start(e.start)
		defer e.inj.Stop()
	}
	if e.opts.OnStart != nil {
		e.mu.Lock()
		proto := e.negotiated
		e.mu.Unlock()
		e.opts.OnStart(e.start, proto)
	}
	hard, cancelHard := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelHard(nil)
	e.runCtx = hard
	e.warmCtx = chaos.WithPhase(hard, chaos.PhaseWarmup)
	e.measCtx = chaos.WithPhase(hard, chaos.PhaseMeasure)

	// Ctrl-C: the measured window ends now; stop admitting and cut
	// in-flight ops.
	stopWatch := context.AfterFunc(ctx, func() {
		now := time.Now()
		e.stoppedAt.CompareAndSwap(nil, &now)
		e.closeAdmit()
		cancelHard(stopCause{context.Cause(ctx)})
	})
	defer stopWatch()

	usageSet := make(chan struct{})
	warmTimer := time.AfterFunc(p.Warmup.D(), func() {
		u := metrics.ReadUsage()
		e.mu.Lock()
		e.usage0 = u
		e.mu.Unlock()
		close(usageSet)
	})
	defer warmTimer.Stop()

	collectorDone := make(chan struct{})
	stopCollector := make(chan struct{})
	go e.collect(stopCollector, collectorDone)

	for i, s := range sessions {
		if s == nil && p.Open() {
			continue // the open model adds VUs on demand
		}
		// Closed model: a VU whose session failed keeps trying to initialize.
		e.launch(i, s)
	}
	if p.Open() && p.MaxVUs > p.VUs {
		go e.watchArrivals()
	}
	e.waitWindow()
	e.closeAdmit()

	// Graceful stop: in-flight ops may finish, then they are cut.
	finished := make(chan struct{})
	go func() { e.wg.Wait(); close(finished) }()
	grace := time.NewTimer(p.GracefulStop.D())
	select {
	case <-finished:
	case <-grace.C:
		cancelHard(stopCause{errors.New("graceful stop expired")})
		<-finished
	case <-hard.Done():
		<-finished
	}
	grace.Stop()
	if p.Open() {
		e.dropUnclaimed(time.Now())
	}
	usage1 := metrics.ReadUsage()
	select {
	case <-usageSet:
	default: // stopped during warm-up
		warmTimer.Stop()
		e.mu.Lock()
		e.usage0 = usage1
		e.mu.Unlock()
	}
	e.mu.Lock()
	usage0 := e.usage0
	e.mu.Unlock()
	close(stopCollector)
	<-collectorDone
	measuredEnd := e.end
	if at := e.stoppedAt.Load(); at != nil && at.Before(e.end) {
		// Interrupted: the window ends at the interrupt, not when the
		// sessions were closed.
		measuredEnd = *at
		if measuredEnd.Before(e.warmEnd) {
			measuredEnd = e.warmEnd
		}
	}
	return e.summary(e.warmEnd, measuredEnd, usage0, usage1, ctx), nil
}

// decideProtocol settles the protocol era once per run (cached for every
// session): with auto, the newest version that supports every feature
// the run uses; features that cannot apply at the chosen version are
// switched off and named in the summary.
func (e *engine) decideProtocol(ctx context.Context) error {
	pl, p := e.pl, &e.pl.Profile
	needs := sessionFeatures(p)
	if pl.Driver.Protocol == driver.ProtocolAuto || pl.Driver.Protocol == "" {
		if len(needs) > 0 {
			pl.Driver.Protocol = driver.DefaultProtocol
			e.protoWhy = fmt.Sprintf("chosen by auto as the newest version with sessions, which %s need (2026-07-28 has none)", strings.Join(needs, " and "))
		} else {
			n, err := driver.Negotiate(ctx, &pl.Driver)
			if err != nil {
				n = driver.Negotiation{Protocol: driver.DefaultProtocol, Why: "server/discover failed (" + err.Error() + "): using the newest legacy version"}
			}
			pl.Driver.Protocol = n.Protocol
			e.protoWhy = "chosen by auto: " + n.Why
		}
	}
	if driver.IsModern(pl.Driver.Protocol) {
		for _, f := range needs {
			e.notes = append(e.notes, fmt.Sprintf("%s does not apply to %s (stateless: no sessions): not run", f, pl.Driver.Protocol))
		}
		p.Churn.Rate, p.CheckDeleted, pl.Driver.CheckDeleted = 0, false, false
		for i, op := range pl.Ops {
			if driver.RemovedInModern(op.Method) && pl.weight(i) > 0 {
				pl.disable(i)
				e.notes = append(e.notes, fmt.Sprintf("%s left out of the mix: %s has no %s (removed by SEP-2575)", op.Name, pl.Driver.Protocol, op.Method))
			}
		}
		if pl.cum[len(pl.cum)-1] == 0 {
			return fmt.Errorf("%w: no op of the mix exists in %s", ErrSetup, pl.Driver.Protocol)
		}
	}
	if err := driver.PrepareOps(ctx, &pl.Driver, pl.Ops); err != nil {
		return fmt.Errorf("%w: %v", ErrSetup, err)
	}
	return nil
}

// sessionFeatures names the features of p that need sessions (the legacy
// versions 2025-03-26 … 2025-11-25).
func sessionFeatures(p *Profile) []string {
	var out []string
	if p.Churn.Rate > 0 {
		out = append(out, "session churn")
	}
	if p.CheckDeleted {
		out = append(out, "the deleted-session check")
	}
	return out
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
			s, _ := driver.NewSession(e.cfgFor(i), i)
			if e.initSession(ctx, s) {
				out[i] = s
			}
			return nil
		})
	}
	g.Wait()
	return out
}

func (e *engine) closeAdmit() {
	e.spawnMu.Lock()
	defer e.spawnMu.Unlock()
	select {
	case <-e.stopAdmit:
	default:
		close(e.stopAdmit)
	}
}

// waitWindow blocks until the end of the measured window (closed model).
func (e *engine) waitWindow() {
	t := time.NewTimer(time.Until(e.end))
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.stopAdmit:
	}
}

// launch starts VU id with session s (nil: initialize first).
func (e *engine) launch(id int, s *driver.Session) {
	e.wg.Add(1)
	e.live.Add(1)
	e.started.Add(1)
	go e.vu(id, s)
}

// The open model: arrival slots 0, 1, 2 ... are due at the times the
// schedule gives. A free VU claims the next slot, sleeps until it is due and
// runs it, so an op costs one timer wake-up and no handoff between
// goroutines (the way wrk2 paces per connection). A slot claimed after its
// due time (every VU was busy) runs at once, still timed from its intended
// start; one claimed later than max_delay is dropped and counted, with how
// late it was as a lower bound of its response time; slots still unclaimed
// when the run ends are dropped too (dropUnclaimed). While every VU is busy
// and a slot is overdue, VUs are added up to max_vus: one every 5 ms at
// most (watchArrivals), and never more than maxSpawning still initializing.

// spawnLag is how overdue the next unclaimed slot must be before another
// VU is added.
const spawnLag = 2 * time.Millisecond

// maxSpawning bounds the added VUs still initializing their sessions. A
// hiccup of a few milliseconds makes every slot overdue for a moment;
// without a bound each overdue claim would add a VU, each new VU costs
// the server an initialize, the server falls further behind and the run
// spirals to max_vus. With it the pool still grows by hundreds of VUs a
// second when the load truly needs them.
const maxSpawning = 4

// claim takes the next arrival slot: the op to run and its intended start,
// or stop when the schedule is over.
func (e *engine) claim() (j job, wait time.Duration, stop bool) {
	h := e.next.Add(1) - 1
	elapsed := time.Since(e.start)
	wait, stop = e.sched.Pace(elapsed, h)
	if stop {
		return job{}, 0, true
	}
	return job{intended: e.start.Add(elapsed + wait), op: e.pl.opFor(h)}, wait, false
}

// dropUnclaimed counts the slots due in the window that no VU claimed by
// the end of the run (every VU stayed busy): each is dropped, at least
// now − its intended start late.
func (e *engine) dropUnclaimed(now time.Time) {
	shard := e.rec.Shard(0)
	for h := e.next.Load(); ; h++ {
		due, stop := e.sched.Pace(0, h)
		if stop {
			return
		}
		intended := e.start.Add(due)
		if !intended.Before(e.end) {
			return
		}
		e.dropped.Add(1)
		if e.counted(intended) {
			shard.Dropped(e.pl.opFor(h), now.Sub(intended))
		}
	}
}

// watchArrivals adds a VU whenever the next slot is overdue and no VU has
// claimed it (all busy), up to max_vus.
func (e *engine) watchArrivals() {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-e.stopAdmit:
			return
		}
		if e.live.Load() >= int64(e.pl.Profile.MaxVUs) {
			continue
		}
		wait, stop := e.sched.Pace(time.Since(e.start), e.next.Load())
		if stop {
			return
		}
		if -wait > spawnLag {
			e.spawn()
		}
	}
}

// spawn starts one more VU if the cap allows.
func (e *engine) spawn() {
	e.spawnMu.Lock()
	defer e.spawnMu.Unlock()
	if isClosed(e.stopAdmit) || e.live.Load() >= int64(e.pl.Profile.MaxVUs) || e.spawning.Load() >= maxSpawning {
		return
	}
	e.spawning.Add(1)
	e.launch(int(e.started.Load()), nil)
}

// counted reports whether an op intended at t is in the measured window.
func (e *engine) counted(t time.Time) bool { return !t.Before(e.warmEnd) && t.Before(e.end) }

// opCtx is the context of an op intended at t: the run's, marked for the
// chaos layer as a warm-up or a measured op.
func (e *engine) opCtx(t time.Time) context.Context {
	if e.inj == nil {
		return e.runCtx
	}
	if t.Before(e.warmEnd) {
		return e.warmCtx
	}
	return e.measCtx
}

func (e *engine) vu(id int, s *driver.Session) {
	defer e.wg.Done()
	defer e.live.Add(-1)
	p := &e.pl.Profile
	shard := e.rec.Shard(id)
	rng := rand.New(rand.NewPCG(uint64(p.Seed), uint64(id)+1))
	var res driver.Result

	if s == nil {
		spawned := p.Open() // the open model adds VUs through spawn
		s, _ = driver.NewSession(e.cfgFor(id), id)
		for !e.initSession(e.runCtx, s) {
			if sleepOr(e.runCtx, e.stopAdmit, time.Second) {
				if spawned {
					e.spawning.Add(-1)
				}
				return
			}
		}
		if spawned {
			e.spawning.Add(-1)
		}
	}
	defer func() { e.closeSession(s) }()
	if p.GETStream {
		e.openGET(s)
	}
	var expires time.Time
	lifetime := func() time.Time {
		if p.Churn.Rate <= 0 {
			return time.Time{}
		}
		mean := float64(p.VUs) / p.Churn.Rate
		return time.Now().Add(time.Duration((0.5 + rng.Float64()) * mean * float64(time.Second)))
	}
	expires = lifetime()
	// run runs one op; it reports false when the VU must stop (the run
	// ended while it replaced its session or waited out a Retry-After).
	run := func(j *job) bool {
		if !expires.IsZero() && time.Now().After(expires) {
			// Churn: this session has lived its time; replace it.
			e.closeSession(s)
			e.mu.Lock()
			e.churned++
			e.mu.Unlock()
			s, _ = driver.NewSession(e.cfgFor(id), id)
			for !e.initSession(e.runCtx, s) {
				if sleepOr(e.runCtx, e.stopAdmit, 100*time.Millisecond) {
					return false
				}
			}
			if p.GETStream {
				e.openGET(s)
			}
			expires = lifetime()
		}
		res.Reset()
		res.Op = j.op
		res.Intended = j.intended
		s.Do(e.opCtx(j.intended), e.pl.Ops[j.op], &res)
		counted := e.counted(res.Intended)
		if counted {
			shard.Record(&res)
		}
		// 429/503 with Retry-After: the server asked this client to wait.
		if wait := driver.RetryAfter(res.Err); wait > 0 {
			if d := time.Until(e.end); d < wait {
				wait = max(d, 0)
			}
			if counted {
				shard.Throttled(j.op, wait)
			}
			if sleepOr(e.runCtx, e.stopAdmit, wait) {
				return false
			}
		}
		return true
	}
	if p.Open() {
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for {
			j, wait, stop := e.claim()
			switch {
			case stop:
				// The schedule has no slot left for this VU, but its
				// session (and GET stream) stays open to the end of the
				// window: the sessions gauge and a sessions sweep count
				// on it.
				<-e.stopAdmit
				return
			case wait > 0:
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-e.stopAdmit:
					return
				}
			case -wait > e.maxDelay:
				e.dropped.Add(1)
				if e.counted(j.intended) {
					shard.Dropped(j.op, -wait)
				}
				continue
			}
			if !run(&j) {
				return
			}
		}
	}
	for {
		now := time.Now()
		if !now.Before(e.end) || isClosed(e.stopAdmit) {
			return
		}
		j := job{intended: now, op: e.pl.pick(rng)}
		if !run(&j) {
			return
		}
		if d := p.ThinkTime.D(); d > 0 && sleepOr(e.runCtx, e.stopAdmit, d) {
			return
		}
	}
}

// cfgFor returns the driver config of VU vu: the plan's, with the VU's
// chaos transport when a fault plan is on.
func (e *engine) cfgFor(vu int) *driver.Config {
	if e.inj == nil {
		return &e.pl.Driver
	}
	c := e.pl.Driver
	base := http.DefaultTransport
	if c.HTTPClient != nil && c.HTTPClient.Transport != nil {
		base = c.HTTPClient.Transport
	}
	c.HTTPClient = &http.Client{Transport: e.inj.Wrap(vu, base)}
	return &c
}

func failClasses(m map[string]int64) string {
	if len(m) == 0 {
		return "no attempt finished"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for _, k := range keys {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, m[k])
	}
	return out
}

// stopCause is why the run cut its in-flight ops (Ctrl-C, the graceful
// stop expired). It is also context.Canceled, so the driver classes the
// ops it cut as canceled: interrupted by the run, not errors of the
// server, and kept out of latency and the replay ledger.
type stopCause struct{ why error }

func (c stopCause) Error() string   { return c.why.Error() }
func (c stopCause) Unwrap() []error { return []error{c.why, context.Canceled} }

// sleepOr waits d; it returns true if ctx ended or stop closed first.
func sleepOr(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false
	case <-ctx.Done():
		return true
	case <-stop:
		return true
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
