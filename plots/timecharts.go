package plots

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
)

// LatencyOverTime draws the response time of each interval (ms) —
// p50, p90, p99 and max as intervals.csv holds them — over the time
// since the start (s; each interval at its middle), of op, or of all ops
// when op is "". Below it, on
// the same time axis, the achieved rate (completed ops/s), the target
// arrival rate (open model) and dropped ops/s when there were any.
// Warm-up and stopping intervals are shaded, storm waves marked. The
// latency axis turns logarithmic when the max is more than 30 times the
// typical p50. Intervals without completed ops leave gaps.
func LatencyOverTime(res *results.Results, op string) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", results.FileIntervals)
	}
	pick := func(iv *results.IntervalRec) results.IntervalOpRec { return iv.All }
	name := "latency"
	title := "Response time and throughput over time"
	if op != "" {
		if !slices.Contains(res.Ops, op) {
			return nil, fmt.Errorf("plots: no op %q in %s", op, res.Dir)
		}
		pick = func(iv *results.IntervalRec) results.IntervalOpRec { return iv.Ops[op] }
		name = "latency-" + fileSafe(op)
		title = "Response time and throughput over time: " + op
	}
	var completed int64
	for i := range res.Intervals {
		completed += pick(&res.Intervals[i]).Count
	}
	if completed == 0 {
		return nil, noData("no operation completed")
	}
	sum := summaryOf(res)
	panelTitle := "Response time per interval"
	if sum.Model == "open" {
		panelTitle += " (from each op's intended start)"
	}
	lat := newPanel(panelTitle, "", "response time (ms)")
	rate := newPanel("Throughput per interval", "time since start (s)", "ops/s")
	xmax := res.Intervals[len(res.Intervals)-1].T
	shared(res, xmax, lat, rate)

	if err := addPercentiles(lat, res, pick); err != nil {
		return nil, err
	}
	if err := addRates(rate, res, op, pick); err != nil {
		return nil, err
	}
	fromZero(rate.Plot)
	return &Chart{Name: name, Title: title, Subtitle: subtitle(res), Panels: []*Panel{lat, rate},
		Caption: "Watch p99 and max against p50: a tail that climbs while p50 stays flat is queueing or pauses; a step in every line at once is the server slowing down. Below, achieved should sit on the target; gaps are intervals where nothing completed."}, nil
}

// addPercentiles draws the interval p50, p90, p99 and max response times
// (ms) of the op that pick selects, on a log axis when the max is more
// than 30 times the typical p50.
func addPercentiles(lat *Panel, res *results.Results, pick func(*results.IntervalRec) results.IntervalOpRec) error {
	type pct struct {
		name  string
		get   func(results.IntervalOpRec) float64
		color color.Color
		width float64
	}
	pcts := []pct{
		{"p50", func(o results.IntervalOpRec) float64 { return o.P50 }, colP50, 1.5},
		{"p90", func(o results.IntervalOpRec) float64 { return o.P90 }, colP90, 1.5},
		{"p99", func(o results.IntervalOpRec) float64 { return o.P99 }, colP99, 1.5},
		{"max", func(o results.IntervalOpRec) float64 { return o.Max }, colMax, 1},
	}
	var p50s []float64
	var ss []series
	for _, pc := range pcts {
		segs := segments(res, func(iv *results.IntervalRec) (float64, bool) {
			o := pick(iv)
			v := pc.get(o)
			if v > 0 && pc.name == "p50" {
				p50s = append(p50s, v)
			}
			// An interval where none of its ops (by intended start, as its
			// count) completed has none (an empty cell): a gap.
			return v, v > 0 && o.Count > 0
		})
		ss = append(ss, series{pc.name, segs, lineStyle(pc.color, pc.width, false)})
	}
	return addAll(lat, ss, stats.Median(p50s))
}

// addRates draws the achieved rate (completed ops/s) of the op that pick
// selects and, for all ops (op ""), the target arrival rate and dropped
// ops/s when there were any.
func addRates(rate *Panel, res *results.Results, op string, pick func(*results.IntervalRec) results.IntervalOpRec) error {
	achieved := segments(res, func(iv *results.IntervalRec) (float64, bool) {
		if op == "" {
			return iv.Rate, true
		}
		return perSecond(pick(iv).Count, iv)
	})
	if err := addSeries(rate, "achieved", achieved, lineStyle(colP50, 1.5, false)); err != nil {
		return err
	}
	if op == "" && anyInterval(res, func(iv *results.IntervalRec) bool { return iv.TargetRate > 0 }) {
		target := segments(res, func(iv *results.IntervalRec) (float64, bool) { return iv.TargetRate, iv.TargetRate > 0 })
		if err := addSeries(rate, "target", target, lineStyle(color.Black, 1, true)); err != nil {
			return err
		}
	}
	if op == "" && anyInterval(res, func(iv *results.IntervalRec) bool { return iv.Dropped > 0 }) {
		dropped := segments(res, func(iv *results.IntervalRec) (float64, bool) { return perSecond(iv.Dropped, iv) })
		if err := addSeries(rate, "dropped", dropped, lineStyle(colMax, 1, false)); err != nil {
			return err
		}
	}
	return nil
}

// ThroughputErrors draws completed ops/s over time (s since the start),
// with the target arrival rate in the open model; below it the errors of
// each interval by error class, when there were any, and apart from them
// the arrivals dropped in each interval (open model), when there were
// any. Errors and drops are counts per interval (countSegments), so each
// panel's points add up to the summary's errors and dropped.
func ThroughputErrors(res *results.Results) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", results.FileIntervals)
	}
	var completed, errs, dropped int64
	classes := map[string]int64{}
	for _, iv := range res.Intervals {
		completed += iv.All.Count
		errs += iv.All.Errors
		dropped += iv.Dropped
		for c, n := range iv.ErrorsByClass {
			classes[c] += n
		}
	}
	if completed == 0 && dropped == 0 {
		return nil, noData("no operation completed")
	}
	xmax := res.Intervals[len(res.Intervals)-1].T
	tp := newPanel("Completed operations per interval", "time since start (s)", "ops/s")
	panels := []*Panel{tp}
	var ep, dp *Panel
	unit := fmt.Sprintf("per interval (%s s)", strconv.FormatFloat(usualInterval(res), 'f', -1, 64))
	if errs > 0 {
		ep = newPanel("Errors per interval", "time since start (s)", "errors "+unit)
		panels = append(panels, ep)
	} else {
		tp.Plot.Title.Text += " (no errors)"
	}
	if dropped > 0 {
		dp = newPanel("Dropped arrivals per interval (no free VU within the max delay)", "time since start (s)", "dropped "+unit)
		panels = append(panels, dp)
	}
	shared(res, xmax, panels...)
	if err := addSeries(tp, "completed", segments(res, func(iv *results.IntervalRec) (float64, bool) { return iv.Rate, true }),
		lineStyle(colP50, 1.5, false)); err != nil {
		return nil, err
	}
	if anyInterval(res, func(iv *results.IntervalRec) bool { return iv.TargetRate > 0 }) {
		if err := addSeries(tp, "target", segments(res, func(iv *results.IntervalRec) (float64, bool) { return iv.TargetRate, iv.TargetRate > 0 }),
			lineStyle(color.Black, 1, true)); err != nil {
			return nil, err
		}
	}
	fromZero(tp.Plot)
	if ep != nil {
		// Classes in the driver's order, so colours are stable.
		i := 0
		for c := outcome.ClassOK + 1; c < outcome.NumClasses; c++ {
			if classes[c.String()] == 0 {
				continue
			}
			name := c.String()
			segs := countSegments(res, func(iv *results.IntervalRec) int64 { return iv.ErrorsByClass[name] })
			if err := addSeries(ep, name, segs, lineStyle(colorN(3+i), 1.5, false)); err != nil {
				return nil, err
			}
			i++
		}
		if i == 0 { // no class columns: the total
			segs := countSegments(res, func(iv *results.IntervalRec) int64 { return iv.All.Errors })
			if err := addSeries(ep, "errors", segs, lineStyle(colMax, 1.5, false)); err != nil {
				return nil, err
			}
		}
		fromZero(ep.Plot)
	}
	if dp != nil {
		segs := countSegments(res, func(iv *results.IntervalRec) int64 { return iv.Dropped })
		if err := addSeries(dp, "dropped", segs, lineStyle(color.Gray{Y: 90}, 1.5, false)); err != nil {
			return nil, err
		}
		fromZero(dp.Plot)
	}
	panels[len(panels)-1].Plot.X.Label.Text = "time since start (s)"
	return &Chart{Name: "throughput", Title: "Throughput, errors and drops over time", Subtitle: subtitle(res), Panels: panels,
		Caption: "Completed ops should hold the target (open model) or stay level (closed); errors by class show which failure appears when; drops, apart, are arrivals that found no free VU: load the target never saw."}, nil
}

// ResumesReconnects draws resume attempts (response streams) and
// reconnect attempts (response and GET streams) per second over time (s
// since the start), with storm waves marked.
func ResumesReconnects(res *results.Results) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", results.FileIntervals)
	}
	var resumes, reconnects int64
	perOp := map[string]int64{}
	for _, iv := range res.Intervals {
		resumes += iv.All.Resumes
		reconnects += iv.Reconnects
		for name, o := range iv.Ops {
			perOp[name] += o.Resumes
		}
	}
	if resumes == 0 && reconnects == 0 {
		return nil, noData("no stream was resumed or reconnected")
	}
	p := newPanel("Resumes and reconnects per interval", "time since start (s)", "attempts per second")
	shared(res, res.Intervals[len(res.Intervals)-1].T, p)
	if err := addSeries(p, "reconnects", segments(res, func(iv *results.IntervalRec) (float64, bool) { return perSecond(iv.Reconnects, iv) }),
		lineStyle(colP99, 2.5, false)); err != nil {
		return nil, err
	}
	if err := addSeries(p, "resumes", segments(res, func(iv *results.IntervalRec) (float64, bool) { return perSecond(iv.All.Resumes, iv) }),
		lineStyle(colP50, 1.5, false)); err != nil {
		return nil, err
	}
	var withResumes []string
	for _, name := range res.Ops {
		if perOp[name] > 0 {
			withResumes = append(withResumes, name)
		}
	}
	if len(withResumes) > 1 {
		for i, name := range withResumes {
			segs := segments(res, func(iv *results.IntervalRec) (float64, bool) { return perSecond(iv.Ops[name].Resumes, iv) })
			if err := addSeries(p, legendName(name), segs, lineStyle(colorN(2+i), 1, true)); err != nil {
				return nil, err
			}
		}
	}
	fromZero(p.Plot)
	return &Chart{Name: "resumes", Title: "Resumes and reconnects over time", Subtitle: subtitle(res), Panels: []*Panel{p},
		Caption: "Spikes are reconnect waves (storms are marked): how high they rise and how fast they fall back is how the server copes with everyone reconnecting at once."}, nil
}
