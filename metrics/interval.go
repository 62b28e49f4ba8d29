package metrics

import (
	"slices"
	"time"

	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
)

// moves turns the late results of the interval ending at end into
// CountMoves, one per earlier interval and op (r.mu held; nil when none).
func (r *Recorder) moves(late []lateOp, end time.Time) []results.CountMove {
	if len(late) == 0 || len(r.endsNS) == 0 {
		return nil
	}
	type key struct{ from, op int }
	at := map[key]int{}
	var out []results.CountMove
	for _, l := range late {
		t := l.intended.UnixNano()
		if t < r.startNS {
			continue // intended before the first interval: no row of its own
		}
		// The first closed interval whose end is after t holds it.
		j, _ := slices.BinarySearch(r.endsNS, t+1)
		if j >= len(r.endsNS) {
			continue // (not before a closed interval's end: it counted where it belongs)
		}
		k := key{j, l.op}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, results.CountMove{From: time.Unix(0, r.endsNS[j]), To: end, Op: l.op})
		}
		m := &out[i]
		if l.dropped {
			m.Dropped++
			continue
		}
		m.Count++
		if l.resp > 0 {
			if m.Resp == nil {
				m.Resp = results.NewHist()
			}
			m.Resp.RecordValue(l.resp)
		}
		if l.class != outcome.ClassOK {
			m.Errors++
		}
		m.Classes[l.class]++
	}
	return out
}
