package workload

import (
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/netutil"
)

// iterate runs one iteration of scenario j.scen-1: its steps in order,
// each repeated and fired in parallel as the step says, with its think
// time after it. The first request is timed from the iteration's intended
// start (coordinated omission corrected), later ones from when their step
// began. Every request is recorded under its step's op; the iteration,
// from its intended start to the end of its last step (think times
// included: an agent's user waits through them), under its scenario. A
// failed request fails the iteration but does not stop it. An iteration
// admitted in the window runs to its end (the graceful stop bounds it);
// it is counted when its intended start is in the measured window. false
// when the VU must stop.
func (v *vuState) iterate(j *job) bool {
	e := v.e
	if !v.churn() {
		return false
	}
	sc := &e.pl.Scenarios[j.scen-1]
	counted := e.counted(j.intended)
	intended := j.intended
	failed := false
	for _, st := range sc.Steps {
		for range st.Repeat {
			if e.runCtx.Err() != nil {
				return false // the hard stop: the iteration is cut, not counted
			}
			ok, more := v.step(st, intended, counted)
			failed = failed || !ok
			if !more {
				return false
			}
			intended = time.Time{} // later steps are timed from their start
		}
		if st.Think > 0 && netutil.SleepCtx(e.runCtx, st.Think) != nil {
			return false
		}
	}
	if counted {
		e.rec.RecordIteration(j.scen-1, j.intended, time.Now(), failed)
	}
	return true
}

// step fires one step's requests (Parallel of them, one per lane) and
// records them; ok is false when one failed, more when the run ended
// meanwhile (a Retry-After outlived it).
func (v *vuState) step(st Step, intended time.Time, counted bool) (ok, more bool) {
	e := v.e
	op := e.pl.Ops[st.Op]
	if intended.IsZero() {
		intended = time.Now()
	}
	corr := e.pl.corr
	miss := corr.before(v.vals, st.Op) // a value it reads is missing: not sent (correlate.go)
	if st.Parallel <= 1 {
		res := &v.res
		res.Reset()
		res.Op, res.Intended = st.Op, intended
		v.stamp(res)
		if miss != nil {
			failMissing(res, miss)
		} else {
			v.s.Do(e.opCtx(intended), op, res)
		}
		corr.after(v.vals, st.Op, res.Class)
		return res.Err == nil, v.record(res, counted)
	}
	if len(v.pres) < st.Parallel {
		v.pres = make([]driver.Result, st.Parallel)
	}
	var wg sync.WaitGroup
	for k := range st.Parallel {
		res := &v.pres[k]
		res.Reset()
		res.Op, res.Intended = st.Op, intended
		v.stamp(res) // each parallel request its own iteration: its own random values and data row
		if miss != nil {
			failMissing(res, miss)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.lanes[k].Do(e.opCtx(intended), op, res)
		}()
	}
	wg.Wait()
	ok, more = true, true
	for k := range st.Parallel {
		ok = ok && v.pres[k].Err == nil
		more = v.record(&v.pres[k], counted) && more
	}
	return ok, more
}

// dropIteration counts a dropped arrival of a scenario as a dropped
// iteration too.
func (e *engine) dropIteration(j job) {
	if j.scen > 0 {
		e.rec.DropIteration(j.scen - 1)
	}
}
