package plots

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/results"
	"gonum.org/v1/plot/plotter"
)

// The run's gauges and processes over time, and its latency op by op:
// what intervals.csv samples each interval besides the totals.

// gaugeSegments is segments for gauges (VUs, sessions, processes): each
// point at its interval's middle, as every chart over time places them;
// the warm-up is kept, since sessions open and processes warm up there;
// only a partial interval shorter than half the usual one is left out.
// With afterStop false, so is the run's last row when it closes at or
// after the end of the measured window: it is written once the load has
// stopped, so its VUs, sessions and GET streams read 0 whatever ran
// during the interval (a line that falls to 0 inside the last measured
// second).
func gaugeSegments(res *results.Results, y func(*results.IntervalRec) (float64, bool), afterStop bool) []plotter.XYs {
	lengths := make([]float64, len(res.Intervals))
	for i, iv := range res.Intervals {
		lengths[i] = iv.Interval
	}
	usual := stats.Median(lengths)
	n := len(res.Intervals)
	if s := res.Summary; !afterStop && s != nil && n > 1 && res.Intervals[n-1].T >= s.WarmupS+s.DurationS-1e-3 {
		n--
	}
	var segs []plotter.XYs
	var cur plotter.XYs
	for i := range n {
		iv := &res.Intervals[i]
		if iv.Interval < usual/2 {
			continue
		}
		v, ok := y(iv)
		if !ok || math.IsNaN(v) {
			if len(cur) > 0 {
				segs, cur = append(segs, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: iv.T - iv.Interval/2, Y: v})
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

// LoadOverTime draws the VUs running, the sessions open and the GET
// streams open at the end of each interval (drawn at its middle, as
// every chart over time), over the time since the start (s); the row
// written after the load stopped is left out (gaugeSegments).
func LoadOverTime(res *results.Results) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", results.FileIntervals)
	}
	p := newPanel("VUs, sessions and GET streams at the end of each interval (drawn at its middle)", "time since start (s)", "count")
	shared(res, res.Intervals[len(res.Intervals)-1].T, p)
	lines := []struct {
		name string
		get  func(*results.IntervalRec) int64
		i    int
		w    float64
	}{
		{"VUs", func(iv *results.IntervalRec) int64 { return iv.VUs }, 0, 2.5},
		{"sessions", func(iv *results.IntervalRec) int64 { return iv.Sessions }, 1, 1.5},
		{"GET streams", func(iv *results.IntervalRec) int64 { return iv.Streams }, 2, 1.5},
	}
	for _, l := range lines {
		if l.name == "GET streams" && !anyInterval(res, func(iv *results.IntervalRec) bool { return iv.Streams > 0 }) {
			continue
		}
		segs := gaugeSegments(res, func(iv *results.IntervalRec) (float64, bool) { return float64(l.get(iv)), true }, false)
		if err := addSeries(p, l.name, segs, lineStyle(colorN(l.i), l.w, l.name == "GET streams")); err != nil {
			return nil, err
		}
	}
	fromZero(p.Plot)
	return &Chart{Name: "load", Title: "VUs, sessions and GET streams over time", Subtitle: subtitle(res), Panels: []*Panel{p},
		Caption: "Flat lines mean every VU kept its session (and GET stream) open; a dip is sessions lost or being replaced, a climb in the open model is VUs added because the target slowed down. The interval the stop closes is left out: it is counted after every VU stopped."}, nil
}

// ResourcesOverTime draws, over the time since the start (s), the CPU
// (cores) and resident memory (MB) of mcpbench and, with --target-pid,
// of the target, and the target's open files and threads.
func ResourcesOverTime(res *results.Results) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", results.FileIntervals)
	}
	hasTgt := anyInterval(res, func(iv *results.IntervalRec) bool { return iv.Target != nil })
	g := summaryOf(res).Generator
	cores := g.NumCPU
	if g.GOMAXPROCS > 0 && g.GOMAXPROCS < cores {
		cores = g.GOMAXPROCS
	}
	self := "mcpbench"
	var notes []string
	if cores > 0 {
		notes = append(notes, fmt.Sprintf("%d cores", cores))
	}
	if g.IncludesServer {
		self = "mcpbench + embedded server"
		notes = append(notes, "mcpbench's line includes the embedded server")
	}
	cpuTitle := "CPU per interval"
	if len(notes) > 0 {
		cpuTitle += " (" + strings.Join(notes, "; ") + ")"
	}
	cpu := newPanel(cpuTitle, "", "cores")
	mem := newPanel("Resident memory", "", "RSS (MB)")
	panels := []*Panel{cpu, mem}
	var fds *Panel
	if hasTgt {
		fds = newPanel("Open files and threads of the target", "", "count")
		panels = append(panels, fds)
	}
	panels[len(panels)-1].Plot.X.Label.Text = "time since start (s)"
	shared(res, res.Intervals[len(res.Intervals)-1].T, panels...)
	type line struct {
		p      *Panel
		name   string
		get    func(*results.IntervalRec) (float64, bool)
		i      int
		dashed bool
	}
	tgt := func(f func(*results.ProcRow) float64) func(*results.IntervalRec) (float64, bool) {
		return func(iv *results.IntervalRec) (float64, bool) {
			if iv.Target == nil {
				return 0, false
			}
			return f(iv.Target), true
		}
	}
	var lines []line
	if hasTgt {
		lines = append(lines,
			line{cpu, "target", tgt(func(t *results.ProcRow) float64 { return t.Cores }), 0, false},
			line{mem, "target", tgt(func(t *results.ProcRow) float64 { return t.RSSMB }), 0, false},
			line{fds, "open files", tgt(func(t *results.ProcRow) float64 { return float64(t.FDs) }), 0, false},
			line{fds, "threads", tgt(func(t *results.ProcRow) float64 { return float64(t.Threads) }), 2, true})
	}
	lines = append(lines,
		line{cpu, self, func(iv *results.IntervalRec) (float64, bool) { return iv.Self.Cores, true }, 1, true},
		line{mem, self, func(iv *results.IntervalRec) (float64, bool) { return iv.Self.RSSMB, iv.Self.RSSMB > 0 }, 1, true})
	for _, l := range lines {
		if err := addSeries(l.p, l.name, gaugeSegments(res, l.get, true), lineStyle(colorN(l.i), 1.5, l.dashed)); err != nil {
			return nil, err
		}
	}
	for _, p := range panels {
		fromZero(p.Plot)
	}
	if cores > 0 {
		// The cores mcpbench may use, as a line across the panel: CPU near
		// it is a generator at its limit.
		xmax := max(res.Intervals[len(res.Intervals)-1].T, 1)
		if err := addSeries(cpu, fmt.Sprintf("%d cores", cores), []plotter.XYs{{{X: 0, Y: float64(cores)}, {X: xmax, Y: float64(cores)}}}, lineStyle(color.Gray{Y: 100}, 1, true)); err != nil {
			return nil, err
		}
		cpu.Plot.Y.Max = max(cpu.Plot.Y.Max, float64(cores)*1.05)
	}
	caption := "mcpbench's own CPU near its cores means the generator is the bottleneck; the target's CPU, memory and open files should level off under steady load — a line that keeps climbing is a leak."
	if !hasTgt {
		caption = "mcpbench's own CPU and memory (run with --target-pid to add the server's): CPU near the cores it has means the generator, not the server, sets the pace."
	}
	return &Chart{Name: "resources", Title: "CPU, memory and open files over time", Subtitle: subtitle(res), Panels: panels, Caption: caption}, nil
}

// LatencyPerOp draws the interval p99 and p50 (ms) of each op over time
// (s since the start), one line per op, so a slow op does not hide in
// the mix.
func LatencyPerOp(res *results.Results) (*Chart, error) {
	if len(res.Intervals) == 0 {
		return nil, noData("no intervals (%s)", results.FileIntervals)
	}
	var ops []string
	for _, op := range res.Ops {
		if anyInterval(res, func(iv *results.IntervalRec) bool { return iv.Ops[op].Count > 0 }) {
			ops = append(ops, op)
		}
	}
	if len(ops) < 2 {
		return nil, noData("fewer than two ops completed: the latency chart shows the one")
	}
	p99 := newPanel("p99 per op and interval", "", "response time (ms)")
	p50 := newPanel("p50 per op and interval", "time since start (s)", "response time (ms)")
	shared(res, res.Intervals[len(res.Intervals)-1].T, p99, p50)
	for _, pc := range []struct {
		p   *Panel
		get func(results.IntervalOpRec) float64
	}{{p99, func(o results.IntervalOpRec) float64 { return o.P99 }}, {p50, func(o results.IntervalOpRec) float64 { return o.P50 }}} {
		var ss []series
		var typical []float64
		for i, op := range ops {
			segs := segments(res, func(iv *results.IntervalRec) (float64, bool) {
				o := iv.Ops[op]
				return pc.get(o), pc.get(o) > 0 // none where no op completed: a gap
			})
			for _, s := range segs {
				for _, xy := range s {
					typical = append(typical, xy.Y)
				}
			}
			ss = append(ss, series{legendName(op), segs, lineStyle(colorN(i), 1.5, false)})
		}
		// A log axis when one op's latency is more than 30 times another's
		// typical: a 1 ms echo and a 200 ms progress call both stay legible.
		lo := math.Inf(1)
		for _, s := range ss {
			var v []float64
			for _, seg := range s.segs {
				for _, xy := range seg {
					v = append(v, xy.Y)
				}
			}
			if len(v) > 0 {
				lo = math.Min(lo, stats.Median(v))
			}
		}
		if math.IsInf(lo, 1) {
			lo = stats.Median(typical)
		}
		if err := addAll(pc.p, ss, lo); err != nil {
			return nil, err
		}
	}
	caption := "One line per op: which op's tail moves, and when; an op whose p99 climbs while the others stay flat is the one to look at."
	if isLogY(p99) || isLogY(p50) {
		caption = "One line per op: which op's tail moves, and when. Ops of very different speeds share a log scale here; an op whose p99 climbs while the others stay flat is the one to look at."
	}
	return &Chart{Name: "latency-ops", Title: "Response time per op over time", Subtitle: subtitle(res), Panels: []*Panel{p99, p50},
		Caption: caption}, nil
}
