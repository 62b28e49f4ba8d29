package workload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"sort"
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
	stopAdmit           chan struct{}   // closed when the window ends or ctx is cancelled

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
	// negotiated is the protocol version the first session agreed on.
	negotiated string
	protoWhy   string        // how auto decided
	usage0     metrics.Usage // at the end of the warm-up
	notes      []string      // said in the summary

	// Process sampling (collector goroutine, then summary).
	selfPrev, tgtPrev metrics.ProcSample
	tgtFirst, tgtLast metrics.ProcSample
	tgtMaxRSS         int64
	tgtMaxFDs         int
	tgtErr            error
	tgtStarted        bool
	hygiene           [driver.NumVerdicts]int64
	hygChecked        int64
	churned           int64
}

// getAgg aggregates GET-stream stats of closed sessions.
type getAgg struct {
	opened, none, failed, events, requests, breaks, reopens int64
	resumes                                                 metrics.OpStats
	verdicts                                                [driver.NumVerdicts]int64
	streams, faulty                                         int64
	used                                                    bool
}

// Run executes the plan and returns its summary. It returns when the
// measured window and the graceful stop are over, or soon after ctx is
// cancelled (the summary is then marked interrupted, with what was
// gathered). The error is non-nil only when the run could not start
// (ErrSetup, with the summary still filled in).
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

	// Decide the protocol era once per run (cached for every session).
	if pl.Driver.Protocol == driver.ProtocolAuto || pl.Driver.Protocol == "" {
		n, err := driver.Negotiate(ctx, &pl.Driver)
		if err != nil {
			n = driver.Negotiation{Protocol: driver.DefaultProtocol, Why: "server/discover failed: " + err.Error()}
		}
		pl.Driver.Protocol = n.Protocol
		e.protoWhy = "auto: " + n.Why
	}
	if driver.IsModern(pl.Driver.Protocol) {
		for i, op := range pl.Ops {
			if driver.RemovedInModern(op.Method) && pl.weight(i) > 0 {
				pl.disable(i)
				e.notes = append(e.notes, fmt.Sprintf("%s left out of the mix: %s has no %s (removed by SEP-2575)", op.Name, pl.Driver.Protocol, op.Method))
			}
		}
		if pl.cum[len(pl.cum)-1] == 0 {
			sum := e.summary(time.Now(), time.Now(), metrics.Usage{}, metrics.Usage{}, ctx)
			return sum, fmt.Errorf("%w: no op of the mix exists in %s", ErrSetup, pl.Driver.Protocol)
		}
	}
	if err := driver.PrepareOps(ctx, &pl.Driver, pl.Ops); err != nil {
		sum := e.summary(time.Now(), time.Now(), metrics.Usage{}, metrics.Usage{}, ctx)
		return sum, fmt.Errorf("%w: %v", ErrSetup, err)
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

	// Ctrl-C: stop admitting at once and cut in-flight ops.
	stopWatch := context.AfterFunc(ctx, func() {
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
		if s == nil {
			if p.Open() {
				continue // the open model adds VUs on demand
			}
			// Closed model: the VU keeps trying to initialize.
		}
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
	measuredEnd := time.Now()
	if measuredEnd.After(e.end) || ctx.Err() == nil {
		measuredEnd = e.end
	}
	return e.summary(e.warmEnd, measuredEnd, usage0, usage1, ctx), nil
}

// setup initializes n sessions concurrently; failed ones are nil.
func (e *engine) setup(ctx context.Context, n int) []*driver.Session {
	out := make([]*driver.Session, n)
	var g errgroup.Group
	g.SetLimit(max(1, cmpOr(e.opts.SetupConcurrency, 64)))
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

func cmpOrS(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// initSession initializes s and records the outcome.
func (e *engine) initSession(ctx context.Context, s *driver.Session) bool {
	var res driver.Result
	err := s.Initialize(ctx, &res)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		if res.Class != driver.ClassCanceled {
			e.sess.Failed++
			e.failCls[res.Class]++
			if e.failEx[res.Class] == "" {
				e.failEx[res.Class] = err.Error()
			}
		}
		return false
	}
	e.sess.Opened++
	if e.negotiated == "" {
		e.negotiated = s.Protocol()
	}
	e.initHist.RecordValue(max(1, res.ServiceTime().Microseconds()))
	e.sessionsOpen.Add(1)
	return true
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
// start; one claimed later than max_delay is dropped and counted. While
// every VU is busy and a slot is overdue, VUs are added up to max_vus: one
// every 5 ms at most (watchArrivals), and never more than maxSpawning
// still initializing.

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
	run := func(j *job) {
		if !expires.IsZero() && time.Now().After(expires) {
			// Churn: this session has lived its time; replace it.
			e.closeSession(s)
			e.mu.Lock()
			e.churned++
			e.mu.Unlock()
			s, _ = driver.NewSession(e.cfgFor(id), id)
			for !e.initSession(e.runCtx, s) {
				if sleepOr(e.runCtx, e.stopAdmit, 100*time.Millisecond) {
					return
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
		s.Do(e.runCtx, e.pl.Ops[j.op], &res)
		if e.counted(res.Intended) {
			shard.Record(&res)
		}
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
					shard.Dropped(j.op)
				}
				continue
			}
			run(&j)
		}
	}
	for {
		now := time.Now()
		if !now.Before(e.end) || isClosed(e.stopAdmit) {
			return
		}
		j := job{intended: now, op: e.pl.pick(rng)}
		run(&j)
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

// onGETResume counts a GET stream's reconnect attempt on the timeline.
func (e *engine) onGETResume(r driver.Resume) {
	e.tl.Add(r.At, metrics.Early(&r))
}

func (e *engine) openGET(s *driver.Session) {
	s.OnGETResume = e.onGETResume
	err := s.OpenStream(e.runCtx)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get.used = true
	switch {
	case err == nil:
		e.streamsOpen.Add(1)
	case errors.Is(err, driver.ErrNoGETStream):
		e.get.none++
	default:
		e.get.failed++
	}
}

func (e *engine) closeSession(s *driver.Session) {
	st := s.StreamStats()
	// DELETE gets its own short deadline: it must go out even after Ctrl-C.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.runCtx), 5*time.Second)
	err := s.Close(ctx)
	cancel()
	e.sessionsOpen.Add(-1)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.sess.CloseFails++
	} else {
		e.sess.Closed++
	}
	if h := s.Hygiene(); h.Checked {
		e.hygChecked++
		for i, c := range h.Counts {
			e.hygiene[i] += int64(c)
		}
	}
	if st.Opened > 0 {
		e.streamsOpen.Add(-1)
		g := &e.get
		g.opened += st.Opened
		g.events += st.Events
		g.requests += st.Requests
		g.breaks += st.Breaks
		g.reopens += st.Reopens
		for _, r := range st.Resumes {
			g.resumes.Resumes++
			if r.OK {
				g.resumes.ResumesOK++
			}
			if metrics.Early(&r) {
				g.resumes.EarlyResume++
			}
			if g.resumes.Resume == nil {
				g.resumes.Resume, g.resumes.Wait = metrics.NewHistogram(), metrics.NewHistogram()
			}
			g.resumes.Resume.RecordValue(max(1, r.TimeToResume.Microseconds()))
			g.resumes.Wait.RecordValue(max(1, r.Delay.Microseconds()))
		}
		if st.Ledger.Checked {
			g.streams++
			for i, c := range st.Ledger.Counts {
				g.verdicts[i] += int64(c)
			}
			if st.Ledger.Faulty() {
				g.faulty++
				e.rec.AddOffender(metrics.Offender{Op: "GET stream", Class: st.LastError, Verdicts: driver.VerdictMap(st.Ledger.Counts), EventIDs: st.Ledger.EventIDs(), Resumes: len(st.Resumes)})
			}
		}
	}
}

// sampleTarget reads the target process for an interval row and keeps
// what the summary needs (the measured window's first and last samples,
// the maxima).
func (e *engine) sampleTarget(row *metrics.Row, now time.Time) {
	pid := e.opts.TargetPID
	if pid <= 0 || e.tgtErr != nil {
		return
	}
	cur, err := metrics.ReadProc(pid)
	if err != nil {
		e.tgtErr = err
		return
	}
	r := metrics.ProcDelta(e.tgtPrev, cur)
	row.Target = &r
	e.tgtPrev = cur
	if !now.After(e.warmEnd) || e.tgtStarted && now.After(e.end.Add(time.Second)) {
		if !now.After(e.warmEnd) {
			e.tgtFirst = cur // the last sample before the window opens
		}
		return
	}
	if !e.tgtStarted {
		e.tgtStarted = true
		if e.tgtFirst.At.IsZero() {
			e.tgtFirst = cur
		}
	}
	e.tgtLast = cur
	e.tgtMaxRSS = max(e.tgtMaxRSS, cur.RSS)
	e.tgtMaxFDs = max(e.tgtMaxFDs, cur.FDs)
}

// collect merges metrics once per interval and reports progress.
func (e *engine) collect(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(e.opts.Interval)
	defer t.Stop()
	var reconnects int64
	e.selfPrev, _ = metrics.ReadProc(0)
	if pid := e.opts.TargetPID; pid > 0 {
		e.tgtPrev, e.tgtErr = metrics.ReadProc(pid)
	}
	report := func(now time.Time) {
		iv := e.rec.Tick(now)
		row := metrics.RowOf(iv)
		row.VUs, row.Sessions, row.Streams = e.live.Load(), e.sessionsOpen.Load(), e.streamsOpen.Load()
		if cur, err := metrics.ReadProc(0); err == nil {
			row.Self = metrics.ProcDelta(e.selfPrev, cur)
			e.selfPrev = cur
		}
		e.sampleTarget(&row, now)
		if e.pl.Profile.Open() && iv.Start.Before(e.end) {
			row.TargetRate = e.pl.Profile.Rate // the rate asked for when the interval began
		}
		total := e.tl.Total()
		row.Reconnects, reconnects = total-reconnects, total
		e.rows = append(e.rows, row)
		if e.opts.OnInterval == nil {
			return
		}
		pr := Progress{Interval: iv, Row: row, Names: e.pl.Names, Elapsed: now.Sub(e.start), VUs: e.live.Load(),
			Sessions: e.sessionsOpen.Load(), Streams: e.streamsOpen.Load(), Dropped: e.dropped.Load()}
		// The phase of an interval is the phase it started in.
		switch {
		case iv.Start.Before(e.warmEnd):
			pr.Phase = "warm-up"
		case iv.Start.Before(e.end):
			pr.Phase = "measure"
		default:
			pr.Phase = "stopping"
		}
		if now.Before(e.end) {
			pr.Remaining = e.end.Sub(now)
		}
		pr.TargetRate = row.TargetRate
		e.opts.OnInterval(pr)
	}
	lastCP := time.Now()
	for {
		select {
		case now := <-t.C:
			report(now)
			if cp := e.opts.Checkpoint; cp > 0 && e.opts.OnCheckpoint != nil && now.After(e.warmEnd) && now.Sub(lastCP) >= cp {
				lastCP = now
				e.mu.Lock()
				u0 := e.usage0
				e.mu.Unlock()
				sum := e.summary(e.warmEnd, now, u0, metrics.ReadUsage(), context.Background())
				sum.Interrupted, sum.StopReason = true, "checkpoint: the run goes on"
				e.opts.OnCheckpoint(sum)
			}
		case <-stop:
			report(time.Now())
			return
		}
	}
}

func (e *engine) summary(from, to time.Time, u0, u1 metrics.Usage, ctx context.Context) *metrics.Summary {
	p := &e.pl.Profile
	secs := math.Round(to.Sub(from).Seconds()*1000) / 1000
	if secs < 0 {
		secs = 0
	}
	ops, all := e.rec.Summarize(secs)
	s := &metrics.Summary{
		Tool:        e.opts.Tool,
		Target:      e.pl.Target,
		Embedded:    e.opts.Embedded,
		Protocol:    e.negotiated,
		ProtocolWhy: e.protoWhy,
		Notes:       e.notes,
		Profile:     p.Name,
		Model:       "closed",
		Started:     e.start,
		DurationS:   secs,
		WarmupS:     p.Warmup.D().Seconds(),
		Rate:        all.Rate,
		VUs:         int(e.started.Load()),
		MaxVUs:      p.MaxVUs,
		Dropped:     e.dropped.Load(),
		Ops:         ops,
		All:         all,
	}
	if s.Protocol == "" {
		s.Protocol = "none negotiated (asked " + cmpOrS(e.pl.Driver.Protocol, driver.DefaultProtocol) + ")"
	}
	if p.Open() {
		s.Model = "open"
		s.TargetRate = p.Rate
	} else {
		s.MaxVUs = p.VUs
	}
	if ctx.Err() != nil {
		s.Interrupted = true
		s.StopReason = fmt.Sprint(context.Cause(ctx))
	}
	e.mu.Lock()
	s.Sessions = e.sess
	s.Sessions.Initialize = metrics.LatencyOf(e.initHist)
	for c, n := range e.failCls {
		if n > 0 {
			if s.Sessions.FailClasses == nil {
				s.Sessions.FailClasses = map[string]int64{}
			}
			s.Sessions.FailClasses[driver.Class(c).String()] = n
			if ex := e.failEx[c]; ex != "" {
				if s.Sessions.FailExamples == nil {
					s.Sessions.FailExamples = map[string]string{}
				}
				s.Sessions.FailExamples[driver.Class(c).String()] = ex
			}
		}
	}
	if g := &e.get; g.used {
		gs := &metrics.GETStreamSummary{Opened: g.opened, None: g.none, Failed: g.failed, Events: g.events, Requests: g.requests, Breaks: g.breaks, Reopens: g.reopens}
		if g.resumes.Resumes > 0 {
			gs.Resumes = &metrics.ResumeSummary{Attempts: g.resumes.Resumes, Accepted: g.resumes.ResumesOK, Early: g.resumes.EarlyResume,
				TimeToResume: metrics.LatencyOf(g.resumes.Resume), Wait: metrics.LatencyOf(g.resumes.Wait)}
		}
		if g.streams > 0 {
			gs.Ledger = metrics.LedgerOf(g.streams, g.faulty, g.verdicts)
		}
		s.GETStreams = gs
	}
	e.mu.Unlock()
	if e.hygChecked > 0 {
		s.Sessions.Hygiene = metrics.LedgerOf(e.hygChecked, 0, e.hygiene)
		for _, n := range e.hygiene {
			if n > 0 {
				s.Sessions.Hygiene.Faulty++
			}
		}
	}
	s.Sessions.Churned = e.churned
	if e.inj != nil {
		st := e.inj.Stats()
		s.Chaos = &metrics.ChaosSummary{Plan: e.inj.Plan(), Seed: p.Seed, CutsFIN: st.CutsFIN, CutsRST: st.CutsRST,
			Stalls: st.Stalls, Delays: st.Delays, StormCuts: st.StormCuts}
		if e.tl != nil && len(st.Waves) > 0 {
			s.Storms = metrics.Storms(st.Waves, e.tl, e.rows)
		}
	}
	s.Generator = metrics.GeneratorCost(u0, u1, all.Count, runtime.NumCPU(), e.opts.Embedded)
	s.Generator.StartLag = metrics.LatencyOf(e.rec.StartLag())
	s.Generator.GOMAXPROCS = runtime.GOMAXPROCS(0)
	g := &s.Generator
	switch {
	case !e.opts.Embedded && g.Cores >= 0.8*float64(runtime.GOMAXPROCS(0)):
		g.Bottleneck = fmt.Sprintf("mcpbench used %.2f of its %d cores: the generator may be the bottleneck, and the results may understate the server", g.Cores, runtime.GOMAXPROCS(0))
	case p.Open() && g.StartLag.P99 > 10 && s.VUs >= p.MaxVUs:
		g.Bottleneck = fmt.Sprintf("ops started up to %.0f ms late (start lag p99): every one of the %d VUs was busy (raise --max-vus, or the target is saturated)", g.StartLag.P99, p.MaxVUs)
	case p.Open() && g.StartLag.P99 > 10:
		g.Bottleneck = fmt.Sprintf("ops started up to %.0f ms late (start lag p99): the target did not keep up (VUs waited for answers), or the generator is busy", g.StartLag.P99)
	}
	if pid := e.opts.TargetPID; pid > 0 {
		t := &metrics.TargetSummary{PID: pid}
		switch {
		case e.tgtErr != nil:
			t.Error = e.tgtErr.Error()
		case !e.tgtFirst.At.IsZero() && !e.tgtLast.At.IsZero():
			a, b := e.tgtFirst, e.tgtLast
			cpu := (b.CPU - a.CPU).Seconds()
			t.CPUSeconds = math.Round(cpu*1000) / 1000
			if all.Count > 0 {
				t.CPUPerOpUS = math.Round(cpu*1e6/float64(all.Count)*10) / 10
			}
			if w := b.At.Sub(a.At).Seconds(); w > 0 {
				t.Cores = math.Round(cpu/w*1000) / 1000
			}
			mb := func(b int64) float64 { return math.Round(float64(b)/(1<<20)*10) / 10 }
			t.RSSStartMB, t.RSSEndMB, t.RSSMaxMB = mb(a.RSS), mb(b.RSS), mb(e.tgtMaxRSS)
			t.FDsStart, t.FDsEnd, t.FDsMax, t.Threads = a.FDs, b.FDs, e.tgtMaxFDs, b.Threads
		default:
			t.Error = "no sample inside the measured window"
		}
		s.TargetProc = t
	}
	if len(e.pl.Thresholds) > 0 {
		s.Thresholds = metrics.CheckThresholds(s, e.pl.Thresholds)
	}
	return s
}

func failClasses(m map[string]int64) string {
	if len(m) == 0 {
		return "no attempt finished"
	}
	out := ""
	for k, v := range m {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, v)
	}
	return out
}

// sleepOr waits d; it returns true if ctx ended or stop closed first.
// stopCause is why the run cut its in-flight ops (Ctrl-C, the graceful
// stop expired). It is also context.Canceled, so the driver classes the
// ops it cut as canceled: interrupted by the run, not errors of the
// server, and kept out of latency and the replay ledger.
type stopCause struct{ why error }

func (c stopCause) Error() string   { return c.why.Error() }
func (c stopCause) Unwrap() []error { return []error{c.why, context.Canceled} }

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
