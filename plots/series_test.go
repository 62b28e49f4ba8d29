package plots

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
	"gonum.org/v1/plot/plotter"
)

// The charts' series checked against the numbers of real short runs'
// results directories, not pixels. testdata/run-errors-drops is
// `mcpbench run --profile testdata/errors-drops.yaml` (open model past
// what its 4 VUs serve, a share of failing calls: errors and drops);
// testdata/soak-short is `mcpbench soak --duration 4s --warmup 2s`. Both
// ran against the embedded server.

func readRun(t *testing.T, dir string) *results.Results {
	t.Helper()
	res, err := results.ReadResults("testdata/" + dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary == nil || len(res.Intervals) < 3 {
		t.Fatalf("%s: no summary or too few intervals", dir)
	}
	return res
}

// seriesOf returns the panel's series of that legend name, failing t
// when there is none.
func seriesOf(t *testing.T, p *Panel, name string) []plotter.XYs {
	t.Helper()
	for _, s := range p.drawn {
		if s.name == name {
			return s.segs
		}
	}
	var names []string
	for _, s := range p.drawn {
		names = append(names, s.name)
	}
	t.Fatalf("panel %q has no series %q (has %q)", p.Plot.Title.Text, name, names)
	return nil
}

func panelTitled(t *testing.T, c *Chart, prefix string) *Panel {
	t.Helper()
	for _, p := range c.Panels {
		if strings.HasPrefix(p.Plot.Title.Text, prefix) {
			return p
		}
	}
	t.Fatalf("%s: no panel titled %q…", c.Name, prefix)
	return nil
}

func total(segs []plotter.XYs) float64 {
	sum := 0.0
	for _, s := range segs {
		for _, xy := range s {
			sum += xy.Y
		}
	}
	return sum
}

// The VU line holds the VUs that ran to the end of the measured window:
// the row intervals.csv writes once the load has stopped (VUs 0) is not
// drawn as a fall to 0 inside the last measured second.
func TestVULineHoldsToTheEnd(t *testing.T) {
	res := readRun(t, "run-errors-drops")
	s := res.Summary
	last := res.Intervals[len(res.Intervals)-1]
	if last.VUs != 0 || last.T < s.WarmupS+s.DurationS {
		t.Fatalf("the fixture's last row should be the one written after the stop (VUs 0, at or after %.3f s): %+v", s.WarmupS+s.DurationS, last)
	}
	c, err := LoadOverTime(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"VUs", "sessions"} {
		segs := seriesOf(t, c.Panels[0], name)
		pts := segs[len(segs)-1]
		end := pts[len(pts)-1]
		if end.Y != float64(s.VUs) {
			t.Errorf("%s: the line ends at %v, want the %d VUs of the run (summary.json)", name, end.Y, s.VUs)
		}
		for _, seg := range segs {
			for _, xy := range seg {
				if xy.Y == 0 && xy.X > s.WarmupS {
					t.Errorf("%s falls to 0 at %.3f s, inside the measured window", name, xy.X)
				}
			}
		}
	}
}

// The errors panel plots errors only, and adds up to the summary's
// errors; drops have a panel of their own that adds up to the summary's
// dropped.
func TestErrorsAndDropsAddUpToTheSummary(t *testing.T) {
	res := readRun(t, "run-errors-drops")
	s := res.Summary
	if s.All.Errors == 0 || s.Dropped == 0 {
		t.Fatalf("the fixture should have errors and drops: %d, %d", s.All.Errors, s.Dropped)
	}
	c, err := ThroughputErrors(res)
	if err != nil {
		t.Fatal(err)
	}
	ep := panelTitled(t, c, "Errors per interval")
	var errs float64
	for _, d := range ep.drawn {
		if strings.Contains(d.name, "drop") {
			t.Errorf("the errors panel plots %q", d.name)
		}
		errs += total(d.segs)
	}
	if errs != float64(s.All.Errors) {
		t.Errorf("errors panel adds up to %v, summary.json has %d errors", errs, s.All.Errors)
	}
	dp := panelTitled(t, c, "Dropped arrivals per interval")
	if got := total(seriesOf(t, dp, "dropped")); got != float64(s.Dropped) {
		t.Errorf("drops panel adds up to %v, summary.json has %d dropped", got, s.Dropped)
	}
	for class, n := range s.All.ErrorsByClass {
		if got := total(seriesOf(t, ep, class)); got != float64(n) {
			t.Errorf("%s errors add up to %v, summary.json has %d", class, got, n)
		}
	}
}

// Every point of every chart over time sits at the middle of an interval
// of intervals.csv (one rule for every panel of a report), and the soak
// chart's points at the middles of its run's intervals.
func TestChartsShareXPositions(t *testing.T) {
	check := func(t *testing.T, res *results.Results, c *Chart) {
		var mids []float64
		for _, iv := range res.Intervals {
			mids = append(mids, iv.T-iv.Interval/2)
		}
		isMid := func(x float64) bool { // intervals.csv rounds to the ms
			for _, m := range mids {
				if math.Abs(x-m) < 1e-3 {
					return true
				}
			}
			return false
		}
		n := 0
		for _, p := range c.Panels {
			for _, d := range p.drawn {
				if strings.HasSuffix(d.name, " cores") || strings.HasPrefix(d.name, "trend") {
					continue // a level and fitted lines, not samples
				}
				for _, seg := range d.segs {
					for _, xy := range seg {
						n++
						if !isMid(xy.X) {
							t.Errorf("%s: %q %q has a point at x=%.6f, not an interval's middle", c.Name, p.Plot.Title.Text, d.name, xy.X)
						}
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no points", c.Name)
		}
	}
	res := readRun(t, "run-errors-drops")
	items, err := Charts(res, Options{PerOp: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Chart == nil || it.Name == "spectrum" || it.Name == "time-to-resume" { // not over time
			continue
		}
		check(t, res, it.Chart)
	}
	soakRes := readRun(t, "soak-short")
	sk, err := results.ReadSoak("testdata/soak-short")
	if err != nil {
		t.Fatal(err)
	}
	c, err := SoakTrends(sk, "")
	if err != nil {
		t.Fatal(err)
	}
	check(t, soakRes, c)
}

// The soak chart shades the warm-up, up to the summary's warm-up, on
// every panel.
func TestSoakChartShadesWarmUp(t *testing.T) {
	res := readRun(t, "soak-short")
	sk, err := results.ReadSoak("testdata/soak-short")
	if err != nil {
		t.Fatal(err)
	}
	c, err := SoakTrends(sk, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Panels {
		if len(p.shaded) != 1 || p.shaded[0].X0 != 0 || math.Abs(p.shaded[0].X1-res.Summary.WarmupS) > 0.05 {
			t.Errorf("%q: shaded %+v, want the warm-up 0–%.1f s", p.Plot.Title.Text, p.shaded, res.Summary.WarmupS)
		}
	}
}

// The CPU panel shows the cores mcpbench may use as a line the axis
// reaches, says when its line includes the embedded server, and draws
// intervals.csv's self_cores.
func TestCPUPanelShowsTheCores(t *testing.T) {
	res := readRun(t, "run-errors-drops")
	g := res.Summary.Generator
	cores := g.NumCPU
	if g.GOMAXPROCS > 0 && g.GOMAXPROCS < cores {
		cores = g.GOMAXPROCS
	}
	if cores == 0 || !g.IncludesServer {
		t.Fatalf("fixture: %d cores, includes server %v", cores, g.IncludesServer)
	}
	c, err := ResourcesOverTime(res)
	if err != nil {
		t.Fatal(err)
	}
	cpu := panelTitled(t, c, "CPU per interval")
	if title := cpu.Plot.Title.Text; !strings.Contains(title, fmt.Sprintf("%d cores", cores)) || !strings.Contains(title, "includes the embedded server") {
		t.Errorf("CPU panel title %q", title)
	}
	level := seriesOf(t, cpu, fmt.Sprintf("%d cores", cores))
	for _, xy := range level[0] {
		if xy.Y != float64(cores) {
			t.Errorf("cores line at %v", xy.Y)
		}
	}
	if cpu.Plot.Y.Max < float64(cores) {
		t.Errorf("CPU axis tops at %v, below the %d cores", cpu.Plot.Y.Max, cores)
	}
	self := seriesOf(t, cpu, "mcpbench + embedded server")
	i := 0
	for _, iv := range res.Intervals {
		if iv.Interval < 0.5 {
			continue
		}
		if i >= len(self[0]) || self[0][i].Y != iv.Self.Cores {
			t.Fatalf("CPU line differs from intervals.csv's self_cores at row %d: %v", i, self[0])
		}
		i++
	}
}

// A caption that speaks of a log scale goes with a log axis, and the
// per-op chart says so when its axis turned log (and not otherwise).
func TestCaptionsTellTheScale(t *testing.T) {
	res := readRun(t, "run-errors-drops")
	// One op 100 times slower: the per-op chart must turn log.
	slow := *res
	slow.Intervals = make([]results.IntervalRec, len(res.Intervals))
	for i, iv := range res.Intervals {
		ops := map[string]results.IntervalOpRec{}
		for k, o := range iv.Ops {
			if k == "tools/call:slow" {
				o.P50, o.P99 = 100*o.P50, 100*o.P99
			}
			ops[k] = o
		}
		iv.Ops = ops
		slow.Intervals[i] = iv
	}
	logs := 0
	for _, r := range []*results.Results{res, &slow, fixture()} {
		items, err := Charts(r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Chart == nil {
				continue
			}
			anyLog := false
			for _, p := range it.Chart.Panels {
				anyLog = anyLog || isLogY(p)
			}
			says := strings.Contains(it.Chart.Caption, "log scale")
			if says && !anyLog {
				t.Errorf("%s: the caption speaks of a log scale, every axis is linear: %s", it.Name, it.Chart.Caption)
			}
			if it.Name == "latency-ops" {
				if anyLog != says {
					t.Errorf("latency-ops: log axis %v, caption says log %v: %s", anyLog, says, it.Chart.Caption)
				}
				if anyLog {
					logs++
				}
			}
		}
	}
	if logs == 0 {
		t.Error("no per-op chart turned log: the test did not check the log caption")
	}
}

// On a log axis the spectrum labels its top tick, so the axis says how
// high it reaches.
func TestSpectrumLabelsItsTopTick(t *testing.T) {
	res := readRun(t, "run-errors-drops")
	c, err := Spectrum(res)
	if err != nil {
		t.Fatal(err)
	}
	y := c.Panels[0].Plot.Y
	if !isLogY(c.Panels[0]) {
		t.Fatal("the fixture's spectrum should be on a log axis")
	}
	var top string
	for _, tk := range y.Tick.Marker.Ticks(y.Min, y.Max) {
		if math.Abs(tk.Value-y.Max) < 1e-9 {
			top = tk.Label
		}
	}
	maxMS := float64(res.Histograms[results.HlogTag("tools/call:slow")+".response"].Max()) / 1000
	if top == "" {
		t.Fatalf("no labelled tick at the top of the axis (%v)", math.Pow(10, y.Max))
	}
	if v := math.Pow(10, y.Max); v < maxMS {
		t.Errorf("the axis tops at %v ms (labelled %q), below the slowest op's max %v ms", v, top, maxMS)
	}
}

// A ledger column's op name wraps between its parts, escaped, so a long
// name stays in its column (scripts/check-html.sh checks the rendered
// headers in Chromium).
func TestLedgerHeaderWrapsBetweenParts(t *testing.T) {
	if got, want := string(wrapName("resources/read:<x>://a")), "resources/<wbr>read:<wbr>&lt;x&gt;:<wbr>/<wbr>/<wbr>a"; got != want {
		t.Errorf("wrapName = %q, want %q", got, want)
	}
	var b strings.Builder
	res := readRun(t, "run-errors-drops")
	if err := HTMLReport(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<th class="v">tools/<wbr>call:<wbr>slow</th>`) {
		t.Error("the ledger's header of tools/call:slow does not wrap between its parts")
	}
}
