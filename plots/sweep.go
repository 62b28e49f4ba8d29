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
	"github.com/mcpbench/mcpbench/results"
	"gonum.org/v1/plot/plotter"
)

// Capacity charts of a sweep (mcpbench sweep), all against the load
// offered — the swept dimension: arrival rate, VUs or sessions — so a
// curve never folds back past saturation: latency percentiles with the
// p99's confidence interval, the SLO, the knee and the highest load under
// the SLO (with their intervals), and the achieved throughput in a panel
// of its own; the error rate in %; the target's (and mcpbench's) CPU,
// memory and open files; memory against open sessions with its fit. They
// read sweep.json only.

func sweepSubtitle(sw *results.Sweep) string {
	return fmt.Sprintf("%s  ·  profile %s  ·  protocol %s  ·  %s", secret.RedactURL(sw.Target), sw.Profile, cmp.Or(sw.Protocol, "-"), sw.Started.UTC().Format("2006-01-02 15:04 UTC"))
}

// finished returns the sweep's judged steps (an interrupted step is
// partial; a re-check after an overload repeats a load and is in the
// verdict's hysteresis line) sorted by key, so a line runs left to right even when
// refinement steps ran after higher loads.
func finished(sw *results.Sweep, key func(results.SweepStep) float64) []results.SweepStep {
	var out []results.SweepStep
	for _, s := range sw.Results {
		if !s.Interrupted && !s.Recheck {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b results.SweepStep) int { return cmp.Compare(key(a), key(b)) })
	return out
}

func offered(s results.SweepStep) float64 { return s.Value }

// stepByN returns step n of the sweep (nil when it is not there).
func stepByN(sw *results.Sweep, n int) *results.SweepStep {
	for i := range sw.Results {
		if sw.Results[i].N == n {
			return &sw.Results[i]
		}
	}
	return nil
}

// loadUnit labels a sweep chart's load axis: "offered load (ops/s)",
// "VUs" or "open sessions".
func loadUnit(by string) string {
	switch by {
	case results.SweepByVUs:
		return "VUs (closed model)"
	case results.SweepBySessions:
		return "sessions (each with a GET stream)"
	}
	return "offered load (ops/s)"
}

// loadAxis sets a panel's x axis from 0 to a little past the highest
// load.
func loadAxis(p *Panel, steps []results.SweepStep) float64 {
	xmax := steps[len(steps)-1].Value * 1.05
	p.Plot.X.Min, p.Plot.X.Max = 0, xmax
	return xmax
}

// CapacityLatency draws response-time percentiles (ms) of each step
// against the load offered, the p99 with its confidence interval, the
// SLO's p99, the knee and the highest load under the SLO with their
// intervals; below it, the achieved throughput against the same load
// (with the offered rate as a diagonal for rate sweeps).
func CapacityLatency(sw *results.Sweep) (*Chart, error) {
	steps := finished(sw, offered)
	if len(steps) == 0 {
		return nil, noData("no finished step")
	}
	p := newPanel("Response time per step (p99 with its 95 % interval)", "", "response time (ms)")
	q := newPanel("Achieved throughput per step", loadUnit(sw.By), "ops/s")
	xmax := loadAxis(p, steps)
	loadAxis(q, steps)
	lo, hi := math.Inf(1), sw.SLO.P99MS
	for _, s := range steps {
		lo, hi = math.Min(lo, math.Max(s.Latency.P50, 0.001)), math.Max(hi, s.Latency.Max)
		if s.P99CI != nil {
			hi = math.Max(hi, s.P99CI.Hi)
		}
	}
	useLog := hi > 30*lo
	y := func(v float64) float64 {
		if useLog {
			return math.Log10(math.Max(v, 0.001))
		}
		return v
	}
	markVerdict(p, sw, y, xmax)
	if err := addPercentileLines(p, steps, y); err != nil {
		return nil, err
	}
	if useLog {
		setLogY(p.Plot, floor125(lo), hi*1.2)
	} else {
		p.Plot.Y.Min, p.Plot.Y.Max = 0, hi*1.1
	}
	p.Plot.X.Tick.Marker = unlabelled{linearTicks{}}
	if err := addAchieved(q, sw, steps, xmax); err != nil {
		return nil, err
	}
	return &Chart{Name: "capacity-latency", Title: "Capacity: latency and throughput against the load offered", Subtitle: sweepSubtitle(sw),
		Caption: capacityCaption(sw), Panels: []*Panel{p, q}}, nil
}

// capacityCaption says what to read on the capacity chart.
func capacityCaption(sw *results.Sweep) string {
	v := sw.Verdict
	var b strings.Builder
	b.WriteString("Follow p99 to where it crosses the dashed SLO line: the green line is the highest load that met the SLO")
	if c := v.Crossing; c != nil && c.Hi > c.Lo {
		b.WriteString(", the green band the bracket the crossing lies in (from that load to the lowest failing one above it; any load inside is as likely)")
	}
	b.WriteString(". The purple line is the knee, where p99 reaches twice its low-load baseline")
	if v.KneeCI != nil {
		b.WriteString(" (band: its 95 % interval)")
	}
	b.WriteString(". Below, achieved throughput should follow the offered load; where it flattens, the server is saturated.")
	return b.String()
}

// addPercentileLines draws p50, p90, p99 and max of each step, with the
// p99's interval as error bars.
func addPercentileLines(p *Panel, steps []results.SweepStep, y func(float64) float64) error {
	pick := []struct {
		name string
		get  func(results.Latency) float64
		col  color.Color
	}{
		{"p50", func(l results.Latency) float64 { return l.P50 }, colP50},
		{"p90", func(l results.Latency) float64 { return l.P90 }, colP90},
		{"p99", func(l results.Latency) float64 { return l.P99 }, colP99},
		{"max", func(l results.Latency) float64 { return l.Max }, colMax},
	}
	var bars errBars
	for _, s := range steps {
		if c := s.P99CI; c != nil {
			bars.pts = append(bars.pts, errBar{X: s.Value, Lo: y(c.Lo), Hi: y(c.Hi)})
		}
	}
	bars.sty = lineStyle(colP99, 1, false)
	p.Plot.Add(bars)
	for _, k := range pick {
		xy := make(plotter.XYs, 0, len(steps))
		for _, s := range steps {
			xy = append(xy, plotter.XY{X: s.Value, Y: y(k.get(s.Latency))})
		}
		if err := addSeries(p, k.name, []plotter.XYs{xy}, lineStyle(k.col, 1.5, false)); err != nil {
			return err
		}
		if err := addDots(p, xy, k.col); err != nil {
			return err
		}
	}
	return nil
}

// markVerdict adds the SLO line, the knee and the highest load under
// the SLO, with their intervals as shaded bands (under the data).
func markVerdict(p *Panel, sw *results.Sweep, y func(float64) float64, xmax float64) {
	v := sw.Verdict
	if c := v.Crossing; c != nil && c.Hi > c.Lo {
		b := band{X0: c.Lo, X1: c.Hi, Color: color.NRGBA{0x59, 0xa1, 0x4f, 0x38}}
		p.Plot.Add(b)
		p.Legend.Add("SLO crossed in", b)
	}
	if c := v.KneeCI; c != nil && v.Knee > 0 && c.Hi > c.Lo {
		b := band{X0: c.Lo, X1: c.Hi, Color: color.NRGBA{0xb0, 0x7a, 0xa1, 0x38}}
		p.Plot.Add(b)
		p.Legend.Add("knee (95 %)", b)
	}
	if sw.SLO.P99MS > 0 {
		l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: y(sw.SLO.P99MS)}, {X: xmax, Y: y(sw.SLO.P99MS)}})
		l.LineStyle = lineStyle(color.Black, 1, true)
		p.Plot.Add(l)
		p.Legend.Add(fmt.Sprintf("SLO p99 %s ms", trim(sw.SLO.P99MS)), l)
	}
	if v.Knee > 0 {
		l := vline{X: v.Knee, LineStyle: lineStyle(colorN(4), 1.5, true)}
		p.Plot.Add(l)
		p.Legend.Add(fmt.Sprintf("knee %s", loadLabel(v.Knee)), l)
	}
	if v.MaxLoad > 0 {
		l := vline{X: v.MaxLoad, LineStyle: lineStyle(colorN(2), 1.5, false)}
		p.Plot.Add(l)
		p.Legend.Add(fmt.Sprintf("max under SLO %s", loadLabel(v.MaxLoad)), l)
	}
}

// addAchieved draws the achieved rate of each step against the load,
// the offered diagonal (rate sweeps) and the maximum sustainable rate.
func addAchieved(q *Panel, sw *results.Sweep, steps []results.SweepStep, xmax float64) error {
	ach := plotter.XYs{}
	top := 0.0
	for _, s := range steps {
		ach = append(ach, plotter.XY{X: s.Value, Y: s.Achieved})
		top = math.Max(top, s.Achieved)
	}
	if sw.By == results.SweepByRate {
		if err := addSeries(q, "offered", []plotter.XYs{{{X: 0, Y: 0}, {X: xmax, Y: xmax}}}, lineStyle(color.Gray{Y: 120}, 1, true)); err != nil {
			return err
		}
		top = math.Max(top, xmax)
	}
	if err := addSeries(q, "achieved", []plotter.XYs{ach}, lineStyle(colP50, 1.5, false)); err != nil {
		return err
	}
	if err := addDots(q, ach, colP50); err != nil {
		return err
	}
	if m := sw.Verdict.MaxSustainable; m > 0 {
		if err := addSeries(q, fmt.Sprintf("max sustainable %.0f/s", m), []plotter.XYs{{{X: 0, Y: m}, {X: xmax, Y: m}}}, lineStyle(colorN(2), 1, true)); err != nil {
			return err
		}
	}
	q.Plot.Y.Min, q.Plot.Y.Max = 0, math.Max(top, 1)*1.08
	return nil
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

// loadLabel formats a load for a legend: whole above 100, three
// significant digits below.
func loadLabel(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// CapacityErrors draws the error rate (% of ops) of each step against the
// load offered, with its confidence interval and the SLO's error rate,
// and the dropped arrivals (% of arrivals: ops the open model could not
// start) of each step.
func CapacityErrors(sw *results.Sweep) (*Chart, error) {
	steps := finished(sw, offered)
	if len(steps) == 0 {
		return nil, noData("no finished step")
	}
	p := newPanel("Error rate and dropped arrivals per step (errors with their 95 % interval)", loadUnit(sw.By), "% of ops (errors) or of arrivals (dropped)")
	xmax := loadAxis(p, steps)
	top := 100 * sw.SLO.ErrorRate
	var bars errBars
	xy := plotter.XYs{}
	for _, s := range steps {
		xy = append(xy, plotter.XY{X: s.Value, Y: 100 * s.ErrorRate})
		top = math.Max(top, 100*s.ErrorRate)
		if c := s.ErrorRateCI; c != nil && c.Hi > c.Lo {
			bars.pts = append(bars.pts, errBar{X: s.Value, Lo: 100 * c.Lo, Hi: 100 * c.Hi})
			top = math.Max(top, 100*c.Hi)
		}
	}
	bars.sty = lineStyle(colMax, 1, false)
	p.Plot.Add(bars)
	if err := addSeries(p, "error rate", []plotter.XYs{xy}, lineStyle(colMax, 1.5, false)); err != nil {
		return nil, err
	}
	if err := addDots(p, xy, colMax); err != nil {
		return nil, err
	}
	drop := plotter.XYs{}
	for _, s := range steps {
		d := droppedPct(s)
		drop = append(drop, plotter.XY{X: s.Value, Y: d})
		top = math.Max(top, d)
	}
	if err := addSeries(p, "dropped", []plotter.XYs{drop}, lineStyle(colP90, 1.5, true)); err != nil {
		return nil, err
	}
	if err := addDots(p, drop, colP90); err != nil {
		return nil, err
	}
	if err := addSeries(p, fmt.Sprintf("SLO %s%%", trim(100*sw.SLO.ErrorRate)), []plotter.XYs{{{X: 0, Y: 100 * sw.SLO.ErrorRate}, {X: xmax, Y: 100 * sw.SLO.ErrorRate}}}, lineStyle(color.Black, 1, true)); err != nil {
		return nil, err
	}
	p.Plot.Y.Min, p.Plot.Y.Max = 0, math.Max(top, 0.1)*1.1
	return &Chart{Name: "capacity-errors", Title: "Capacity: errors against the load offered", Subtitle: sweepSubtitle(sw), Panels: []*Panel{p},
		Caption: "Errors as a share of the ops each step completed, and dropped arrivals (ops the load could not start: no free VU) as a share of the step's arrivals: both should stay on 0 up to the knee; a step above the dashed line failed the SLO on errors, and a step that dropped arrivals did not get the load it offered."}, nil
}

// droppedPct is a step's dropped arrivals in % of its arrivals
// (completed and dropped ops).
func droppedPct(s results.SweepStep) float64 {
	if n := s.Count + s.Dropped; n > 0 {
		return 100 * float64(s.Dropped) / float64(n)
	}
	return 0
}

// CapacityResources draws, per step against the load offered, the CPU
// (cores) and resident memory (MB) of mcpbench and, with --target-pid,
// of the target, and the target's open files.
func CapacityResources(sw *results.Sweep) (*Chart, error) {
	steps := finished(sw, offered)
	if len(steps) == 0 {
		return nil, noData("no finished step")
	}
	hasTgt := slices.ContainsFunc(steps, func(s results.SweepStep) bool { return s.TgtRSSMB > 0 })
	cpu := newPanel("CPU per step", "", "cores")
	mem := newPanel("Resident memory per step", "", "RSS (MB)")
	panels := []*Panel{cpu, mem}
	var fds *Panel
	if hasTgt {
		fds = newPanel("Open files of the target per step", "", "file descriptors")
		panels = append(panels, fds)
	}
	panels[len(panels)-1].Plot.X.Label.Text = loadUnit(sw.By)
	type line struct {
		p      *Panel
		name   string
		get    func(results.SweepStep) float64
		i      int
		dashed bool
	}
	var lines []line
	if hasTgt {
		lines = append(lines, line{cpu, "target", func(s results.SweepStep) float64 { return s.TgtCores }, 0, false},
			line{mem, "target", func(s results.SweepStep) float64 { return s.TgtRSSMB }, 0, false},
			line{fds, "target", func(s results.SweepStep) float64 { return float64(s.TgtFDs) }, 0, false})
	}
	lines = append(lines, line{cpu, "mcpbench", func(s results.SweepStep) float64 { return s.GenCores }, 1, true},
		line{mem, "mcpbench", func(s results.SweepStep) float64 { return s.GenRSSMB }, 1, true})
	for _, l := range lines {
		xy := plotter.XYs{}
		for _, s := range steps {
			xy = append(xy, plotter.XY{X: s.Value, Y: l.get(s)})
		}
		if err := addSeries(l.p, l.name, []plotter.XYs{xy}, lineStyle(colorN(l.i), 1.5, l.dashed)); err != nil {
			return nil, err
		}
		if err := addDots(l.p, xy, colorN(l.i)); err != nil {
			return nil, err
		}
	}
	for i, p := range panels {
		loadAxis(p, steps)
		fromZero(p.Plot)
		if i < len(panels)-1 {
			p.Plot.X.Tick.Marker = unlabelled{linearTicks{}}
		}
	}
	caption := "CPU and memory at each step's load: a target whose CPU flattens at its cores while latency climbs is CPU-bound; mcpbench near its own cores means the generator, not the server, is the limit."
	if !hasTgt {
		caption += " Run with --target-pid to add the target process."
	}
	return &Chart{Name: "capacity-resources", Title: "Capacity: CPU, memory and open files against the load offered", Subtitle: sweepSubtitle(sw),
		Caption: caption, Panels: panels}, nil
}

// CapacityMemory draws RSS (MB) against open sessions (session sweeps)
// for the target and mcpbench, with the least-squares lines whose slopes
// are the memory per session.
func CapacityMemory(sw *results.Sweep) (*Chart, error) {
	steps := finished(sw, func(s results.SweepStep) float64 { return float64(s.Sessions) })
	if sw.By != results.SweepBySessions || len(steps) < 2 {
		return nil, noData("not a session sweep")
	}
	v := sw.Verdict
	tgt := "not measured (no --target-pid)"
	if v.TargetMemoryMeasured() {
		tgt = fmt.Sprintf("%.1f KiB/session", v.TargetKiBPerSession)
	}
	p := newPanel(fmt.Sprintf("RSS against open sessions: target %s, mcpbench %.1f KiB/session", tgt, v.GeneratorKiBPerSession), "open sessions", "RSS (MB)")
	var tm, gm plotter.XYs
	xmax := 0.0
	for _, s := range steps {
		if s.TgtRSSMB > 0 {
			tm = append(tm, plotter.XY{X: float64(s.Sessions), Y: s.TgtRSSMB})
		}
		gm = append(gm, plotter.XY{X: float64(s.Sessions), Y: s.GenRSSMB})
		xmax = math.Max(xmax, float64(s.Sessions))
	}
	fit := func(at0, kib float64) plotter.XYs {
		return plotter.XYs{{X: 0, Y: at0}, {X: xmax * 1.05, Y: at0 + kib/1024*xmax*1.05}}
	}
	if len(tm) > 0 {
		if err := addSeries(p, "target", []plotter.XYs{tm}, lineStyle(colorN(0), 1.5, false)); err != nil {
			return nil, err
		}
		addDots(p, tm, colorN(0))
		if v.TargetMemoryMeasured() {
			if err := addSeries(p, "target fit", []plotter.XYs{fit(v.TargetRSSAtZeroMB, v.TargetKiBPerSession)}, lineStyle(colorN(0), 0.8, true)); err != nil {
				return nil, err
			}
		}
	}
	if err := addSeries(p, "mcpbench", []plotter.XYs{gm}, lineStyle(colorN(1), 1.5, false)); err != nil {
		return nil, err
	}
	addDots(p, gm, colorN(1))
	if v.GeneratorKiBPerSession != 0 {
		if err := addSeries(p, "mcpbench fit", []plotter.XYs{fit(v.GeneratorRSSAtZeroMB, v.GeneratorKiBPerSession)}, lineStyle(colorN(1), 0.8, true)); err != nil {
			return nil, err
		}
	}
	p.Plot.X.Min, p.Plot.X.Max = 0, xmax*1.05
	fromZero(p.Plot)
	return &Chart{Name: "capacity-memory", Title: "Memory per session", Subtitle: sweepSubtitle(sw), Panels: []*Panel{p},
		Caption: "Each point is a step's RSS with its sessions open; the dashed lines are the least-squares fits whose slopes give memory per session. Points far off the line mean the RSS was still settling (a longer --step helps)."}, nil
}

// SweepCharts draws every capacity chart that applies to a sweep.
func SweepCharts(sw *results.Sweep) ([]Item, error) {
	fns := []struct {
		name string
		f    func(*results.Sweep) (*Chart, error)
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
func WriteSweepCharts(dir string, sw *results.Sweep, opts Options) ([]Output, error) {
	items, err := SweepCharts(sw)
	if err != nil {
		return nil, err
	}
	return writeItems(dir, items, opts.Formats)
}

func isNoData(err error) bool { return errors.Is(err, ErrNoData) }

func noDataReason(err error) string { return strings.TrimPrefix(err.Error(), ErrNoData.Error()+": ") }
