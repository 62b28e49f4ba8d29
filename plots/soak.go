package plots

import (
	"fmt"
	"math"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/results"
	"gonum.org/v1/plot/plotter"
)

// SoakTrends draws a soak's series over time (s since the start; each
// point at its interval's middle, the warm-up shaded) with the
// Theil–Sen lines its verdicts judged (soak.json): the interval p99
// (latency drift), the target's RSS and open files (target leak, when
// sampled) and the faulty streams per interval (correctness drift).
// subtitle names the run.
func SoakTrends(sk *results.Soak, subtitle string) (*Chart, error) {
	var pts []results.SoakPoint
	warmEnd := 0.0 // the end of the warm-up: of the last point before the first measured one
	for _, p := range sk.Points {
		if p.Measure {
			pts = append(pts, p)
		} else if len(pts) == 0 {
			warmEnd = p.T
		}
	}
	if len(pts) < 2 {
		return nil, noData("soak.json holds fewer than two measured points")
	}
	// Points hold their interval's end (the previous point's end is its
	// start); drawn at its middle, as every chart over time places them,
	// and the trend lines move with them.
	mids := map[float64]float64{}
	var steps []float64
	for i, p := range sk.Points {
		start := 0.0
		if i > 0 {
			start = sk.Points[i-1].T
		}
		mids[p.T] = (start + p.T) / 2
		steps = append(steps, p.T-start)
	}
	half := stats.Median(steps) / 2
	mid := func(t float64) float64 {
		if m, ok := mids[t]; ok {
			return m
		}
		return t - half
	}
	trend := map[string]results.SoakTrend{}
	verdict := map[string]results.SoakVerdict{}
	for _, v := range sk.Verdicts {
		verdict[v.Name] = v
		for _, t := range v.Trends {
			trend[t.Series] = t
		}
	}
	hasTgt := false
	for _, p := range pts {
		hasTgt = hasTgt || p.HasTgt
	}
	type series struct {
		title, unit, name, per string
		get                    func(results.SoakPoint) (float64, bool)
	}
	all := []series{{verdictTitle("Interval p99", verdict["latency drift"]), "p99 (ms)", results.SoakSeriesP99, "ms/h",
		func(p results.SoakPoint) (float64, bool) { return p.P99, p.Count > 0 }}}
	if hasTgt {
		all = append(all,
			series{verdictTitle("Target RSS", verdict["target leak"]), "RSS (MB)", results.SoakSeriesRSS, "MB/h", func(p results.SoakPoint) (float64, bool) { return p.TgtMB, p.HasTgt }},
			series{"Target open files", "file descriptors", results.SoakSeriesFDs, "/h", func(p results.SoakPoint) (float64, bool) { return float64(p.TgtFDs), p.HasTgt }})
		if _, ok := trend[results.SoakSeriesRSSPerSession]; ok {
			// The leak verdict judged memory per session held (the sessions
			// open varied): draw what it judged.
			all = append(all, series{verdictTitle("Target RSS per session open", verdict["target leak"]), "RSS per session (MB)", results.SoakSeriesRSSPerSession, "MB/h",
				func(p results.SoakPoint) (float64, bool) {
					return p.TgtMB / float64(p.Sessions), p.HasTgt && p.Sessions > 0
				}})
		}
	}
	all = append(all, series{verdictTitle("Faulty streams per interval", verdict["correctness drift"]), "streams", "faulty", "",
		func(p results.SoakPoint) (float64, bool) { return float64(p.Faulty), true }})
	xmax := pts[len(pts)-1].T
	var panels []*Panel
	for i, s := range all {
		p := newPanel(s.title, "", s.unit)
		if i == len(all)-1 {
			p.Plot.X.Label.Text = "time since start (s)"
		} else {
			p.Plot.X.Tick.Marker = unlabelled{linearTicks{}}
		}
		if warmEnd > 0 {
			b := band{X0: 0, X1: warmEnd, Color: colWarmup}
			addBand(p, b)
			if i == 0 {
				p.Legend.Add("warm-up", b)
			}
		}
		xy := plotter.XYs{}
		for _, pt := range pts {
			if v, ok := s.get(pt); ok {
				xy = append(xy, plotter.XY{X: mid(pt.T), Y: v})
			}
		}
		if len(xy) > 0 {
			if err := addSeries(p, "measured", []plotter.XYs{xy}, lineStyle(colorN(0), 1, false)); err != nil {
				return nil, err
			}
		}
		if t, ok := trend[s.name]; ok {
			line := plotter.XYs{{X: mid(t.FromS), Y: t.Intercept + t.SlopePerS*t.FromS}, {X: mid(t.ToS), Y: t.Intercept + t.SlopePerS*t.ToS}}
			if err := addSeries(p, fmt.Sprintf("trend %s %s", signed(t.SlopePerS*3600), s.per), []plotter.XYs{line}, lineStyle(colorN(3), 2, true)); err != nil {
				return nil, err
			}
		}
		p.Plot.X.Min, p.Plot.X.Max = 0, xmax
		fromZero(p.Plot)
		panels = append(panels, p)
	}
	return &Chart{Name: "soak-trends", Title: "Soak: drift and leaks over time", Subtitle: subtitle, Panels: panels,
		Caption: "The dashed red lines are the robust (Theil–Sen) trends the verdicts judged: a p99 line that climbs is latency drift, an RSS or open-files line that climbs over the last two thirds is a leak; any faulty stream fails the correctness verdict."}, nil
}

// verdictTitle names a panel with its verdict: "Interval p99 — latency
// drift: PASS".
func verdictTitle(title string, v results.SoakVerdict) string {
	switch {
	case v.Name == "":
		return title
	case !v.Checked:
		return title + " — " + v.Name + ": not checked"
	case v.Pass:
		return title + " — " + v.Name + ": PASS"
	}
	return title + " — " + v.Name + ": FAIL"
}

// signed formats a slope with its sign, without an exponent.
func signed(v float64) string {
	if math.Abs(v) >= 100 {
		return fmt.Sprintf("%+.0f", v)
	}
	return fmt.Sprintf("%+.3g", v)
}

// WriteSoakCharts draws a soak's trend chart into dir (res names the
// run in its subtitle).
func WriteSoakCharts(dir string, res *results.Results, sk *results.Soak, opts Options) ([]Output, error) {
	it := Item{Name: "soak-trends"}
	c, err := SoakTrends(sk, subtitle(res))
	switch {
	case isNoData(err):
		it.Skipped = noDataReason(err)
	case err != nil:
		return nil, err
	default:
		it.Chart = c
	}
	return writeItems(dir, []Item{it}, opts.Formats)
}
