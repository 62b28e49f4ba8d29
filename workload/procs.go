package workload

import (
	"math"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// The GOMAXPROCS policy. With more Ps than the work needs, each VU
// wake-up also wakes an idle P that spins and sleeps again (futex,
// nanosleep): measured at 2000 ops/s on 2 cores, 153–158 µs of CPU per op
// with 2 Ps against 134–138 µs with 1, with the same latency and start
// lag. So an open-model run against a separate server gets as few Ps as
// its rate needs; the embedded server shares the process, so it keeps
// every core; so does the closed model, whose rate is unknown. The policy
// only computes: the command sets runtime.GOMAXPROCS (and --procs
// overrides it).

// perPCapacity is the open-model rate (ops/s) one P carries at about
// half load: mcpbench spends ~150 µs of CPU per tools/call over SSE.
const perPCapacity = 3300.0

// AutoProcs returns the Ps (GOMAXPROCS) an open-model run of p needs on
// numCPU cores, and the rate (ops/s) it sized them for: a sweep's top
// rate step, p.Rate otherwise. 0, 0: keep every core (the embedded
// server, the closed model, a VU sweep). Safe for concurrent use.
func AutoProcs(p *profile.Profile, embedded bool, numCPU int) (procs int, rate float64) {
	rate = p.Rate
	if s := p.Sweep; s != nil {
		switch s.By {
		case results.SweepByRate, "":
			rate = max(s.From, s.To)
		case results.SweepByVUs:
			rate = 0
		}
	}
	if embedded || rate <= 0 {
		return 0, 0
	}
	return min(max(1, int(math.Ceil(rate/perPCapacity))), numCPU), rate
}

// SegmentProcs returns the Ps segment seg's share of p's open-model rate
// needs (AutoProcs sized them for the whole rate); 0: keep what the
// process has (the whole test, a sweep, the embedded server, the closed
// model).
func SegmentProcs(p *profile.Profile, seg *Segment, embedded bool, numCPU int) int {
	if seg.Whole() || p.Sweep != nil {
		return 0
	}
	share := *p
	share.Rate *= seg.Share()
	n, _ := AutoProcs(&share, embedded, numCPU)
	return n
}
