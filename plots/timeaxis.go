package plots

import (
	"image/color"
	"math"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/results"
	"gonum.org/v1/plot/plotter"
)

// shared sets the time axis of panels stacked over one another: 0 to
// xmax s, tick labels on the lowest only; shades warm-up and stopping
// intervals and marks storm waves (legend entries on the first panel).
// Call it before adding series, so the shading lies under them.
func shared(res *results.Results, xmax float64, panels ...*Panel) {
	for i, p := range panels {
		p.Plot.X.Min, p.Plot.X.Max = 0, max(xmax, 1)
		if i < len(panels)-1 {
			p.Plot.X.Label.Text = ""
			p.Plot.X.Tick.Marker = unlabelled{linearTicks{}}
		}
	}
	bands, phases := phaseBands(res, xmax)
	var storms []float64
	if s := res.Summary; s != nil {
		for _, w := range s.Storms {
			storms = append(storms, w.AtS)
		}
	}
	for i, p := range panels {
		for _, b := range bands {
			addBand(p, b)
		}
		for _, at := range storms {
			p.Plot.Add(vline{X: at, LineStyle: lineStyle(colStorm, 1, true)})
		}
		if i > 0 {
			continue
		}
		seen := map[string]bool{}
		for j, b := range bands {
			if !seen[phases[j]] {
				seen[phases[j]] = true
				p.Legend.Add(phases[j], b)
			}
		}
		if len(storms) > 0 {
			p.Legend.Add("storm", vline{LineStyle: lineStyle(colStorm, 1, true)})
		}
	}
}

// phaseBands returns the spans of the warm-up and the graceful stop (s
// since the start) and their names: from the summary's warm-up and
// measured window when it has them, else from the phase of each interval
// row (which names the phase an interval ended in).
func phaseBands(res *results.Results, xmax float64) ([]band, []string) {
	var bands []band
	var names []string
	if s := res.Summary; s != nil && (s.WarmupS > 0 || s.DurationS > 0) {
		if s.WarmupS > 0 {
			bands = append(bands, band{X0: 0, X1: s.WarmupS, Color: colWarmup})
			names = append(names, "warm-up")
		}
		if stop := s.WarmupS + s.DurationS; s.DurationS > 0 && stop < xmax-1e-3 {
			bands = append(bands, band{X0: stop, X1: xmax, Color: colStopping})
			names = append(names, "stopping")
		}
		return bands, names
	}
	for _, iv := range res.Intervals {
		if iv.Phase == results.PhaseMeasure || iv.Phase == "" {
			continue
		}
		from := iv.T - iv.Interval
		if n := len(bands); n > 0 && names[n-1] == string(iv.Phase) && math.Abs(bands[n-1].X1-from) < 1e-6 {
			bands[n-1].X1 = iv.T
			continue
		}
		col := color.Color(colStopping)
		if iv.Phase == results.PhaseWarmup {
			col = colWarmup
		}
		bands = append(bands, band{X0: from, X1: iv.T, Color: col})
		names = append(names, string(iv.Phase))
	}
	return bands, names
}

// segments returns the points (middle of the interval, y) of the
// intervals for which y is defined, split where it is not. Left out:
// intervals that lie mostly in the warm-up (their ops were not recorded,
// so their counts would read as a ramp-up that did not happen) and a
// partial interval shorter than half the usual one (the tail of the
// graceful stop: a few ops over a few ms, whose rate and percentiles are
// noise).
func segments(res *results.Results, y func(*results.IntervalRec) (float64, bool)) []plotter.XYs {
	warmup := 0.0
	if res.Summary != nil {
		warmup = res.Summary.WarmupS
	}
	lengths := make([]float64, len(res.Intervals))
	for i, iv := range res.Intervals {
		lengths[i] = iv.Interval
	}
	usual := stats.Median(lengths)
	var segs []plotter.XYs
	var cur plotter.XYs
	for i := range res.Intervals {
		iv := &res.Intervals[i]
		mid := iv.T - iv.Interval/2
		if mid < warmup || iv.Interval < usual/2 {
			continue
		}
		v, ok := y(iv)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			if len(cur) > 0 {
				segs = append(segs, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: mid, Y: v})
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

// countSegments returns a count per interval (each at its middle) for
// the measured intervals: those that lie mostly in the warm-up are left
// out (their ops are not in the summary), a partial interval at the end
// is kept (a count, unlike a rate, is not inflated by a short interval),
// so the points add up to the summary's count.
func countSegments(res *results.Results, n func(*results.IntervalRec) int64) []plotter.XYs {
	warmup := 0.0
	if res.Summary != nil {
		warmup = res.Summary.WarmupS
	}
	var xy plotter.XYs
	for i := range res.Intervals {
		iv := &res.Intervals[i]
		if mid := iv.T - iv.Interval/2; mid >= warmup {
			xy = append(xy, plotter.XY{X: mid, Y: float64(n(iv))})
		}
	}
	if len(xy) == 0 {
		return nil
	}
	return []plotter.XYs{xy}
}

// usualInterval is the median interval length (s).
func usualInterval(res *results.Results) float64 {
	lengths := make([]float64, len(res.Intervals))
	for i, iv := range res.Intervals {
		lengths[i] = iv.Interval
	}
	return math.Round(stats.Median(lengths)*1000) / 1000
}

func perSecond(n int64, iv *results.IntervalRec) (float64, bool) {
	if iv.Interval <= 0 {
		return 0, false
	}
	return float64(n) / iv.Interval, true
}

func anyInterval(res *results.Results, f func(*results.IntervalRec) bool) bool {
	for i := range res.Intervals {
		if f(&res.Intervals[i]) {
			return true
		}
	}
	return false
}
