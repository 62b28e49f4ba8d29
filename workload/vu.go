package workload

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
)

// The VUs. Each owns one MCP session (replaced when churn is on) and runs
// ops: in the open model the arrival slots it claims, in the closed model
// back to back while it is active (stages make VUs active and idle).
//
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

// vu is one VU's life: its session (initialized here when s is nil), its
// GET stream, its ops, and its session's close.
func (e *engine) vu(id int, s *driver.Session) {
	defer e.wg.Done()
	defer e.live.Add(-1)
	v := &vuState{e: e, id: id, s: s, shard: e.rec.Shard(id), rng: rand.New(rand.NewPCG(uint64(e.pl.Profile.Seed), uint64(id)+1))}
	if s == nil {
		if !e.pl.Profile.Open() && !e.waitActive(id) {
			return // a stage never activated this VU
		}
		ok := v.open()
		if e.pl.Profile.Open() {
			e.spawning.Add(-1) // the open model adds VUs through spawn
		}
		if !ok {
			return
		}
	}
	defer func() { e.closeSession(v.s) }()
	if e.pl.Profile.GETStream {
		e.openGET(v.s)
	}
	v.expires = v.lifetime()
	if e.pl.Profile.Open() {
		v.openLoop()
		return
	}
	v.closedLoop()
}

// vuState is what a VU keeps between ops.
type vuState struct {
	e       *engine
	id      int
	s       *driver.Session
	shard   *metrics.Shard
	rng     *rand.Rand
	res     driver.Result
	expires time.Time
	iter    int64 // ops run so far: the next op's iteration
}

// open initializes the VU's session, retrying until the window ends.
func (v *vuState) open() bool {
	e := v.e
	v.s, _ = driver.NewSession(e.cfgFor(v.id), v.id)
	for !e.initSession(e.runCtx, v.s) {
		if sleepCtx(e.admit, time.Second) {
			return false
		}
	}
	return true
}

// lifetime draws when the session is to be replaced (churn; zero: never):
// around VUs / churn rate, ×0.5 … ×1.5.
func (v *vuState) lifetime() time.Time {
	p := &v.e.pl.Profile
	if p.Churn.Rate <= 0 {
		return time.Time{}
	}
	mean := float64(p.VUs) / p.Churn.Rate
	return time.Now().Add(time.Duration((0.5 + v.rng.Float64()) * mean * float64(time.Second)))
}

// churn replaces the session once it has lived its time; false: the run
// ended meanwhile.
func (v *vuState) churn() bool {
	e := v.e
	if v.expires.IsZero() || !time.Now().After(v.expires) {
		return true
	}
	e.closeSession(v.s)
	e.rec.RecordChurn()
	v.s, _ = driver.NewSession(e.cfgFor(v.id), v.id)
	for !e.initSession(e.runCtx, v.s) {
		if sleepCtx(e.admit, 100*time.Millisecond) {
			return false
		}
	}
	if e.pl.Profile.GETStream {
		e.openGET(v.s)
	}
	v.expires = v.lifetime()
	return true
}

// run runs one op; false when the VU must stop (the run ended while it
// replaced its session or waited out a Retry-After).
func (v *vuState) run(j *job) bool {
	e := v.e
	if !v.churn() {
		return false
	}
	res := &v.res
	res.Reset()
	res.Op = j.op
	res.Intended = j.intended
	res.VU, res.Iteration = v.id, v.iter // for templated arguments (args.go)
	v.iter++
	v.s.Do(e.opCtx(j.intended), e.pl.Ops[j.op], res)
	counted := e.counted(res.Intended)
	if counted {
		v.shard.Record(res)
	}
	// 429/503 with Retry-After: the server asked this client to wait.
	if wait := driver.RetryAfter(res.Err); wait > 0 {
		wait = min(wait, max(time.Until(e.end), 0))
		if counted {
			v.shard.Throttled(j.op, wait)
		}
		if sleepCtx(e.admit, wait) {
			return false
		}
	}
	return true
}

// openLoop claims arrival slots until the schedule or the window ends.
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
			e.dropped.Add(1)
			if e.counted(j.intended) {
				v.shard.Dropped(j.op, j.intended, -wait)
			}
			continue
		}
		if !v.run(&j) {
			return
		}
	}
}

// closedLoop runs ops back to back (after the think time) while the VU is
// active, until the window ends.
func (v *vuState) closedLoop() {
	e, p := v.e, &v.e.pl.Profile
	for {
		if !e.waitActive(v.id) {
			return
		}
		now := time.Now()
		if !e.admitting(now) {
			return
		}
		j := job{intended: now, op: e.pl.pick(v.rng)}
		if !v.run(&j) {
			return
		}
		if d := p.ThinkTime.D(); d > 0 && sleepCtx(e.admit, d) {
			return
		}
	}
}

// waitActive waits until closed-model VU id is active (stages ramp the
// active VUs: VU id is active while the target is above id); false when
// the window ends first.
func (e *engine) waitActive(id int) bool {
	ramp, ok := e.sched.(Ramp)
	if !ok || e.pl.Profile.Open() {
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
		if sleepCtx(e.admit, at-elapsed) {
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
			shard.Dropped(e.pl.opFor(h), intended, now.Sub(intended))
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
		case <-e.admit.Done():
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
	if e.admit.Err() != nil || e.live.Load() >= int64(e.pl.Profile.MaxVUs) || e.spawning.Load() >= maxSpawning {
		return
	}
	e.spawning.Add(1)
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
