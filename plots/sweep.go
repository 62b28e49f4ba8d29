package plots

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/metrics"
	"gonum.org/v1/plot/plotter"
)

// Capacity charts of a sweep (mcpbench sweep): latency percentiles
// against achieved throughput, error rate against offered load, the
// target's (and mcpbench's) CPU and memory per step, and memory against
// open sessions. They read sweep.json only.

func sweepSubtitle(sw *metrics.Sweep) string {
	return fmt.Sprintf("%s  ·  profile %s  ·  protocol %s  ·  %s", secret.RedactURL(sw.Target), sw.Profile, cmp.Or(sw.Protocol, "-"), sw.Started.UTC().Format("2006-01-02 15:04 UTC"))
}

// finished returns the sweep's judged steps (an interrupted step is
// partial) sorted by key, so a line runs left to right even when
// refinement steps ran after higher loads.
func finished(sw *metrics.Sweep, key func(metrics.SweepStep) float64) []metrics.SweepStep {
	var out []metrics.SweepStep
	for _, s := range sw.Results {
		if !s.Interrupted {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b metrics.SweepStep) int { return cmp.Compare(key(a), key(b)) })
	return out
}

func offered(s metrics.SweepStep) float64  { return s.Value }
func achieved(s metrics.SweepStep) float64 { return s.Achieved }

// stepByN returns step n of the sweep (nil when it is not there).
func stepByN(sw *metrics.Sweep, n int) *metrics.SweepStep {
	for i := range sw.Results {
		if sw.Results[i].N == n {
			return &sw.Results[i]
		}
	}
	return nil
}

// loadUnit labels a sweep chart's load axis: "offered ops/s", "VUs" or
// "sessions".
func loadUnit(by string) string {
	if u := metrics.SweepLoadUnit(by); u != "ops/s" {
		return u
	}
	return "offered ops/s"
}

// CapacityLatency draws response-time percentiles against the achieved
// throughput of each step, with the SLO's p99 and the knee.
func CapacityLatency(sw *metrics.Sweep) (*Chart, error) {
	steps := finished(sw, achieved)
	if len(steps) == 0 {
		return nil, noData("no finished step")
	}
	p := newPanel("Response time against achieved throughput (one point per step)", "achieved throughput (ops/s)", "response time (ms)")
	pick := []struct {
		name string
		get  func(metrics.Latency) float64
	}{
		{"p50", func(l metrics.Latency) float64 { return l.P50 }},
		{"p90", func(l metrics.Latency) float64 { return l.P90 }},
		{"p99", func(l metrics.Latency) float64 { return l.P99 }},
		{"max", func(l metrics.Latency) float64 { return l.Max }},
	}
	// A log axis when the tail dwarfs the median (past the knee).
	lo, hi := math.Inf(1), 0.0
	for _, s := range steps {
		lo, hi = math.Min(lo, math.Max(s.Latency.P50, 0.001)), math.Max(hi, s.Latency.Max)
	}
	useLog := hi > 30*lo
	y := func(v float64) float64 {
		if useLog {
			return math.Log10(math.Max(v, 0.001))
		}
		return v
	}
	xmax := 0.0
	for _, s := range steps {
		xmax = math.Max(xmax, s.Achieved)
	}
	for i, k := range pick {
		xy := make(plotter.XYs, 0, len(steps))
		for _, s := range steps {
			xy = append(xy, plotter.XY{X: s.Achieved, Y: y(k.get(s.Latency))})
		}
		if err := addSeries(p, k.name, []plotter.XYs{xy}, lineStyle(colorN(i), 1.5, false)); err != nil {
			return nil, err
		}
		if err := addDots(p, xy, colorN(i)); err != nil {
			return nil, err
		}
	}
	if sw.SLO.P99MS > 0 {
		if err := addSeries(p, fmt.Sprintf("SLO p99 %s ms", trim(sw.SLO.P99MS)), []plotter.XYs{{{X: 0, Y: y(sw.SLO.P99MS)}, {X: xmax * 1.05, Y: y(sw.SLO.P99MS)}}},
			lineStyle(color.Black, 1, true)); err != nil {
			return nil, err
		}
		hi = math.Max(hi, sw.SLO.P99MS)
	}
	if v := sw.Verdict; v.KneeStep > 0 && stepByN(sw, v.KneeStep) != nil {
		x := stepByN(sw, v.KneeStep).Achieved
		p.Plot.Add(vline{X: x, LineStyle: lineStyle(colorN(4), 1.2, true)})
		p.Legend.Add(fmt.Sprintf("knee (step %d)", v.KneeStep), vline{X: x, LineStyle: lineStyle(colorN(4), 1.2, true)})
	}
	if v := sw.Verdict; v.MaxStep > 0 && stepByN(sw, v.MaxStep) != nil {
		x := stepByN(sw, v.MaxStep).Achieved
		p.Plot.Add(vline{X: x, LineStyle: lineStyle(colorN(2), 1.2, true)})
		p.Legend.Add(fmt.Sprintf("max sustainable (%.0f/s)", v.MaxSustainable), vline{X: x, LineStyle: lineStyle(colorN(2), 1.2, true)})
	}
	p.Plot.X.Min, p.Plot.X.Max = 0, xmax*1.05
	if useLog {
		setLogY(p.Plot, floor125(lo), hi*1.2)
	} else {
		fromZero(p.Plot)
		p.Plot.Y.Max = hi * 1.1
	}
	return &Chart{Name: "capacity-latency", Title: "Capacity: latency against throughput", Subtitle: sweepSubtitle(sw), Panels: []*Panel{p}}, nil
}

// addDots marks each point.
func addDots(p *Panel, xy plotter.XYs, c color.Color) error {
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return err
	}
	sc.GlyphStyle.Color = c
	sc.GlyphStyle.Radius = 2.5
	p.Plot.Add(sc)
	return nil
}

func trim(v float64) string { return fmt.Sprintf("%g", math.Round(v*1000)/1000) }

// CapacityErrors draws the error rate of each step against the load
// offered (and, for rate sweeps, the achieved against the offered rate).
func CapacityErrors(sw *metrics.Sweep) (*Chart, error) {
	steps := finished(sw, offered)
	if len(steps) == 0 {
		return nil, noData("no finished step")
	}
	p := newPanel("Error rate against offered load", loadUnit(sw.By), "errors (% of ops)")
	xy := plotter.XYs{}
	for _, s := range steps {
		xy = append(xy, plotter.XY{X: s.Value, Y: 100 * s.ErrorRate})
	}
	if err := addSeries(p, "error rate", []plotter.XYs{xy}, lineStyle(colorN(3), 1.5, false)); err != nil {
		return nil, err
	}
	addDots(p, xy, colorN(3))
	xmax := steps[len(steps)-1].Value * 1.05
	if err := addSeries(p, fmt.Sprintf("SLO %s%%", trim(100*sw.SLO.ErrorRate)), []plotter.XYs{{{X: 0, Y: 100 * sw.SLO.ErrorRate}, {X: xmax, Y: 100 * sw.SLO.ErrorRate}}}, lineStyle(color.Black, 1, true)); err != nil {
		return nil, err
	}
	p.Plot.X.Min, p.Plot.X.Max = 0, xmax
	fromZero(p.Plot)
	panels := []*Panel{p}
	if sw.By == metrics.SweepByRate {
		q := newPanel("Achieved against offered rate", loadUnit(sw.By), "ops/s")
		ach, ideal := plotter.XYs{}, plotter.XYs{{X: 0, Y: 0}, {X: xmax, Y: xmax}}
		for _, s := range steps {
			ach = append(ach, plotter.XY{X: s.Value, Y: s.Achieved})
		}
		if err := addSeries(q, "achieved", []plotter.XYs{ach}, lineStyle(colorN(0), 1.5, false)); err != nil {
			return nil, err
		}
		addDots(q, ach, colorN(0))
		if err := addSeries(q, "offered", []plotter.XYs{ideal}, lineStyle(color.Black, 1, true)); err != nil {
			return nil, err
		}
		q.Plot.X.Min, q.Plot.X.Max = 0, xmax
		fromZero(q.Plot)
		panels = append(panels, q)
	}
	return &Chart{Name: "capacity-errors", Title: "Capacity: errors and achieved rate", Subtitle: sweepSubtitle(sw), Panels: panels}, nil
}

// CapacityResources draws CPU (cores) and RSS (MB) per step for the
// target (--target-pid) and for mcpbench itself.
func CapacityResources(sw *metrics.Sweep) (*Chart, error) {
	steps := finished(sw, offered)
	hasTgt := false
	for _, s := range steps {
		if s.TgtRSSMB > 0 {
			hasTgt = true
		}
	}
	if len(steps) == 0 || !hasTgt {
		return nil, noData("the target process was not sampled (--target-pid)")
	}
	cpu := newPanel("CPU per step", loadUnit(sw.By), "cores")
	mem := newPanel("Resident memory per step", loadUnit(sw.By), "RSS (MB)")
	var tc, gc, tm, gm plotter.XYs
	for _, s := range steps {
		tc = append(tc, plotter.XY{X: s.Value, Y: s.TgtCores})
		gc = append(gc, plotter.XY{X: s.Value, Y: s.GenCores})
		tm = append(tm, plotter.XY{X: s.Value, Y: s.TgtRSSMB})
		gm = append(gm, plotter.XY{X: s.Value, Y: s.GenRSSMB})
	}
	for _, x := range []struct {
		p      *Panel
		name   string
		xy     plotter.XYs
		i      int
		dashed bool
	}{{cpu, "target", tc, 0, false}, {cpu, "mcpbench", gc, 1, true}, {mem, "target", tm, 0, false}, {mem, "mcpbench", gm, 1, true}} {
		if err := addSeries(x.p, x.name, []plotter.XYs{x.xy}, lineStyle(colorN(x.i), 1.5, x.dashed)); err != nil {
			return nil, err
		}
		addDots(x.p, x.xy, colorN(x.i))
	}
	xmax := steps[len(steps)-1].Value * 1.05
	for _, p := range []*Panel{cpu, mem} {
		p.Plot.X.Min, p.Plot.X.Max = 0, xmax
		fromZero(p.Plot)
	}
	return &Chart{Name: "capacity-resources", Title: "Capacity: CPU and memory of the target and of mcpbench", Subtitle: sweepSubtitle(sw), Panels: []*Panel{cpu, mem}}, nil
}

// CapacityMemory draws RSS against open sessions (session sweeps), with
// the per-session slope.
func CapacityMemory(sw *metrics.Sweep) (*Chart, error) {
	steps := finished(sw, func(s metrics.SweepStep) float64 { return float64(s.Sessions) })
	if sw.By != metrics.SweepBySessions || len(steps) < 2 {
		return nil, noData("not a session sweep")
	}
	v := sw.Verdict
	p := newPanel(fmt.Sprintf("RSS against open sessions: target %.1f KiB/session, mcpbench %.1f KiB/session", v.TargetKiBPerSession, v.GeneratorKiBPerSession), "open sessions", "RSS (MB)")
	var tm, gm plotter.XYs
	for _, s := range steps {
		if s.TgtRSSMB > 0 {
			tm = append(tm, plotter.XY{X: float64(s.Sessions), Y: s.TgtRSSMB})
		}
		gm = append(gm, plotter.XY{X: float64(s.Sessions), Y: s.GenRSSMB})
	}
	if len(tm) > 0 {
		if err := addSeries(p, "target", []plotter.XYs{tm}, lineStyle(colorN(0), 1.5, false)); err != nil {
			return nil, err
		}
		addDots(p, tm, colorN(0))
	}
	if err := addSeries(p, "mcpbench", []plotter.XYs{gm}, lineStyle(colorN(1), 1.5, true)); err != nil {
		return nil, err
	}
	addDots(p, gm, colorN(1))
	p.Plot.X.Min = 0
	fromZero(p.Plot)
	return &Chart{Name: "capacity-memory", Title: "Memory per session", Subtitle: sweepSubtitle(sw), Panels: []*Panel{p}}, nil
}

// SweepCharts draws every capacity chart that applies to a sweep.
func SweepCharts(sw *metrics.Sweep) ([]Item, error) {
	fns := []struct {
		name string
		f    func(*metrics.Sweep) (*Chart, error)
	}{{"capacity-latency", CapacityLatency}, {"capacity-errors", CapacityErrors}, {"capacity-resources", CapacityResources}, {"capacity-memory", CapacityMemory}}
	var items []Item
	for _, f := range fns {
		c, err := f.f(sw)
		switch {
		case err == nil:
			items = append(items, Item{Name: f.name, Chart: c})
		case isNoData(err):
			items = append(items, Item{Name: f.name, Skipped: noDataReason(err)})
		default:
			return nil, fmt.Errorf("plots: %s: %w", f.name, err)
		}
	}
	return items, nil
}

// WriteSweepCharts draws a sweep's capacity charts into dir.
func WriteSweepCharts(dir string, sw *metrics.Sweep, opts Options) ([]Output, error) {
	items, err := SweepCharts(sw)
	if err != nil {
		return nil, err
	}
	return writeItems(dir, items, opts.Formats)
}

func isNoData(err error) bool { return errors.Is(err, ErrNoData) }

func noDataReason(err error) string { return strings.TrimPrefix(err.Error(), ErrNoData.Error()+": ") }
