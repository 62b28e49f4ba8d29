package workload

import (
	"context"
	"time"

	"github.com/mcpbench/mcpbench/metrics"
)

// The collector: once per interval it merges the recorder's shards, samples
// this process and the target's, and hands the interval to the sinks
// (OnInterval); it writes checkpoints for long runs.

// Interval phases, as intervals.csv and progress show them.
const (
	PhaseWarmup   = "warm-up"  // the interval ended before the measured window opened: it holds no measured op
	PhaseMeasure  = "measure"  // the interval holds measured ops (it ended in the window, or began in it)
	PhaseStopping = "stopping" // the graceful stop after the window
)

// phaseOf labels an interval. Only ops intended in the measured window are
// recorded, so an interval that ends after the window opened holds
// measured ops and is labelled measure even when it began in the warm-up
// (report rebuilds the window from the rows' times, clamped to it).
func (e *engine) phaseOf(iv metrics.Interval) string {
	switch {
	case !iv.End.After(e.warmEnd):
		return PhaseWarmup
	case iv.Start.Before(e.end):
		return PhaseMeasure
	}
	return PhaseStopping
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
			row.TargetRate = e.sched.Rate(iv.Start.Sub(e.start)) // the rate asked for when the interval began
		}
		total := e.tl.Total()
		row.Reconnects, reconnects = total-reconnects, total
		e.rows = append(e.rows, row)
		if e.opts.OnInterval == nil {
			return
		}
		pr := Progress{Interval: iv, Row: row, Names: e.pl.Names, Elapsed: now.Sub(e.start), VUs: e.live.Load(),
			Sessions: e.sessionsOpen.Load(), Streams: e.streamsOpen.Load(), Dropped: e.dropped.Load()}
		pr.Phase = e.phaseOf(iv)
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
