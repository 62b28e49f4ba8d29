package metrics

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// Tick closes the interval that ends at end and makes next the end of
// the following one (zero: this is the last Tick). It merges every shard
// into the interval aggregate (returned) and into the run total.
//
// The row's counts (ops, errors by class, dropped) go by intended start:
// an op intended before end counts in this interval even when it
// completed after end, so that achieved compares with the arrivals the
// schedule made due in the interval (the target rate); call Tick a little
// after end to let those ops complete. One intended before end that
// completes (or is dropped) after the Tick counts in the interval open
// when it comes in — the live row — and the returned Interval's Moves
// give it back to the interval of its intended start, with its response
// time (ResultsDir rewrites intervals.csv with them at the end, counts
// and percentiles). The response histogram goes by intended start as far
// as the Tick can know (an op intended after end that completed before
// the Tick is in the next interval's), by completion for the ops the
// Moves give back; every other histogram and counter goes by completion.
func (r *Recorder) Tick(end, next time.Time) results.Interval {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.interval {
		o.Reset()
	}
	var late []lateOp
	for _, s := range r.shards {
		s.mu.Lock()
		late = append(late, s.late...)
		s.late = s.late[:0]
		s.open = end
		for i, o := range s.ops {
			if o != nil && (o.Count > 0 || o.Dropped > 0 || o.Interrupted > 0 || o.MCP.Cancelled > 0 || o.Response.TotalCount() > 0) {
				r.interval[i].Add(o)
				o.Reset()
			}
		}
		for i := range s.early {
			c, eh := &s.early[i], s.earlyResp[i]
			if *c == (opCounts{}) && eh.TotalCount() == 0 {
				continue
			}
			if next.IsZero() { // nothing follows: they count here
				c.addTo(r.interval[i])
				r.interval[i].Response.Merge(eh)
			} else {
				if s.ops[i] == nil {
					s.ops[i] = results.NewOpStats()
				}
				c.addTo(s.ops[i])
				s.ops[i].Response.Merge(eh)
			}
			*c = opCounts{}
			if eh != nil {
				eh.Reset()
			}
		}
		s.boundary = next
		if s.lag.TotalCount() > 0 {
			r.lag.Merge(s.lag)
			s.lag.Reset()
		}
		s.mu.Unlock()
	}
	r.all.Reset()
	for i, o := range r.interval {
		r.total[i].Add(o)
		r.all.Add(o)
	}
	iv := results.Interval{Start: r.lastTick, End: end, Ops: r.interval, All: r.all, Moves: r.moves(late, end)}
	r.endsNS = append(r.endsNS, end.UnixNano())
	r.lastTick = end
	return iv
}

// StartLag returns the run's start lag so far (µs): how late ops were sent
// after their intended start, the generator's own delay (scheduling, no
// free VU). Read it only between Ticks.
func (r *Recorder) StartLag() *hdr.Histogram {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lag
}

// Total returns the run's totals so far (up to the last Tick). The stats
// are owned by the recorder; read them only between Ticks.
func (r *Recorder) Total() []*results.OpStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Quantile implements QuantileSource from the run's totals so far (up to
// the last Tick): op is an op name or "all"; kind response, service, ttfb
// or resume; q in (0, 100].
func (r *Recorder) Quantile(op, kind string, q float64) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := results.NewHist()
	for i, o := range r.total {
		if op != "all" && r.names[i] != op {
			continue
		}
		if x := opHist(o, kind); x != nil {
			h.Merge(x)
		}
	}
	if h.TotalCount() == 0 {
		return 0, false
	}
	return textfmt.Round3(float64(h.ValueAtQuantile(q)) / 1000), true
}

// hist returns o's histogram of a kind (nil when none).
func opHist(o *results.OpStats, kind string) *results.Hist {
	switch kind {
	case "response":
		return o.Response
	case "service":
		return o.Service
	case "ttfb":
		return o.TTFB
	case "resume":
		return o.Resume
	}
	return nil
}
