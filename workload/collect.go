package workload

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// The collector: once per interval it merges the recorder's shards, samples
// this process and the target's, and hands the interval to the sinks
// (OnInterval); it writes checkpoints for long runs.

// phaseOf labels an interval. Only ops intended in the measured window are
// recorded, so an interval that ends after the window opened holds
// measured ops and is labelled measure even when it began in the warm-up
// (report rebuilds the window from the rows' times, clamped to it).
func (e *engine) phaseOf(iv results.Interval) results.Phase {
	switch {
	case !iv.End.After(e.warmEnd):
		return results.PhaseWarmup
	case iv.Start.Before(e.end):
		return results.PhaseMeasure
	}
	return results.PhaseStopping
}

// sampleTarget reads the target process for an interval row and keeps
// what the summary needs (the measured window's first and last samples,
// the maxima).
func (e *engine) sampleTarget(row *results.Row, now time.Time) {
	pid := e.opts.TargetPID
	if pid <= 0 || e.tgtErr != nil {
		return
	}
	cur, err := results.ReadProc(pid)
	if err != nil {
		e.tgtErr = err
		return
	}
	r := results.ProcDelta(e.tgtPrev, cur)
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

// collect merges metrics once per interval and hands each interval to
// the sinks; it hands checkpoints to those that take them. Intervals are
// aligned on the run's start (so a row's target rate is the schedule's
// arrivals in exactly its span) and each is closed intervalGrace after its
// end, so that ops intended just before the end have completed and count
// in it (see metrics.Recorder.Tick).
func (e *engine) collect(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	e.selfPrev, _ = results.ReadProc(0)
	if pid := e.opts.TargetPID; pid > 0 {
		e.tgtPrev, e.tgtErr = results.ReadProc(pid)
	}
	iv := e.opts.Interval
	grace := min(intervalGrace, iv/4)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var reconnects int64
	lastCP := time.Now()
	for k := 1; ; k++ {
		end := e.start.Add(time.Duration(k) * iv)
		t.Reset(time.Until(end.Add(grace)))
		select {
		case <-t.C:
			e.report(end, end.Add(iv), &reconnects)
			e.judgeAbort(end) // abort_on_fail (abort.go)
			if cp := e.opts.Checkpoint; cp > 0 && end.After(e.warmEnd) && end.Sub(lastCP) >= cp {
				lastCP = end
				e.checkpoint(end)
			}
		case <-stop:
			e.report(time.Now(), time.Time{}, &reconnects)
			return
		}
	}
}

// intervalGrace is how long after an interval's end it is closed (at most
// a quarter of the interval).
const intervalGrace = 100 * time.Millisecond

// report closes the interval ending at now (next: the end of the
// following one; zero for the last): the recorder's merge, the row with
// the gauges and process samples, and the sinks.
func (e *engine) report(now, next time.Time, reconnects *int64) {
	iv := e.rec.Tick(now, next)
	row := results.RowOf(iv)
	row.VUs, row.Sessions, row.Streams = e.activeVUs(now), e.sessionsOpen.Load(), e.streamsOpen.Load()
	if e.opts.SettleMemory && !e.settled && now.Before(e.end) && !now.Add(e.opts.Interval).Before(e.end) {
		e.settle(row.Sessions) // the last interval before the end: every session still open
	}
	if cur, err := results.ReadProc(0); err == nil {
		row.Self = results.ProcDelta(e.selfPrev, cur)
		e.selfPrev = cur
	}
	e.sampleTarget(&row, now)
	if e.pl.Open && iv.Start.Before(e.end) {
		// The arrivals the schedule made due in the interval, per second:
		// with a ramp the target changes within an interval.
		from, to := iv.Start.Sub(e.start), iv.End.Sub(e.start)
		if secs := (to - from).Seconds(); secs > 0 {
			row.TargetRate = float64(Arrivals(e.sched, from, to)) / secs
		}
	}
	total := e.tl.Total()
	row.Reconnects, *reconnects = total-*reconnects, total
	e.rows = append(e.rows, row)
	rec := &results.IntervalRecord{Interval: iv, Row: row, Names: e.pl.Names, Phase: e.phaseOf(iv), Elapsed: now.Sub(e.start),
		TargetRate: row.TargetRate, VUs: row.VUs, Sessions: e.sessionsOpen.Load(), Streams: e.streamsOpen.Load(), Dropped: e.dropped.Load()}
	if now.Before(e.end) {
		rec.Remaining = e.end.Sub(now)
	}
	for _, s := range e.opts.Sinks {
		s.Interval(rec)
	}
}

// checkpoint hands the summary of the measured window so far to the sinks
// that take checkpoints.
func (e *engine) checkpoint(now time.Time) {
	var cps []results.Checkpointer
	for _, s := range e.opts.Sinks {
		if c, ok := s.(results.Checkpointer); ok {
			cps = append(cps, c)
		}
	}
	if len(cps) == 0 {
		return
	}
	e.mu.Lock()
	u0 := e.usage0
	e.mu.Unlock()
	sum := e.summary(context.Background(), e.warmEnd, now, u0, results.ReadUsage())
	sum.Interrupted, sum.StopReason = true, "checkpoint: the run goes on"
	for _, c := range cps {
		c.Checkpoint(sum)
	}
}

// activeVUs is the VUs gauge: the VUs running, or with closed-model
// stages the ones the ramp makes active.
func (e *engine) activeVUs(now time.Time) int64 {
	live := e.live.Load()
	if r, ok := e.sched.(Ramp); ok && !e.pl.Open {
		return min(live, int64(e.opts.Segment.Count(int(r.Rate(now.Sub(e.start))+0.5))))
	}
	return live
}

// settle reads the process's memory with sessions open after forced GCs:
// each GC halves the goroutine stacks that use under a quarter of theirs
// (a VU's grew during its ops), so a few cycles let them settle too; the
// last returns the freed memory to the OS (Options.SettleMemory).
func (e *engine) settle(sessions int64) {
	e.settled = true
	for range 3 {
		runtime.GC()
	}
	debug.FreeOSMemory()
	if cur, err := results.ReadProc(0); err == nil {
		e.mu.Lock()
		e.settledRSS, e.settledSessions = cur.RSS, sessions
		e.mu.Unlock()
	}
}
