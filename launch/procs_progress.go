package launch

import (
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// The merged live progress: the children run without progress output;
// the parent follows their results directories (intervals.csv and
// histograms.hlog, written as each interval closes) and shows their k-th
// intervals added up as one progress line: rates, counts, gauges summed,
// the p99 of the merged response-time histograms. A child's interval is
// shown once it is sealed: a later one has begun (its histograms are then
// all written) or the child has exited.

// pollEvery is how often the children's files are read.
const pollEvery = 250 * time.Millisecond

// mergedProgress adds up the children's intervals for the progress display.
type mergedProgress struct {
	kids    []*child
	pr      Progress
	start   time.Time // the children's --start-at
	end     time.Time // the end of the measured window
	next    int       // the next interval to show
	dropped int64
}

// watch shows the children's merged progress until all have exited (a
// nil l.Progress: it only waits).
func watch(l Processes, kids []*child) {
	all := make(chan struct{})
	go func() {
		for _, k := range kids {
			<-k.done
		}
		close(all)
	}()
	if l.Progress == nil {
		<-all
		return
	}
	m := &mergedProgress{kids: kids, pr: l.Progress, start: l.StartAt, end: l.StartAt.Add(l.Window)}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			m.poll(false)
		case <-all:
			m.poll(true)
			l.Progress.End(&results.RunEnd{})
			return
		}
	}
}

// poll reads the children's new intervals and shows those every child has
// sealed (final: the children have exited, every interval is sealed).
func (m *mergedProgress) poll(final bool) {
	sealed := make([]int, len(m.kids))
	for i, k := range m.kids {
		k.tail.Poll() // a file being replaced or cut is read again next time
		n := len(k.tail.Rows())
		if !final && !k.exited() {
			n = max(n-1, 0)
		}
		sealed[i] = n
	}
	for {
		ready, any := true, false
		for i, k := range m.kids {
			rows := len(k.tail.Rows())
			switch {
			case m.next < sealed[i]:
				any = true
			case (final || k.exited()) && rows <= m.next:
				// this child has no such interval
			default:
				ready = false
			}
		}
		if !ready || !any {
			return
		}
		m.show(m.next)
		m.next++
	}
}

// show hands the children's interval k, added up, to the progress display.
func (m *mergedProgress) show(k int) {
	rec := &results.IntervalRecord{}
	h := results.NewHistogram()
	var end time.Time
	rank := 0
	for _, kid := range m.kids {
		rows := kid.tail.Rows()
		if k >= len(rows) {
			continue
		}
		r := rows[k]
		rec.Row.Rate += r.Rate
		rec.Row.All.Count += r.Count
		rec.Row.All.Errors += r.Errors
		rec.Row.Reconnects += r.Reconnects
		rec.TargetRate += r.TargetRate
		rec.VUs += r.VUs
		rec.Sessions += r.Sessions
		rec.Streams += r.Streams
		m.dropped += r.Dropped
		if pr := phaseOrder(r.Phase); pr > rank {
			rank, rec.Phase = pr, r.Phase
		}
		if r.End.After(end) {
			end = r.End
		}
		if x := kid.tail.TakeResponse(r.End); x != nil {
			h.Merge(x)
		}
	}
	rec.Row.All.P99 = results.LatencyOf(h).P99
	rec.Dropped = m.dropped
	rec.Elapsed = end.Sub(m.start)
	if end.Before(m.end) {
		rec.Remaining = m.end.Sub(end)
	}
	m.pr.Interval(rec)
}

// phaseOrder ranks phases for a merged interval: measure wins.
func phaseOrder(p results.Phase) int {
	switch p {
	case results.PhaseWarmup:
		return 1
	case results.PhaseStopping:
		return 2
	case results.PhaseMeasure:
		return 3
	}
	return 0
}
