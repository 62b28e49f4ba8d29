package live

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/results"
	"github.com/prometheus/client_golang/prometheus"
)

// The Prometheus endpoint counts each check's passes and failures,
// interval after interval, as the recorder counted them.
func TestPrometheusCountsChecks(t *testing.T) {
	prom := NewPrometheus()
	reg := prometheus.NewRegistry()
	reg.MustRegister(prom)
	names := []string{"tools/call:echo", "ping"}
	prom.Start(&results.RunInfo{Profile: "p", Target: "http://x/mcp", Started: time.Now(), Ops: names})
	rec := metrics.NewRecorder(names, 1)
	rec.SetChecks([][]string{{`content.0.text != ""`, "is_error == false"}})
	now := time.Now()
	rec.Begin(now, now.Add(time.Second))
	var failed0, failed1 float64
	for sec := range 3 {
		for n := range 50 {
			at := now.Add(time.Duration(sec)*time.Second + time.Duration(n)*time.Millisecond)
			r := &driver.Result{Op: 0, Intended: at, Start: at, End: at.Add(time.Millisecond)}
			r.Checks.Pass(0)
			r.Checks.Pass(1)
			if n%7 == 0 {
				r.Checks.Fail(0, `""`)
				failed0++
			}
			if n%13 == 0 {
				r.Checks.Fail(1, "true")
				failed1++
			}
			rec.Shard(0).Record(r)
			rec.Shard(0).Record(&driver.Result{Op: 1, Intended: at, Start: at, End: at.Add(time.Millisecond)})
		}
		end := now.Add(time.Duration(sec+1) * time.Second)
		iv := rec.Tick(end, end.Add(time.Second))
		prom.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Names: names, Phase: results.PhaseMeasure})
	}
	for _, tc := range []struct {
		check, result string
		want          float64
	}{
		{`content.0.text != ""`, "fail", failed0},
		{`content.0.text != ""`, "pass", 150 - failed0},
		{"is_error == false", "fail", failed1},
		{"is_error == false", "pass", 150 - failed1},
	} {
		if got := gather(t, reg, "mcpbench_checks_total", "op", names[0], "check", tc.check, "result", tc.result); got != tc.want {
			t.Errorf("checks_total{check=%q, result=%s} = %v, want %v", tc.check, tc.result, got, tc.want)
		}
	}
	if got := gather(t, reg, "mcpbench_checks_total", "op", "ping"); got != 0 {
		t.Errorf("ping has no checks, counted %v", got)
	}
}
