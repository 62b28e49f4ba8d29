package plots

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// ciSweep is the recorded rate sweep with intervals, a knee and a
// marginal step, as the statistics give them now.
func ciSweep(t *testing.T) *results.Sweep {
	sw := readSweep(t, "sweep-rate.json")
	for i := range sw.Results {
		s := &sw.Results[i]
		s.P99CI = &results.CI{Lo: s.Latency.P99 * 0.85, Hi: s.Latency.P99 * 1.2}
		s.ErrorRateCI = &results.CI{Lo: s.ErrorRate * 0.5, Hi: s.ErrorRate*1.5 + 0.0001}
	}
	sw.Results[0].Marginal = true
	sw.Repeat = 2
	sw.Results[1].Repeats = []results.SweepRepeat{{Dir: "step-02", Achieved: 1571, P99: 2.9}, {Dir: "step-02-r2", Achieved: 1570, P99: 3.1}}
	v := &sw.Verdict
	v.Knee, v.KneeStep, v.KneeRate, v.KneeCI, v.KneeBaseline, v.KneeThreshold = 3900, 4, 3899, &results.CI{Lo: 3500, Hi: 4400}, 3.1, 8
	v.Crossing = &results.Bracket{Lo: 5080, Hi: 5200, LoStep: 6, HiStep: 9}
	v.NonMonotone = []string{"step 9 at 5200 ops/s achieved 4000.0 ops/s, less than step 6 at 5080 ops/s (5080.0 ops/s)"}
	v.Hysteresis = "step 10 re-ran 5080 ops/s after the overload and failed (p99 80.00 ms > 50.00 ms), though an earlier step passed at that load: the server did not recover"
	v.CoolDowns, v.CoolDownS, v.Unsettled = 2, 31.5, 1
	sw.Results[len(sw.Results)-1].Dropped = 5456
	v.Confidence = "sure: step 6's p99 interval (22.1–31.2 ms) lies under the SLO's 50 ms and step 9's (1100–1560 ms) above it"
	return sw
}

func TestSweepHTMLReport(t *testing.T) {
	sw := ciSweep(t)
	var b bytes.Buffer
	if err := SweepHTMLReport(&b, sw); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<section id="verdict">`, `<section id="steps">`, `<section id="charts">`, `<section id="sweep">`,
		"Maximum sustainable rate", "Knee: 3900 ops/s (95% CI 3500–4400), 3899.0 ops/s achieved", "p99 reaches 8.000 ms there, its low-load baseline of 3.100 ms",
		"5080 ops/s (step 6, passed) and 5200 ops/s (step 9, failed)", "sure: step 6",
		`<p class="vline whead">WARNING W-SWEEP-NONMONOTONE: 1 step(s) achieved less than a step at a lower load: step 9 at 5200 ops/s achieved 4000.0 ops/s`,
		`<p class="vline whead">WARNING W-SWEEP-HYSTERESIS: step 10 re-ran 5080 ops/s`,
		`<p class="vline">Cool-downs: 2 between steps, 31.5 s in all; 1 not back to the baseline when the time was up (WARNING W-SWEEP-COOLDOWN below)`,
		`<p class="vline wremedy">remedy: the server stays slow after an overload`, `<p class="vline wremedy">remedy: longer steps`, `id="warning-w-sweep-cooldown"`,
		"<td class=\"bad\">5\u202f456</td>", `<table id="dropped-table">`, `<figure id="chart-capacity-latency">`, `<figure id="chart-capacity-errors">`,
		`<figure id="chart-capacity-resources">`, "<figcaption>Follow p99 to where it crosses the dashed SLO line", "marginal",
		"2 runs: 1571.0/s p99 2.900 ms · 1570.0/s p99 3.100 ms", "capacity-memory: not a session sweep",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("sweep report lacks %q", want)
		}
	}
	if n := strings.Count(page, `<tr><td>`); n != len(sw.Results) {
		t.Errorf("%d step rows, want %d", n, len(sw.Results))
	}
	if err := checkNesting(page); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"<script", "<link", "<img", `src="`} {
		if strings.Contains(page, bad) {
			t.Errorf("sweep report contains %q", bad)
		}
	}
}

func TestSoakHTMLReport(t *testing.T) {
	res := fixture()
	sk := &results.Soak{DurationS: 9, Pass: false, Verdicts: []results.SoakVerdict{
		{Name: "latency drift", Checked: true, Pass: true, Value: 1.5, Unit: "ms/h", Detail: "interval p99 slope +1.50 ms/h",
			Trends: []results.SoakTrend{{Series: results.SoakSeriesP99, SlopePerS: 0.01, Intercept: 110, FromS: 3, ToS: 11}}},
		{Name: "correctness drift", Checked: true, Pass: false, Value: 3, Unit: "faulty streams", Detail: "3 of 180 response streams faulty"},
		{Name: "target leak", Checked: true, Pass: true, Value: 2, Unit: "MB/h", Detail: "RSS +2.0 MB/h",
			Trends: []results.SoakTrend{{Series: results.SoakSeriesRSS, SlopePerS: 1.5, Intercept: 80, FromS: 5, ToS: 11}}},
		{Name: "session hygiene", Detail: "not checked: no deleted session was probed"},
	}}
	for _, iv := range res.Intervals {
		p := results.SoakPoint{T: iv.T, Count: iv.All.Count, P99: iv.All.P99, Errors: iv.All.Errors, Measure: iv.Phase == results.PhaseMeasure}
		if iv.Target != nil {
			p.HasTgt, p.TgtMB, p.TgtFDs = true, iv.Target.RSSMB, iv.Target.FDs
		}
		sk.Points = append(sk.Points, p)
	}
	sk.Points[5].Faulty = 3
	var b bytes.Buffer
	if err := SoakHTMLReport(&b, res, sk); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<section id="soak">`, `<a href="#soak">`, `<figure id="chart-soak-trends">`, "3 of 180 response streams faulty",
		"<figcaption>The dashed red lines are the robust", `<section id="summary">`, `<figure id="chart-latency">`} {
		if !strings.Contains(page, want) {
			t.Errorf("soak report lacks %q", want)
		}
	}
	if n := strings.Count(page, `<td class="name">latency drift`) + strings.Count(page, `<td class="name">session hygiene`); n != 2 {
		t.Errorf("verdict rows: %d", n)
	}
	if err := checkNesting(page); err != nil {
		t.Error(err)
	}
	// A run's report has no soak section.
	if strings.Contains(htmlOf(t, false), `id="soak"`) {
		t.Error("a run's report has a soak section")
	}
}

func TestSoakTrendsChart(t *testing.T) {
	if _, err := SoakTrends(&results.Soak{}, ""); !isNoData(err) {
		t.Fatalf("empty soak: %v", err)
	}
}

// The soak page's "Soak:" line is styled by its word: PASS (or OK) green,
// WARN amber, FAIL red, anything not judged (NONE) grey. WARN read green
// (class "pass") before.
func TestSoakHTMLVerdictStyle(t *testing.T) {
	res := fixture()
	for _, tt := range []struct {
		verdict string
		pass    bool
		want    string
	}{
		{"OK", true, `Soak: <span class="pass">OK</span>`},
		{"WARN", true, `Soak: <span class="warn">WARN</span>`},
		{"FAIL", false, `Soak: <span class="fail">FAIL</span>`},
		{"NONE", false, `Soak: <span class="notjudged">NONE</span>`},
		{"", true, `Soak: <span class="pass">PASS</span>`}, // a soak.json without its verdict recorded
		{"", false, `Soak: <span class="fail">FAIL</span>`},
	} {
		sk := &results.Soak{DurationS: 9, Pass: tt.pass, Verdict: tt.verdict, Verdicts: []results.SoakVerdict{{Name: "latency drift", Checked: true, Pass: tt.pass}}}
		var b bytes.Buffer
		if err := SoakHTMLReport(&b, res, sk); err != nil {
			t.Fatal(err)
		}
		if page := b.String(); strings.Count(page, tt.want) != 1 || strings.Count(page, "Soak: <span") != 1 {
			i := strings.Index(page, "Soak: ")
			t.Errorf("verdict %q pass %v: want %q once, got %.80q", tt.verdict, tt.pass, tt.want, page[max(i, 0):])
		}
	}
	var b bytes.Buffer
	if err := SoakHTMLReport(&b, res, &results.Soak{Verdict: "WARN"}); err != nil {
		t.Fatal(err)
	}
	for _, css := range []string{".warn { color: #b35c00;", ".notjudged { color: var(--muted);", ".pass { color: var(--ok);", ".fail { color: var(--bad);"} {
		if !strings.Contains(b.String(), css) {
			t.Errorf("the page's style lacks %q", css)
		}
	}
}
