package workload

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/metrics"
)

// The VUs. Each owns one MCP session (replaced when churn is on) and runs
// ops: in the open model the arrival slots claimed for it, in the closed
// model back to back while it is active (stages make VUs active and idle).
// A closed-model VU, and each lane of a session with concurrency > 1, is a
// goroutine; the open model's sessions with one request in flight share a
// pool of workers (open.go).
//
// The open model: arrival slots 0, 1, 2 ... are due at the times the
// schedule gives. A free worker (or lane) claims the next slot, sleeps until
// it is due and runs it, so an op costs one timer wake-up and no handoff
// between goroutines (the way wrk2 paces per connection). A slot claimed
// after its due time (every session was busy) runs at once, still timed
// from its intended start; one claimed later than max_delay is dropped and
// counted, with how late it was as a lower bound of its response time;
// slots still unclaimed when the run ends are dropped too (dropUnclaimed).
// While every session is busy and a slot is overdue, VUs are added up to
// max_vus: one every 5 ms at most (watchArrivals), and never more than
// maxSpawning still initializing.

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

// vu is one VU's life: its session (initialized here when s is nil), its
// GET stream, its ops, and its session's close. local is its number in the
// segment; it runs as VU vuID(local), its number in the whole test.
func (e *engine) vu(local int, s *driver.Session) {
	defer e.wg.Done()
	defer e.live.Add(-1)
	id := e.vuID(local)
	v := &vuState{e: e, id: id, s: s, shard: e.rec.Shard(local), rng: newVURand(e.pl.Seed, id), vals: e.pl.corr.forVU(id)}
	if s == nil {
		if !e.pl.Open && !e.waitActive(id) {
			return // a stage never activated this VU
		}
		ok := v.open()
		if e.pl.Open {
			e.spawning.Add(-1) // the open model adds VUs through spawn
		}
		if !ok {
			return
		}
	}
	defer func() { e.parkClose(v.s) }()
	e.prepare(v)
	if c := e.pl.Concurrency; c > 1 {
		v.runLanes(c)
		return
	}
	v.loop()
}

// newVURand is VU id's random stream: the same in every segment and run
// of one seed.
func newVURand(seed int64, id int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(id)+1))
}

// loop runs the VU's (or lane's) ops until the window ends.
func (v *vuState) loop() {
	if v.e.pl.Open {
		v.openLoop()
		return
	}
	v.closedLoop()
}

// laneGroup is a VU's session when it has several requests in flight
// (concurrency > 1): one worker per lane runs ops under the read lock;
// replacing the session (churn) takes the write lock, so it waits for the
// requests in flight and no lane sends on a closed session.
type laneGroup struct {
	mu      sync.RWMutex
	lanes   []*driver.Session
	expires time.Time
}

// runLanes runs the VU's session with c requests in flight: c workers,
// one per lane, each running the VU's loop (the open model: each claims
// arrivals, so an arrival takes any free lane of any session). Worker 0 is
// v itself; it returns once every worker has.
func (v *vuState) runLanes(c int) {
	e := v.e
	g := &laneGroup{lanes: v.s.Lanes(c), expires: v.expires}
	var wg sync.WaitGroup
	for k := range c {
		w := v
		if k > 0 {
			w = &vuState{e: e, id: v.id, shard: e.rec.Shard(v.id*c + k),
				rng: rand.New(rand.NewPCG(uint64(e.pl.Seed)^laneSeed, uint64(v.id)<<16|uint64(k)))}
		}
		w.grp, w.lane = g, k
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop()
		}()
	}
	wg.Wait()
	v.s = g.lanes[0] // the session churn left (closed by vu)
}

// laneSeed sets the random streams of lanes 1… apart from the VUs'.
const laneSeed = 0x6c616e65

// vuState is what a VU (or one lane of its session) keeps between ops.
type vuState struct {
	e       *engine
	id      int
	s       *driver.Session
	shard   *metrics.Shard
	rng     *rand.Rand
	res     driver.Result
	expires time.Time
	grp     *laneGroup // the session's lanes (concurrency > 1), else nil
	lane    int
	lanes   []*driver.Session // the session's lanes for parallel steps (scenarios)
	pres    []driver.Result   // results of a parallel step's requests
	iter    int64             // ops run so far: the next op's iteration
	vals    *vuValues         // values its steps keep for later steps (correlate.go; nil: none)
}

// open initializes the VU's session, retrying until the window ends.
func (v *vuState) open() bool {
	e := v.e
	v.s, _ = driver.NewSession(e.cfgFor(v.id), v.id)
	for !e.initSession(e.runCtx, v.s, v.id) {
		if netutil.SleepCtx(e.admit, time.Second) != nil {
			return false
		}
	}
	return true
}

// lifetime draws when the session is to be replaced (churn; zero: never):
// around VUs / churn rate, ×0.5 … ×1.5.
func (v *vuState) lifetime() time.Time {
	pl := v.e.pl
	if pl.ChurnRate <= 0 {
		return time.Time{}
	}
	mean := float64(pl.VUs) / pl.ChurnRate
	return time.Now().Add(time.Duration((0.5 + v.rng.Float64()) * mean * float64(time.Second)))
}

// churn replaces the session once it has lived its time; false: the run
// ended meanwhile.
func (v *vuState) churn() bool {
	if v.expires.IsZero() || !time.Now().After(v.expires) {
		return true
	}
	return v.replace()
}

// churnLanes is churn for a session with lanes: the first lane to find it
// expired replaces it once the others' requests are done.
func (v *vuState) churnLanes() bool {
	g := v.grp
	g.mu.RLock()
	exp := g.expires
	g.mu.RUnlock()
	if exp.IsZero() || !time.Now().After(exp) {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.expires.IsZero() || !time.Now().After(g.expires) {
		return true // another lane replaced it
	}
	v.s = g.lanes[0]
	ok := v.replace()
	g.lanes, g.expires = v.s.Lanes(len(g.lanes)), v.expires
	return ok
}

// replace closes the session and opens a new one.
func (v *vuState) replace() bool {
	e := v.e
	e.closeSession(v.s)
	e.rec.RecordChurn()
	v.s, _ = driver.NewSession(e.cfgFor(v.id), v.id)
	if v.lanes != nil {
		v.lanes = v.s.Lanes(len(v.lanes))
	}
	for !e.initSession(e.runCtx, v.s, v.id) {
		if netutil.SleepCtx(e.admit, 100*time.Millisecond) != nil {
			return false
		}
	}
	if e.pl.GETStream {
		e.openGET(v.s)
	}
	v.expires = v.lifetime()
	return true
}

// run runs one op; false when the VU must stop (the run ended while it
// replaced its session or waited out a Retry-After).
func (v *vuState) run(j *job) bool {
	e := v.e
	res := &v.res
	if j.scen > 0 {
		return v.iterate(j)
	}
	if g := v.grp; g != nil {
		if !v.churnLanes() {
			return false
		}
		g.mu.RLock()
		res.Reset()
		res.Op = j.op
		res.Intended = j.intended
		v.stamp(res)
		g.lanes[v.lane].Do(e.opCtx(j.intended), e.pl.Ops[j.op], res)
		g.mu.RUnlock()
	} else {
		if !v.churn() {
			return false
		}
		res.Reset()
		res.Op = j.op
		res.Intended = j.intended
		v.stamp(res)
		v.s.Do(e.opCtx(j.intended), e.pl.Ops[j.op], res)
	}
	return v.record(res, e.counted(res.Intended))
}

// stamp sets the VU and the iteration a request's templated arguments
// see (args.go): the VU's number and the requests it sent before this one;
// with lanes (concurrency), iteration × lanes + lane, so no two lanes of a
// VU share one.
func (v *vuState) stamp(res *driver.Result) {
	n := int64(1)
	if v.grp != nil {
		n = int64(len(v.grp.lanes))
	}
	res.VU, res.Iteration = v.id, v.iter*n+int64(v.lane)
	v.iter++
}

// record records a finished op (when counted) and waits out a
// Retry-After the server asked for; false when the run ended meanwhile.
func (v *vuState) record(res *driver.Result, counted bool) bool {
	e := v.e
	if res.Pending != nil {
		// Progress still expected on another stream: judged beside the
		// lane, which goes on (driver/late.go). Counted with the VUs, so
		// the graceful stop waits for it (250 ms at most).
		r := res.Clone()
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			r.Settle()
			if counted {
				v.shard.Record(r)
				if n := len(e.cfgs); n > 0 {
					e.rec.RecordEndpoint(v.id%n, r)
				}
			}
		}()
		return true
	}
	if counted {
		v.shard.Record(res)
		if n := len(e.cfgs); n > 0 {
			e.rec.RecordEndpoint(v.id%n, res)
		}
	}
	// 429/503 with Retry-After: the server asked this client to wait.
	if wait := driver.RetryAfter(res.Err); wait > 0 {
		wait = min(wait, max(time.Until(e.end), 0))
		if counted {
			v.shard.Throttled(res.Op, wait)
		}
		if netutil.SleepCtx(e.admit, wait) != nil {
			return false
		}
	}
	return true
}

// openLoop claims arrival slots until the schedule or the window ends: a
// lane's worker (concurrency > 1; one request in flight per session runs
// on the worker pool, open.go).
func (v *vuState) openLoop() {
	e := v.e
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		j, wait, stop := e.claim()
		switch {
		case stop:
			// The schedule has no slot left for this VU, but its session
			// (and GET stream) stays open to the end of the window: the
			// sessions gauge and a sessions sweep count on it.
			<-e.admit.Done()
			return
		case wait > 0:
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-e.admit.Done():
				return
			}
		case -wait > e.maxDelay:
			v.drop(j, -wait)
			continue
		}
		if !v.runNoting(&j, wait) {
			return
		}
	}
}

// drop counts slot j dropped: claimed late by more than max_delay.
func (v *vuState) drop(j job, late time.Duration) {
	e := v.e
	e.dropped.Add(1)
	if e.counted(j.intended) {
		v.shard.Dropped(j.op, j.intended, late)
		e.dropIteration(j)
	}
}

// closedLoop runs ops back to back (after the think time) while the VU is
// active, until the window ends.
func (v *vuState) closedLoop() {
	e := v.e
	for {
		if !e.waitActive(v.id) {
			return
		}
		now := time.Now()
		if !e.admitting(now) {
			return
		}
		claimed, all := e.claimIteration(now) // --iterations (iterations.go)
		if all {
			return
		}
		j := e.pl.pickJob(v.rng)
		j.intended = now
		ok := v.run(&j)
		if claimed {
			e.iterationDone()
		}
		if !ok {
			return
		}
		if d := e.pl.ThinkTime; d > 0 && netutil.SleepCtx(e.admit, d) != nil {
			return
		}
	}
}

// waitActive waits until closed-model VU id is active (stages ramp the
// active VUs: VU id is active while the target is above id); false when
// the window ends first.
func (e *engine) waitActive(id int) bool {
	ramp, ok := e.sched.(Ramp)
	if !ok || e.pl.Open {
		return e.admit.Err() == nil
	}
	for {
		elapsed := time.Since(e.start)
		at, ok := ramp.When(float64(id)+0.5, elapsed)
		if !ok {
			return false
		}
		if at <= elapsed {
			return e.admit.Err() == nil
		}
		if netutil.SleepCtx(e.admit, at-elapsed) != nil {
			return false
		}
	}
}

// claim takes the next arrival slot: the op to run and its intended start,
// or stop when the schedule is over.
func (e *engine) claim() (j job, wait time.Duration, stop bool) {
	h := e.next.Add(1) - 1
	elapsed := time.Since(e.start)
	wait, stop = e.sched.Pace(elapsed, h)
	if stop {
		return job{}, 0, true
	}
	j = e.pl.jobFor(e.slot(h))
	j.intended = e.start.Add(elapsed + wait)
	return j, wait, false
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
		if j := e.pl.jobFor(e.slot(h)); e.counted(intended) {
			shard.Dropped(j.op, intended, now.Sub(intended))
			e.dropIteration(j)
		}
	}
}

// watchArrivals acts whenever the next slot is overdue and nobody has
// claimed it: with the worker pool, a worker when a session is idle;
// otherwise (every session busy) a VU, up to max_vus.
func (e *engine) watchArrivals() {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-e.admit.Done():
			return
		}
		wait, stop := e.sched.Pace(time.Since(e.start), e.next.Load())
		if stop {
			return
		}
		if -wait <= spawnLag {
			continue
		}
		if e.idle != nil && len(e.idle) > 0 {
			e.startWorker(nil) // a session is idle but no worker claimed the slot
			continue
		}
		if e.live.Load() < int64(e.maxVUs) {
			e.spawn()
		}
	}
}

// spawn starts one more VU if the cap allows.
func (e *engine) spawn() {
	e.spawnMu.Lock()
	defer e.spawnMu.Unlock()
	if e.admit.Err() != nil || e.live.Load() >= int64(e.maxVUs) || e.spawning.Load() >= maxSpawning {
		return
	}
	e.spawning.Add(1)
	if e.idle != nil {
		e.wwg.Add(1)
		go e.spawned(int(e.started.Add(1) - 1)) // its number taken here: two spawns never share one
		return
	}
	e.launch(int(e.started.Load()), nil)
}

// admitting reports whether an op may start at now: the admission window
// is open and now is before the window's end. The clock is checked as well
// as the context because a VU woken at the end's very instant can run
// before the deadline's timer cancels admit: an op it started then would
// run, and reach the server, without being counted.
func (e *engine) admitting(now time.Time) bool { return e.admit.Err() == nil && now.Before(e.end) }

// counted reports whether an op intended at t is in the measured window.
func (e *engine) counted(t time.Time) bool { return !t.Before(e.warmEnd) && t.Before(e.end) }

// opCtx is the context of an op intended at t: the run's, marked for the
// chaos layer as a measured op or one outside the measured window.
func (e *engine) opCtx(t time.Time) context.Context {
	if e.inj == nil {
		return e.runCtx
	}
	if !e.counted(t) {
		return e.warmCtx // the chaos layer counts its faults as outside the window
	}
	return e.measCtx
}
