package plots

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plots -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		// Show the first differing line, not 100 kB of SVG.
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < min(len(gl), len(wl)); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test ./plots -update if the change is intended, and look at the SVG)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: got %d lines, want %d (go test ./plots -update)", path, len(gl), len(wl))
	}
}

func svgOf(t *testing.T, c *Chart) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGoldenSVG(t *testing.T) {
	res := fixture()
	crashed := closedNoResumes()
	tests := []struct {
		file  string
		chart func() (*Chart, error)
	}{
		{"latency.svg", func() (*Chart, error) { return LatencyOverTime(res, "") }},
		{"latency-op.svg", func() (*Chart, error) { return LatencyOverTime(res, opLong) }},
		{"throughput.svg", func() (*Chart, error) { return ThroughputErrors(res) }},
		{"spectrum.svg", func() (*Chart, error) { return Spectrum(res) }},
		{"resumes.svg", func() (*Chart, error) { return ResumesReconnects(res) }},
		{"time-to-resume.svg", func() (*Chart, error) { return TimeToResume(res) }},
		{"latency-ops.svg", func() (*Chart, error) { return LatencyPerOp(res) }},
		{"load.svg", func() (*Chart, error) { return LoadOverTime(res) }},
		{"resources.svg", func() (*Chart, error) { return ResourcesOverTime(res) }},
		{"crashed-resources.svg", func() (*Chart, error) { return ResourcesOverTime(crashed) }},
		{"crashed-latency.svg", func() (*Chart, error) { return LatencyOverTime(crashed, "") }},
		{"crashed-spectrum.svg", func() (*Chart, error) { return Spectrum(crashed) }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := tt.chart()
			if err != nil {
				t.Fatal(err)
			}
			got := svgOf(t, c)
			// Byte-stable: a second chart from the same data draws the same.
			c2, _ := tt.chart()
			if again := svgOf(t, c2); !bytes.Equal(got, again) {
				t.Fatal("two renderings of the same chart differ")
			}
			if !bytes.Contains(got, []byte("font-family:'Liberation Sans',Arial")) {
				t.Error("SVG text has no font fallback")
			}
			golden(t, tt.file, got)
		})
	}
}

// A chart drawn once as PNG draws the same SVG after (WriteCharts draws
// both from one Chart).
func TestDrawTwice(t *testing.T) {
	c, err := ThroughputErrors(fixture())
	if err != nil {
		t.Fatal(err)
	}
	first := svgOf(t, c)
	if err := c.WritePNG(io.Discard); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, svgOf(t, c)) {
		t.Error("the SVG changed after drawing the PNG")
	}
}

func TestChartsSkipWhatHasNoData(t *testing.T) {
	items, err := Charts(closedNoResumes(), Options{PerOp: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range items {
		if (it.Chart == nil) == (it.Skipped == "") {
			t.Errorf("%s: chart %v, skipped %q: want exactly one", it.Name, it.Chart != nil, it.Skipped)
		}
		got[it.Name] = it.Skipped
	}
	want := map[string]string{
		"latency":                     "",
		"latency-" + fileSafe(opEcho): "",
		"latency-ops":                 "fewer than two ops completed: the latency chart shows the one",
		"throughput":                  "",
		"load":                        "",
		"resources":                   "",
		"spectrum":                    "",
		"resumes":                     "no stream was resumed or reconnected",
		"time-to-resume":              "no stream was resumed",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("charts (-want +got):\n%s", d)
	}
}

func TestChartsNoIntervals(t *testing.T) {
	res := closedNoResumes()
	res.Intervals = nil
	res.Histograms = nil
	for name, f := range map[string]func(*results.Results) (*Chart, error){
		"latency":        func(r *results.Results) (*Chart, error) { return LatencyOverTime(r, "") },
		"throughput":     ThroughputErrors,
		"spectrum":       Spectrum,
		"resumes":        ResumesReconnects,
		"time-to-resume": TimeToResume,
		"latency-ops":    LatencyPerOp,
		"load":           LoadOverTime,
		"resources":      ResourcesOverTime,
	} {
		if _, err := f(res); !errors.Is(err, ErrNoData) {
			t.Errorf("%s: err = %v, want ErrNoData", name, err)
		}
	}
	if _, err := LatencyOverTime(fixture(), "no such op"); err == nil || errors.Is(err, ErrNoData) {
		t.Errorf("unknown op: err = %v, want an error that is not ErrNoData", err)
	}
}

func TestWriteCharts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots")
	out, err := WriteCharts(dir, closedNoResumes(), Options{Formats: PNG | SVG})
	if err != nil {
		t.Fatal(err)
	}
	var files, skipped []string
	for _, o := range out {
		files = append(files, o.Files...)
		if o.Skipped != "" {
			skipped = append(skipped, o.Name)
		}
	}
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	if d := cmp.Diff([]string{"latency.png", "latency.svg", "throughput.png", "throughput.svg", "load.png", "load.svg", "resources.png", "resources.svg",
		"spectrum.png", "spectrum.svg"}, files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"latency-ops", "resumes", "time-to-resume"}, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	f, err := os.Open(filepath.Join(dir, "latency.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != int(DefaultWidth/vg.Inch*PNGDPI) {
		t.Errorf("latency.png is %d px wide, want %d", b.Dx(), int(DefaultWidth/vg.Inch*PNGDPI))
	}

	out, err = WriteCharts(dir, closedNoResumes(), Options{Formats: SVG})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Files; len(got) != 1 || !strings.HasSuffix(got[0], ".svg") {
		t.Errorf("SVG only: files %v", got)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"png": PNG, "SVG": SVG, "both": PNG | SVG, "": PNG | SVG} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil {
		t.Error("ParseFormat(pdf): no error")
	}
}

func TestNinesTicks(t *testing.T) {
	var labelled []string
	minor := 0
	for _, tk := range (NinesTicks{}).Ticks(0, 4) {
		if tk.Label != "" {
			labelled = append(labelled, tk.Label)
		} else {
			minor++
		}
	}
	if d := cmp.Diff([]string{"0%", "90%", "99%", "99.9%", "99.99%"}, labelled); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if minor != 4*8 {
		t.Errorf("%d minor ticks, want 32", minor)
	}
	for nines, want := range map[float64]string{0: "0%", math.Log10(2): "50%", 1: "90%", 2: "99%", 6: "99.9999%", -1: ""} {
		if got := NinesLabel(nines); got != want {
			t.Errorf("NinesLabel(%g) = %q, want %q", nines, got, want)
		}
	}
}

func TestLinearTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{0, 7.06, []string{"0", "2", "4", "6"}},
		{0, 525, []string{"0", "100", "200", "300", "400", "500"}},
		{98.5, 111, []string{"100", "102", "104", "106", "108", "110"}},
		{0, 0.9, []string{"0", "0.2", "0.4", "0.6", "0.8"}},
		{0, 12.5, []string{"0", "2", "4", "6", "8", "10", "12"}},
		{0, 17, []string{"0", "2.5", "5.0", "7.5", "10.0", "12.5", "15.0"}},
		{0, 0.0042, []string{"0", "0.001", "0.002", "0.003", "0.004"}},
	}
	for _, tt := range tests {
		var got []string
		for _, tk := range (linearTicks{}).Ticks(tt.lo, tt.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("Ticks(%g, %g) (-want +got):\n%s", tt.lo, tt.hi, d)
		}
	}
}

func TestLegendName(t *testing.T) {
	if got := legendName("ping"); got != "ping" {
		t.Errorf("short name changed: %q", got)
	}
	if got := legendName("resources/read:mcpbench://static/small"); got != "resources/read:mcpbench://static/small" {
		t.Errorf("a 38-rune op name shortened: %q", got)
	}
	// A long name keeps its method whole and the end of the rest.
	got := legendName("resources/read:mcpbench://static/files/reports/2026/small item")
	if n := len([]rune(got)); n > 40 || !strings.HasPrefix(got, "resources/read:…") || !strings.HasSuffix(got, "/2026/small item") || strings.Contains(got, "…/") {
		t.Errorf("legendName = %q (%d runes)", got, n)
	}
	// Without a method, both ends.
	got = legendName(strings.Repeat("a", 30) + strings.Repeat("b", 30))
	if n := len([]rune(got)); n != 40 || !strings.HasPrefix(got, "aaaa") || !strings.HasSuffix(got, "bbbb") {
		t.Errorf("legendName = %q (%d runes)", got, n)
	}
}

// The ticker is usable on its own on a gonum axis.
var _ plot.Ticker = NinesTicks{}

func readSweep(t *testing.T, name string) *results.Sweep {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var sw results.Sweep
	if err := json.Unmarshal(data, &sw); err != nil {
		t.Fatal(err)
	}
	return &sw
}

// Capacity charts of two recorded sweeps: a rate sweep of the reference
// server with refinement steps (run after higher loads), and a session
// sweep.
func TestGoldenSweepSVG(t *testing.T) {
	rate, sessions := readSweep(t, "sweep-rate.json"), readSweep(t, "sweep-sessions.json")
	tests := []struct {
		file  string
		chart func() (*Chart, error)
	}{
		{"capacity-latency.svg", func() (*Chart, error) { return CapacityLatency(rate) }},
		{"capacity-errors.svg", func() (*Chart, error) { return CapacityErrors(rate) }},
		{"capacity-resources.svg", func() (*Chart, error) { return CapacityResources(rate) }},
		{"capacity-memory.svg", func() (*Chart, error) { return CapacityMemory(sessions) }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := tt.chart()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, svgOf(t, c))
		})
	}
	if _, err := CapacityMemory(rate); !errors.Is(err, ErrNoData) {
		t.Errorf("memory per session of a rate sweep: %v, want ErrNoData", err)
	}
}

// Lines run left to right: refinement steps (run last) are sorted in, and
// an interrupted (partial) step is left out.
func TestSweepStepsSorted(t *testing.T) {
	sw := &results.Sweep{Results: []results.SweepStep{
		{N: 1, Value: 500, Achieved: 500}, {N: 2, Value: 1500, Achieved: 1400}, {N: 3, Value: 1000, Achieved: 1000},
		{N: 4, Value: 1250, Achieved: 1250, Interrupted: true},
	}}
	var got []int
	for _, s := range finished(sw, offered) {
		got = append(got, s.N)
	}
	if diff := cmp.Diff([]int{1, 3, 2}, got); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	if s := stepByN(sw, 3); s == nil || s.Value != 1000 {
		t.Fatalf("stepByN(3) = %+v", s)
	}
}

// A step that dropped 27 % of its arrivals and had no error: the errors
// chart draws the drops (its y axis reaches 27 %, a "dropped" series),
// where it read 0 % before.
func TestCapacityErrorsShowsDrops(t *testing.T) {
	sw := &results.Sweep{By: "rate", SLO: results.SLO{P99MS: 50, ErrorRate: 0.01}, Results: []results.SweepStep{
		{N: 1, By: "rate", Value: 500, Achieved: 500, Count: 5000, Pass: true},
		{N: 2, By: "rate", Value: 1000, Achieved: 730, Count: 7300, Dropped: 2700},
		{N: 3, By: "rate", Value: 500, Achieved: 500, Count: 5000, Recheck: true, Dropped: 5000},
	}}
	c, err := CapacityErrors(sw)
	if err != nil {
		t.Fatal(err)
	}
	if y := c.Panels[0].Plot.Y.Max; math.Abs(y-27*1.1) > 1e-9 {
		t.Fatalf("y axis up to %v %%, want 29.7 (27 %% dropped, and the re-check left out)", y)
	}
	if svg := string(svgOf(t, c)); !strings.Contains(svg, ">dropped<") {
		t.Fatal("no dropped series in the legend")
	}
	if got := droppedPct(sw.Results[1]); got != 27 {
		t.Fatalf("dropped %v %%", got)
	}
}
