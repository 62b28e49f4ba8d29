package workload

import (
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"golang.org/x/sync/errgroup"
)

// The open model's workers. A session between ops needs no goroutine: in
// the open model (one request in flight per session) the VUs' sessions
// wait in a queue, idle longest first, and a small pool of worker
// goroutines runs the arrivals. A worker takes the session idle longest,
// claims the next arrival slot, sleeps until it is due, runs it and puts
// the session back at the queue's tail, so ops rotate over every session
// (and churn reaches each in turn) while an idle session costs its memory
// and its GET stream's reader, not a goroutine of its own (~4 KiB of
// stack, half of what an idle session with a GET stream used to hold).
//
// The pool sizes itself: a worker that finishes an op while another
// worker already waits on a claimed slot and the next unclaimed slot is
// more than parkHorizon away leaves (its session back in the queue); a
// worker that stops waiting (its slot is due) while no other waits starts
// one, so a claimer is always ready for the next slot and no op starts
// late for want of a goroutine. In a steady load the pool holds about
// rate × (parkHorizon + response time) workers and none start or leave.
// A slot still overdue by spawnLag (every session busy, or a burst) gets
// a worker when a session is idle, else a new VU up to max_vus
// (watchArrivals). Sessions with several lanes (concurrency > 1) keep a
// goroutine per lane (vu.go).

// parkHorizon is how far ahead the workers waiting on claimed slots must
// already reach before a worker that finished an op leaves the pool.
const parkHorizon = 20 * time.Millisecond

// pooled reports whether the run uses the worker pool: the open model
// with one request in flight per session.
func (e *engine) pooled() bool { return e.pl.Open && e.pl.Concurrency <= 1 }

// launchPool starts the open model's VUs on the sessions set up (nil ones
// failed; the pool adds VUs on demand): their GET streams open in the
// background, 64 at a time, each session joining the queue once ready.
// It also starts the arrival watcher and the closer of the sessions at
// the end. Called once, after the clock started.
func (e *engine) launchPool(sessions []*driver.Session) {
	e.idle = make(chan *vuState, max(e.maxVUs, len(sessions), 1))
	e.wg.Add(1)
	go e.closeAtEnd()
	var vs []*vuState
	for i, s := range sessions {
		if s != nil {
			e.started.Add(1)
			vs = append(vs, e.newVU(i, s))
		}
	}
	e.wwg.Add(2)
	go func() {
		defer e.wwg.Done()
		var g errgroup.Group
		g.SetLimit(64)
		for _, v := range vs {
			g.Go(func() error {
				e.ready(v)
				e.keepWaiting()
				return nil
			})
		}
		g.Wait()
	}()
	go func() {
		defer e.wwg.Done()
		e.watchArrivals()
	}()
}

// newVU makes the state of the segment's VU local (vuID(local) in the
// whole test) on session s (nil: initialized later) and counts it live
// (the caller counted it started, taking its number).
func (e *engine) newVU(local int, s *driver.Session) *vuState {
	e.live.Add(1)
	id := e.vuID(local)
	return &vuState{e: e, id: id, s: s, shard: e.rec.Shard(local), rng: newVURand(e.pl.Seed, id), vals: e.pl.corr.forVU(id)}
}

// ready opens v's GET stream (when the profile asks), draws its session's
// lifetime and lanes, and queues it as idle.
func (e *engine) ready(v *vuState) {
	e.prepare(v)
	e.idle <- v // never blocks: the queue holds every live VU
}

// prepare is what a VU does once its session is initialized, before its
// first op: the GET stream, the session's lifetime (churn), the lanes of
// parallel scenario steps.
func (e *engine) prepare(v *vuState) {
	if e.pl.GETStream {
		e.openGET(v.s)
	}
	v.expires = v.lifetime()
	if n := e.pl.MaxParallel(); n > 1 {
		v.lanes = v.s.Lanes(n) // parallel steps of scenarios
	}
}

// takeIdle returns the session idle longest, or nil when none is.
func (e *engine) takeIdle() *vuState {
	select {
	case v := <-e.idle:
		return v
	default:
		return nil
	}
}

// startWorker starts a worker holding v (nil: it takes an idle session).
func (e *engine) startWorker(v *vuState) {
	e.starting.Add(1)
	e.wwg.Add(1)
	go e.worker(v)
}

// workerStarted and workerDone count the pool's workers (peakWorkers:
// the most at once).
func (e *engine) workerStarted() {
	n := e.workers.Add(1)
	for {
		p := e.peakWorkers.Load()
		if n <= p || e.peakWorkers.CompareAndSwap(p, n) {
			return
		}
	}
}

// keepWaiting starts a worker when none waits on a claimed slot, none is
// on its way to claim one and a session is idle: the next slot then has a
// claimer before it is due.
func (e *engine) keepWaiting() {
	if e.waiting.Load() == 0 && len(e.idle) > 0 && e.admit.Err() == nil && e.starting.CompareAndSwap(0, 1) {
		e.wwg.Add(1)
		go e.worker(nil)
	}
}

// worker runs arrivals (see the top of this file) until the schedule or
// the window ends, or the pool has more workers than it needs. v is the
// session it starts with (nil: the one idle longest). It is counted in
// e.starting until it has claimed its first slot (and, when that is not
// due yet, counts as waiting).
func (e *engine) worker(v *vuState) {
	defer e.wwg.Done()
	e.workerStarted()
	defer e.workers.Add(-1)
	fresh := true
	settle := func() {
		if fresh {
			fresh = false
			e.starting.Add(-1)
		}
	}
	defer settle()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if v == nil {
			if v = e.takeIdle(); v == nil {
				return // every session is busy or held by a waiting worker
			}
		}
		j, wait, stop := e.claim()
		switch {
		case stop:
			// No slot left; the session (and GET stream) stays open in the
			// queue to the end of the window: the sessions gauge and a
			// sessions sweep count on it.
			e.idle <- v
			return
		case wait > 0:
			e.waiting.Add(1)
			settle()
			timer.Reset(wait)
			select {
			case <-timer.C:
				e.waiting.Add(-1)
			case <-e.admit.Done():
				e.waiting.Add(-1)
				e.idle <- v
				return
			}
		case -wait > e.maxDelay:
			v.drop(j, -wait)
			continue
		}
		settle()
		e.keepWaiting()
		ok := v.runNoting(&j, wait)
		e.idle <- v
		if !ok || e.surplus() {
			return
		}
		v = nil // the session idle longest next
	}
}

// surplus reports whether a worker that finished an op may leave the
// pool: another waits on a claimed slot and the next unclaimed slot is
// more than parkHorizon away.
func (e *engine) surplus() bool {
	if e.waiting.Load() == 0 {
		return false
	}
	wait, stop := e.sched.Pace(time.Since(e.start), e.next.Load())
	return stop || wait > parkHorizon
}

// spawned is a VU the open model added (watchArrivals): it initializes its
// session, retrying until the window ends, gets ready and runs as a
// worker holding it.
func (e *engine) spawned(local int) {
	v := e.newVU(local, nil)
	ok := v.open()
	e.spawning.Add(-1)
	if !ok {
		e.live.Add(-1)
		e.wwg.Done()
		return
	}
	e.prepare(v)
	e.starting.Add(1)
	e.worker(v) // its wwg.Done is the one spawn added
}

// closeAtEnd hands the pooled VUs' sessions to the closes after the
// summary (parkClose) once the admission window is over and every
// worker, spawn and the arrival watcher are done; each VU's life ends
// with its session.
func (e *engine) closeAtEnd() {
	defer e.wg.Done()
	<-e.admit.Done()
	e.wwg.Wait()
	for {
		v := e.takeIdle()
		if v == nil {
			break
		}
		e.parkClose(v.s)
		e.live.Add(-1)
	}
}
