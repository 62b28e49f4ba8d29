package report

import (
	"fmt"

	"github.com/mcpbench/mcpbench/results"
)

// tailWaits says, under the throughput, how long VUs waited on the tails
// of response streams that did not end after their response (judged
// unterminated after 2 s): not latency, but time in which those VUs
// started nothing, so the throughput is lower than the server's answers
// would allow. Nothing when no stream was unterminated.
func (p *printer) tailWaits(s *results.Summary) {
	a := &s.All
	if a.TailWaits == 0 {
		return
	}
	share := ""
	if vt := float64(s.VUs) * s.DurationS; vt > 0 {
		share = fmt.Sprintf(", %.0f%% of the VU time (%d VUs × %.1f s)", 100*min(a.TailWaitS/vt, 1), s.VUs, s.DurationS)
	}
	p.F("  VUs waited %.1f s on the tails of %d unterminated response streams (%.2f s each: the stream stayed open after its response until judged unterminated)%s: not latency, but no op started meanwhile, so this lowered the throughput\n",
		a.TailWaitS, a.TailWaits, a.TailWaitS/float64(a.TailWaits), share)
}
