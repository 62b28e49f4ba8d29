package soak

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// An open-model soak whose sessions grow 5× (10 to 50) against a target
// that holds 2 MB per session and leaks nothing is no leak: its memory
// per session held does not grow. The same target leaking 2.5 MB/s
// besides fails, and so does a leak with the sessions held constant.
func TestTargetLeakPerSessionHeld(t *testing.T) {
	hyg := &results.Summary{}
	leakOf := func(sessions func(t float64) float64, rss func(t, n float64) float64) results.SoakVerdict {
		ps := soakPoints(func(float64) float64 { return 5 }, func(float64) float64 { return 0 })
		for i := range ps {
			n := sessions(ps[i].T)
			ps[i].Sessions = int64(n)
			ps[i].TgtMB = rss(ps[i].T, float64(ps[i].Sessions))
			ps[i].TgtFDs = 10 + int(ps[i].Sessions) // a connection per session
		}
		for _, v := range Verdicts(ps, hyg).Verdicts {
			if v.Name == "target leak" {
				return v
			}
		}
		t.Fatal("no target leak verdict")
		return results.SoakVerdict{}
	}
	growing := func(t float64) float64 { return 10 + 40*t/600 }
	perSession := func(_, n float64) float64 { return 80 + 2*n }

	v := leakOf(growing, perSession)
	if !v.Checked || !v.Pass || v.Unit != "MB/h per session" || !strings.Contains(v.Detail, "per session open (23 to 50 sessions") {
		t.Fatalf("sessions that grow 5× judged a leak: %+v", v)
	}
	if len(v.Trends) != 2 || v.Trends[0].Series != results.SoakSeriesRSSPerSession || v.Trends[0].SlopePerS > 0 {
		t.Fatalf("trends %+v", v.Trends)
	}

	v = leakOf(growing, func(t, n float64) float64 { return perSession(t, n) + 2.5*t })
	if !v.Checked || v.Pass {
		t.Fatalf("a leak with growing sessions passed: %+v", v)
	}

	// Constant sessions: judged per process as before (the limits are
	// the same per session).
	v = leakOf(func(float64) float64 { return 30 }, func(t, n float64) float64 { return perSession(t, n) + 2.5*t })
	if !v.Checked || v.Pass || v.Unit != "MB/h" || !strings.Contains(v.Detail, "+9000.0 MB/h") {
		t.Fatalf("a leak with constant sessions: %+v", v)
	}
	if v = leakOf(func(float64) float64 { return 30 }, perSession); !v.Checked || !v.Pass {
		t.Fatalf("a constant target failed: %+v", v)
	}
}
