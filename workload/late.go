package workload

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
)

// Why ops started late. Start lag (send − intended start) is part of
// response time; when it changed what was measured (verdict's W-START-LAG)
// the summary says why, from the late starts (metrics.IsLateStart: over
// 1 ms and over 10 % of the op's response time late), each counted by the
// largest part of its lag:
//
//   - queued: the slot was already overdue when a VU claimed it — every
//     session was busy waiting on the target;
//   - woke: the worker slept past the slot — the Go scheduler, GC pauses
//     or too little CPU, i.e. the generator;
//   - other: between waking and sending — replacing a churned session
//     (DELETE and initialize) before the op.

// lateCauses counts the late ops by cause. Safe for concurrent use.
type lateCauses struct{ queued, woke, other atomic.Int64 }

// runNoting runs j, which was claimed wait before it was due (≤ 0: that
// late already), and counts it when it started late. Iterations of
// scenarios are not counted: their later steps start after the earlier.
func (v *vuState) runNoting(j *job, wait time.Duration) bool {
	woke := time.Now()
	ok := v.run(j)
	if j.scen == 0 {
		v.e.late.note(&v.res, max(-wait, 0), woke, v.e.counted(v.res.Intended))
	}
	return ok
}

// note counts res when it is a measured op that started late: queued is
// how late its slot was when claimed, woke when its worker went on after
// the wait.
func (c *lateCauses) note(res *driver.Result, queued time.Duration, woke time.Time, counted bool) {
	if !counted || !metrics.IsLateStart(res) {
		return
	}
	lag := res.Start.Sub(res.Intended)
	slept := max(woke.Sub(res.Intended)-queued, 0)
	rest := lag - queued - slept
	switch {
	case queued >= slept && queued >= rest:
		c.queued.Add(1)
	case slept >= rest:
		c.woke.Add(1)
	default:
		c.other.Add(1)
	}
}

// why says what made the late ops late: the cause of most of them.
// procs and cores are the generator's GOMAXPROCS and cores used.
func (c *lateCauses) why(procs int, cores float64) string {
	q, w, o := c.queued.Load(), c.woke.Load(), c.other.Load()
	n := q + w + o
	switch {
	case n == 0:
		return "mcpbench does not know why (no late start counted)"
	case q >= w && q >= o:
		return fmt.Sprintf("every VU was busy waiting on the target when they were due (%d of %d late ops)", q, n)
	case w >= o:
		return fmt.Sprintf("mcpbench itself woke late for them (%d of %d late ops): GC pauses or too little CPU (%.2f cores used, GOMAXPROCS %d; other processes on the machine), not the target", w, n, cores, procs)
	}
	return fmt.Sprintf("replacing churned sessions (DELETE and initialize) delayed them (%d of %d late ops)", o, n)
}
