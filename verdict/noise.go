package verdict

import (
	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/results"
)

// NoiseAlpha is the level below which compare calls a difference beyond
// the noise: the p-value of a two-sided Mann–Whitney U test on the two
// runs' per-interval values.
const NoiseAlpha = 0.05

// intervalSeries reads, per measured interval with completed ops, the
// value of a compared metric for an op ("all": every op): rate (ops/s),
// error_rate (%), p50 … max (ms). ok is false for a metric that has no
// per-interval series (service time, faulty streams).
func intervalSeries(ivs []results.IntervalRec, op, metric string) (vals []float64, ok bool) {
	get := map[string]func(o results.IntervalOpRec, iv *results.IntervalRec) float64{
		"rate": func(o results.IntervalOpRec, iv *results.IntervalRec) float64 { return float64(o.Count) / iv.Interval },
		"error_rate": func(o results.IntervalOpRec, _ *results.IntervalRec) float64 {
			return 100 * float64(o.Errors) / float64(o.Count)
		},
		"p50": func(o results.IntervalOpRec, _ *results.IntervalRec) float64 { return o.P50 },
		"p90": func(o results.IntervalOpRec, _ *results.IntervalRec) float64 { return o.P90 },
		"p99": func(o results.IntervalOpRec, _ *results.IntervalRec) float64 { return o.P99 },
		"max": func(o results.IntervalOpRec, _ *results.IntervalRec) float64 { return o.Max },
	}[metric]
	if get == nil {
		return nil, false
	}
	lengths := make([]float64, 0, len(ivs))
	for _, iv := range ivs {
		lengths = append(lengths, iv.Interval)
	}
	usual := stats.Median(lengths)
	for i := range ivs {
		iv := &ivs[i]
		if iv.Phase != results.PhaseMeasure || iv.Interval < usual/2 {
			continue // warm-up, the graceful stop, a partial last interval
		}
		o := iv.All
		if op != "all" {
			o = iv.Ops[op]
		}
		if o.Count == 0 {
			continue
		}
		vals = append(vals, get(o, iv))
	}
	return vals, true
}

// AddNoise tests each compared metric that has a per-interval series in
// both runs (rate, error rate, p50 … max) for a difference beyond the
// noise: a Mann–Whitney U test of A's intervals against B's, setting the
// delta's P and Beyond (p < NoiseAlpha). Metrics without a series, or
// with fewer than 3 intervals on a side, are left untested (P nil).
func AddNoise(cmp []OpCompare, a, b []results.IntervalRec) {
	for i := range cmp {
		for j := range cmp[i].Deltas {
			d := &cmp[i].Deltas[j]
			if !d.InA || !d.InB {
				continue
			}
			xa, ok := intervalSeries(a, cmp[i].Name, d.Metric)
			if !ok || len(xa) < 3 {
				continue
			}
			xb, _ := intervalSeries(b, cmp[i].Name, d.Metric)
			if len(xb) < 3 {
				continue
			}
			if p, ok := stats.MannWhitney(xa, xb); ok {
				d.P, d.Beyond = &p, p < NoiseAlpha
			}
		}
	}
}
