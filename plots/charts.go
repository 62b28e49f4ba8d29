package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/metrics"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// ErrNoData is wrapped by the error of a chart function when the run has
// nothing for that chart to show (no intervals, no resumes…); the
// message says what is missing.
var ErrNoData = errors.New("no data")

func noData(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNoData}, args...)...)
}

// Percentile colours, the same in every chart.
var (
	colP50 = colorN(0)
	colP90 = colorN(2)
	colP99 = colorN(1)
	colMax = colorN(3)
	// Shades of the warm-up and stopping phases.
	colWarmup   = color.RGBA{0xe6, 0xeb, 0xf2, 0xff}
	colStopping = color.RGBA{0xf5, 0xed, 0xe1, 0xff}
	colStorm    = color.RGBA{0x80, 0x40, 0x80, 0xff}
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
func LatencyOverTime(res *metrics.Results, op string) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", metrics.FileIntervals)
	}
	pick := func(iv *metrics.IntervalRec) metrics.IntervalOpRec { return iv.All }
	name := "latency"
	title := "Response time and throughput over time"
	if op != "" {
		if !slices.Contains(res.Ops, op) {
			return nil, fmt.Errorf("plots: no op %q in %s", op, res.Dir)
		}
		pick = func(iv *metrics.IntervalRec) metrics.IntervalOpRec { return iv.Ops[op] }
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

	type pct struct {
		name  string
		get   func(metrics.IntervalOpRec) float64
		color color.Color
		width float64
	}
	pcts := []pct{
		{"p50", func(o metrics.IntervalOpRec) float64 { return o.P50 }, colP50, 1.5},
		{"p90", func(o metrics.IntervalOpRec) float64 { return o.P90 }, colP90, 1.5},
		{"p99", func(o metrics.IntervalOpRec) float64 { return o.P99 }, colP99, 1.5},
		{"max", func(o metrics.IntervalOpRec) float64 { return o.Max }, colMax, 1},
	}
	var p50s []float64
	var ss []series
	for _, pc := range pcts {
		segs := segments(res, func(iv *metrics.IntervalRec) (float64, bool) {
			o := pick(iv)
			v := pc.get(o)
			if o.Count > 0 && v > 0 && pc.name == "p50" {
				p50s = append(p50s, v)
			}
			return v, o.Count > 0 && v > 0
		})
		ss = append(ss, series{pc.name, segs, lineStyle(pc.color, pc.width, false)})
	}
	if err := addAll(lat, ss, stats.Median(p50s)); err != nil {
		return nil, err
	}

	achieved := segments(res, func(iv *metrics.IntervalRec) (float64, bool) {
		if op == "" {
			return iv.Rate, true
		}
		return perSecond(pick(iv).Count, iv)
	})
	if err := addSeries(rate, "achieved", achieved, lineStyle(colP50, 1.5, false)); err != nil {
		return nil, err
	}
	if op == "" && anyInterval(res, func(iv *metrics.IntervalRec) bool { return iv.TargetRate > 0 }) {
		target := segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return iv.TargetRate, iv.TargetRate > 0 })
		if err := addSeries(rate, "target", target, lineStyle(color.Black, 1, true)); err != nil {
			return nil, err
		}
	}
	if op == "" && anyInterval(res, func(iv *metrics.IntervalRec) bool { return iv.Dropped > 0 }) {
		dropped := segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return perSecond(iv.Dropped, iv) })
		if err := addSeries(rate, "dropped", dropped, lineStyle(colMax, 1, false)); err != nil {
			return nil, err
		}
	}
	fromZero(rate.Plot)
	return &Chart{Name: name, Title: title, Subtitle: subtitle(res), Panels: []*Panel{lat, rate}}, nil
}

// ThroughputErrors draws completed ops/s over time (s since the start),
// with the target arrival rate in the open model, and below it errors/s
// by error class and dropped ops/s when there were any.
func ThroughputErrors(res *metrics.Results) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", metrics.FileIntervals)
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
	var ep *Panel
	if errs > 0 || dropped > 0 {
		ep = newPanel("Errors per interval", "time since start (s)", "per second")
		panels = append(panels, ep)
	} else {
		tp.Plot.Title.Text += " (no errors)"
	}
	shared(res, xmax, panels...)
	if err := addSeries(tp, "completed", segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return iv.Rate, true }),
		lineStyle(colP50, 1.5, false)); err != nil {
		return nil, err
	}
	if anyInterval(res, func(iv *metrics.IntervalRec) bool { return iv.TargetRate > 0 }) {
		if err := addSeries(tp, "target", segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return iv.TargetRate, iv.TargetRate > 0 }),
			lineStyle(color.Black, 1, true)); err != nil {
			return nil, err
		}
	}
	fromZero(tp.Plot)
	if ep != nil {
		// Classes in the driver's order, so colours are stable.
		i := 0
		for c := driver.ClassOK + 1; c < driver.NumClasses; c++ {
			if classes[c.String()] == 0 {
				continue
			}
			name := c.String()
			segs := segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return perSecond(iv.ErrorsByClass[name], iv) })
			if err := addSeries(ep, name+" errors", segs, lineStyle(colorN(3+i), 1.5, false)); err != nil {
				return nil, err
			}
			i++
		}
		if i == 0 && errs > 0 { // no class columns: the total
			segs := segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return perSecond(iv.All.Errors, iv) })
			if err := addSeries(ep, "errors", segs, lineStyle(colMax, 1.5, false)); err != nil {
				return nil, err
			}
		}
		if dropped > 0 {
			segs := segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return perSecond(iv.Dropped, iv) })
			if err := addSeries(ep, "dropped", segs, lineStyle(color.Gray{Y: 90}, 1, true)); err != nil {
				return nil, err
			}
		}
		fromZero(ep.Plot)
	}
	return &Chart{Name: "throughput", Title: "Throughput and errors over time", Subtitle: subtitle(res), Panels: panels}, nil
}

// ResumesReconnects draws resume attempts (response streams) and
// reconnect attempts (response and GET streams) per second over time (s
// since the start), with storm waves marked.
func ResumesReconnects(res *metrics.Results) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", metrics.FileIntervals)
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
	if err := addSeries(p, "reconnects", segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return perSecond(iv.Reconnects, iv) }),
		lineStyle(colP99, 2.5, false)); err != nil {
		return nil, err
	}
	if err := addSeries(p, "resumes", segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return perSecond(iv.All.Resumes, iv) }),
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
			segs := segments(res, func(iv *metrics.IntervalRec) (float64, bool) { return perSecond(iv.Ops[name].Resumes, iv) })
			if err := addSeries(p, legendName(name), segs, lineStyle(colorN(2+i), 1, true)); err != nil {
				return nil, err
			}
		}
	}
	fromZero(p.Plot)
	return &Chart{Name: "resumes", Title: "Resumes and reconnects over time", Subtitle: subtitle(res), Panels: []*Panel{p}}, nil
}

// Spectrum draws each op's response-time percentile spectrum from its
// histogram merged over the run: latency (ms) against the percentile on
// a log "nines" axis (x = 1/(1−q): 0%, 90%, 99%, 99.9%…), ending at the
// max. In the open model the service time of each op is drawn dashed.
func Spectrum(res *metrics.Results) (*Chart, error) {
	open := summaryOf(res).Model == "open"
	p := newPanel("", "percentile", "response time (ms)")
	if open {
		p.Plot.Y.Label.Text = "latency (ms)"
	}
	var ss []series
	med, maxN := math.Inf(1), 0.0 // the lowest median: ops of different scales turn the axis to log
	for i, name := range res.Ops {
		h := res.Histograms[metrics.HlogTag(name)+".response"]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		med = min(med, float64(h.ValueAtQuantile(50))/1000)
		maxN = max(maxN, float64(h.TotalCount()))
		c := colorN(i)
		ss = append(ss, series{legendName(name), []plotter.XYs{spectrumXYs(h)}, lineStyle(c, 1.5, false)})
		if s := res.Histograms[metrics.HlogTag(name)+".service"]; open && s != nil && s.TotalCount() > 0 {
			ss = append(ss, series{"", []plotter.XYs{spectrumXYs(s)}, lineStyle(c, 1, true)})
		}
	}
	if len(ss) == 0 {
		return nil, noData("no response-time histograms (%s)", metrics.FileHistogram)
	}
	if err := addAll(p, ss, med); err != nil {
		return nil, err
	}
	ninesAxis(p.Plot, maxN)
	if open {
		p.Legend.Add("")
		p.Legend.Add("response time", &plotter.Line{LineStyle: lineStyle(color.Black, 1.5, false)})
		p.Legend.Add("service time", &plotter.Line{LineStyle: lineStyle(color.Black, 1, true)})
	}
	return &Chart{Name: "spectrum", Title: "Response-time percentile spectrum", Subtitle: subtitle(res), Panels: []*Panel{p}}, nil
}

// TimeToResume draws, for each op whose streams were resumed, the time
// to resume (ms: from the break to the resumed stream's first byte, as
// the <op>.resume histograms record it): its distribution (resumes per
// bin, 60 bins over the range seen) above its percentile spectrum on the
// nines axis.
func TimeToResume(res *metrics.Results) (*Chart, error) {
	type opHist struct {
		i    int
		name string
		h    *hdr.Histogram
	}
	var hs []opHist
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, name := range res.Ops {
		h := res.Histograms[metrics.HlogTag(name)+".resume"]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		hs = append(hs, opHist{i, name, h})
		lo = min(lo, float64(h.Min())/1000)
		hi = max(hi, float64(h.Max())/1000)
	}
	if len(hs) == 0 {
		return nil, noData("no stream was resumed")
	}
	const nbins = 60
	if hi-lo < 1e-3 {
		lo, hi = lo-0.5, hi+0.5
	}
	lo = max(0, lo)
	width := (hi - lo) / nbins
	dist := newPanel("Distribution", "time to resume (ms)", "resumes per bin")
	spec := newPanel("Percentile spectrum", "percentile", "time to resume (ms)")
	var ss []series
	med, maxN := math.Inf(1), 0.0
	for _, oh := range hs {
		med = min(med, float64(oh.h.ValueAtQuantile(50))/1000)
		maxN = max(maxN, float64(oh.h.TotalCount()))
		bins := make([]plotter.HistogramBin, nbins)
		for b := range bins {
			bins[b] = plotter.HistogramBin{Min: lo + float64(b)*width, Max: lo + float64(b+1)*width}
		}
		for _, bar := range oh.h.Distribution() {
			if bar.Count == 0 {
				continue
			}
			mid := float64(bar.From+bar.To) / 2000
			b := min(max(int((mid-lo)/width), 0), nbins-1)
			bins[b].Weight += float64(bar.Count)
		}
		c := colorN(oh.i)
		fill := color.NRGBA{c.R, c.G, c.B, 0x80}
		hp := &plotter.Histogram{Bins: bins, Width: width, FillColor: fill, LineStyle: lineStyle(c, 0.5, false)}
		dist.Plot.Add(hp)
		dist.Legend.Add(legendName(oh.name), hp)
		ss = append(ss, series{legendName(oh.name), []plotter.XYs{spectrumXYs(oh.h)}, lineStyle(c, 1.5, false)})
	}
	dist.Plot.X.Min, dist.Plot.X.Max = lo, hi
	fromZero(dist.Plot)
	if err := addAll(spec, ss, med); err != nil {
		return nil, err
	}
	ninesAxis(spec.Plot, maxN)
	return &Chart{Name: "time-to-resume", Title: "Time to resume a broken stream", Subtitle: subtitle(res), Panels: []*Panel{dist, spec}}, nil
}

// spectrumXYs returns h's percentile spectrum: points (nines, value at q
// in ms) with nines = log10(1/(1−q)), 20 per nine up to the last sample,
// then the max.
func spectrumXYs(h *hdr.Histogram) plotter.XYs {
	n := float64(h.TotalCount())
	last := math.Log10(n)
	var xys plotter.XYs
	for k := 0; ; k++ {
		nines := float64(k) / 20
		if k > 0 && nines >= last {
			break
		}
		q := 1 - math.Pow(10, -nines)
		xys = append(xys, plotter.XY{X: nines, Y: float64(h.ValueAtQuantile(100*q)) / 1000})
	}
	if n > 1 {
		xys = append(xys, plotter.XY{X: last, Y: float64(h.Max()) / 1000})
	}
	return xys
}

// ninesAxis sets a spectrum's x axis: percentiles in nines (NinesTicks)
// from 0% to the first nine past the largest count n (at least 90%).
func ninesAxis(p *plot.Plot, n float64) {
	p.X.Tick.Marker = NinesTicks{}
	p.X.Min, p.X.Max = 0, max(1, math.Ceil(math.Log10(max(n, 1))-1e-9))
}

// shared sets the time axis of panels stacked over one another: 0 to
// xmax s, tick labels on the lowest only; shades warm-up and stopping
// intervals and marks storm waves (legend entries on the first panel).
// Call it before adding series, so the shading lies under them.
func shared(res *metrics.Results, xmax float64, panels ...*Panel) {
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
			p.Plot.Add(b)
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
func phaseBands(res *metrics.Results, xmax float64) ([]band, []string) {
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
		if iv.Phase == "measure" || iv.Phase == "" {
			continue
		}
		from := iv.T - iv.Interval
		if n := len(bands); n > 0 && names[n-1] == iv.Phase && math.Abs(bands[n-1].X1-from) < 1e-6 {
			bands[n-1].X1 = iv.T
			continue
		}
		col := color.Color(colStopping)
		if iv.Phase == "warm-up" {
			col = colWarmup
		}
		bands = append(bands, band{X0: from, X1: iv.T, Color: col})
		names = append(names, iv.Phase)
	}
	return bands, names
}

// setLinearY sets a linear y axis over data in [lo, hi]: from 0, unless
// the data keep to the upper half, where 0 would flatten them.
func setLinearY(p *plot.Plot, lo, hi float64) {
	switch {
	case !(hi > 0):
		p.Y.Min, p.Y.Max = 0, 1
	case lo > hi/2:
		span := max(hi-lo, hi*0.02)
		p.Y.Min, p.Y.Max = max(0, lo-0.15*span), hi+0.1*span
	default:
		p.Y.Min, p.Y.Max = 0, hi*1.05
	}
}

// legendName shortens a long name for a legend, keeping both ends.
func legendName(s string) string {
	const maxRunes = 34
	r := []rune(s)
	if len(r) <= maxRunes {
		return s
	}
	head := (maxRunes - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(maxRunes-1-head):])
}

// fromZero starts a linear y axis at 0 and gives it some headroom.
func fromZero(p *plot.Plot) {
	p.Y.Min = 0
	if math.IsInf(p.Y.Max, 0) || p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	p.Y.Max *= 1.05
}

// segments returns the points (middle of the interval, y) of the
// intervals for which y is defined, split where it is not. Left out:
// intervals that lie mostly in the warm-up (their ops were not recorded,
// so their counts would read as a ramp-up that did not happen) and a
// partial interval shorter than half the usual one (the tail of the
// graceful stop: a few ops over a few ms, whose rate and percentiles are
// noise).
func segments(res *metrics.Results, y func(*metrics.IntervalRec) (float64, bool)) []plotter.XYs {
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

func perSecond(n int64, iv *metrics.IntervalRec) (float64, bool) {
	if iv.Interval <= 0 {
		return 0, false
	}
	return float64(n) / iv.Interval, true
}

func anyInterval(res *metrics.Results, f func(*metrics.IntervalRec) bool) bool {
	for i := range res.Intervals {
		if f(&res.Intervals[i]) {
			return true
		}
	}
	return false
}

// summaryOf returns the run's summary, rebuilt from the interval files
// when the run did not write one.
func summaryOf(res *metrics.Results) *metrics.Summary {
	if res.Summary != nil {
		return res.Summary
	}
	return res.Rebuild()
}

// subtitle names the run: target, profile, protocol and start (UTC).
func subtitle(res *metrics.Results) string {
	s := summaryOf(res)
	target, profile, proto, started := s.Target, s.Profile, s.Protocol, s.Started
	embedded := s.Embedded
	if r := res.Run; r != nil {
		target, profile, embedded = cmpOr(target, r.Target), cmpOr(profile, r.Profile), embedded || r.Embedded
		proto = cmpOr(proto, r.ProtocolNegotiated)
		if started.IsZero() {
			started = r.Started
		}
	}
	var parts []string
	if target != "" {
		target = secret.RedactURL(target) // results of older versions kept credentials
		if embedded {
			target += " (embedded reference server)"
		}
		parts = append(parts, target)
	}
	if profile != "" {
		parts = append(parts, "profile "+profile)
	}
	if proto != "" {
		parts = append(parts, "protocol "+proto)
	}
	if !started.IsZero() {
		parts = append(parts, started.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if s.Interrupted {
		parts = append(parts, "INTERRUPTED")
	}
	return strings.Join(parts, "  ·  ")
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// fileSafe keeps an op name usable in a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// Options selects what Charts and WriteCharts draw.
type Options struct {
	// Formats to write; 0 means PNG and SVG.
	Formats Format
	// PerOp adds one latency-over-time chart per op ("latency-<op>").
	PerOp bool
}

// Format is a set of image formats.
type Format int

// Formats.
const (
	PNG Format = 1 << iota
	SVG
)

// ParseFormat parses "png", "svg" or "both".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "png":
		return PNG, nil
	case "svg":
		return SVG, nil
	case "both", "":
		return PNG | SVG, nil
	}
	return 0, fmt.Errorf("format %q: want png, svg or both", s)
}

// Item is one chart of a run: drawn, or skipped with the reason.
type Item struct {
	Name    string // file stem
	Chart   *Chart // nil when skipped
	Skipped string // why there is no chart ("" when drawn)
}

// Charts draws every chart that applies to res, in report order:
// latency (and per op with opts.PerOp), throughput, spectrum, resumes,
// time-to-resume. A chart without data is an Item with Skipped set; an
// error is returned only when drawing fails.
func Charts(res *metrics.Results, opts Options) ([]Item, error) {
	type fn struct {
		name string
		f    func() (*Chart, error)
	}
	fns := []fn{{"latency", func() (*Chart, error) { return LatencyOverTime(res, "") }}}
	if opts.PerOp {
		for _, op := range res.Ops {
			fns = append(fns, fn{"latency-" + fileSafe(op), func() (*Chart, error) { return LatencyOverTime(res, op) }})
		}
	}
	fns = append(fns,
		fn{"throughput", func() (*Chart, error) { return ThroughputErrors(res) }},
		fn{"spectrum", func() (*Chart, error) { return Spectrum(res) }},
		fn{"resumes", func() (*Chart, error) { return ResumesReconnects(res) }},
		fn{"time-to-resume", func() (*Chart, error) { return TimeToResume(res) }},
	)
	var items []Item
	for _, f := range fns {
		c, err := f.f()
		switch {
		case errors.Is(err, ErrNoData):
			items = append(items, Item{Name: f.name, Skipped: strings.TrimPrefix(err.Error(), ErrNoData.Error()+": ")})
		case err != nil:
			return nil, fmt.Errorf("plots: %s: %w", f.name, err)
		default:
			items = append(items, Item{Name: f.name, Chart: c})
		}
	}
	return items, nil
}

// Output is what WriteCharts did for one chart.
type Output struct {
	Name    string
	Files   []string // paths written (.png, .svg)
	Skipped string   // why the chart was not drawn ("" when it was)
}

// WriteCharts draws every applicable chart of res into dir (created if
// needed) as <name>.png and/or <name>.svg and reports each chart: the
// files written, or why it was skipped.
func WriteCharts(dir string, res *metrics.Results, opts Options) ([]Output, error) {
	items, err := Charts(res, opts)
	if err != nil {
		return nil, err
	}
	return writeItems(dir, items, opts.Formats)
}

// writeItems writes drawn charts as <name>.png and/or <name>.svg.
func writeItems(dir string, items []Item, formats Format) ([]Output, error) {
	if formats == 0 {
		formats = PNG | SVG
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []Output
	for _, it := range items {
		o := Output{Name: it.Name, Skipped: it.Skipped}
		if it.Chart != nil {
			for _, f := range []struct {
				format Format
				ext    string
				write  func(*os.File) error
			}{
				{PNG, ".png", func(w *os.File) error { return it.Chart.WritePNG(w) }},
				{SVG, ".svg", func(w *os.File) error { return it.Chart.WriteSVG(w) }},
			} {
				if formats&f.format == 0 {
					continue
				}
				path := filepath.Join(dir, it.Name+f.ext)
				if err := writeFile(path, f.write); err != nil {
					return out, err
				}
				o.Files = append(o.Files, path)
			}
		}
		out = append(out, o)
	}
	return out, nil
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
