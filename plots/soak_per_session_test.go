package plots

import (
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// When the leak verdict judged memory per session held, the soak chart
// draws that series (with the verdict's trend); otherwise it does not.
func TestSoakTrendsPerSessionPanel(t *testing.T) {
	var pts []results.SoakPoint
	for i := 1; i <= 60; i++ {
		n := int64(10 + i)
		pts = append(pts, results.SoakPoint{T: float64(i), Count: 10, P99: 5, TgtMB: 80 + 2*float64(n), TgtFDs: int(n), HasTgt: true, Measure: true, Sessions: n})
	}
	titles := func(sk *results.Soak) []string {
		c, err := SoakTrends(sk, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range c.Panels {
			out = append(out, p.Plot.Title.Text)
		}
		return out
	}
	per := &results.Soak{Points: pts, Pass: true, Verdicts: []results.SoakVerdict{{Name: "target leak", Checked: true, Pass: true,
		Trends: []results.SoakTrend{{Series: results.SoakSeriesRSSPerSession, SlopePerS: -0.001, Intercept: 6, FromS: 20, ToS: 60}}}}}
	if got := titles(per); len(got) != 5 || got[3] != "Target RSS per session open — target leak: PASS" {
		t.Fatalf("panels %q", got)
	}
	per.Verdicts[0].Trends[0].Series = results.SoakSeriesRSS
	if got := titles(per); len(got) != 4 {
		t.Fatalf("panels %q", got)
	}
}
