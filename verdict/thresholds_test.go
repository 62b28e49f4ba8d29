package verdict

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

func sampleSummary() *results.Summary {
	op := func(name string, count, errs int64, p99 float64) results.OpSummary {
		o := results.OpSummary{Name: name, Count: count, Errors: errs, Rate: float64(count) / 10, Response: results.Latency{P50: p99 / 4, P99: p99, Max: 2 * p99}, Service: results.Latency{P99: p99 / 2}}
		if count > 0 {
			o.ErrorRate = float64(errs) / float64(count)
		}
		o.Ledger = &results.LedgerSummary{Streams: count, Verdicts: map[string]int64{"lost": 0}}
		return o
	}
	s := &results.Summary{Ops: []results.OpSummary{op("tools/call:echo", 1000, 0, 12), op("tools/call:slow", 500, 10, 260), op("ping", 200, 0, 1)}}
	s.All = op("all", 1700, 10, 200)
	s.All.Ledger.Verdicts["lost"] = 2
	return s
}

func TestThresholds(t *testing.T) {
	s := sampleSummary()
	tests := []struct {
		expr   string
		pass   bool
		actual float64
	}{
		{"tools/call:echo:p99<200ms", true, 12},
		{"tools/call:p99<200ms", false, 260}, // slow fails: the worst op decides
		{"tools/call:p99<0.3s", true, 260},
		{"p99<=200", true, 200},
		{"error_rate<1%", true, 100 * 10.0 / 1700},
		{"tools/call:slow:error_rate<1%", false, 2},
		{"lost==0", false, 2},
		{"ping:lost==0", true, 0},
		{"rate>=100", true, 170},
		{"tools/call:service_p99<100ms", false, 130},
		{"nosuchop:p99<1ms", false, -1}, // selects nothing: fails, not silently passes
	}
	for _, tt := range tests {
		th, err := ParseThreshold(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		r := CheckThresholds(s, []Threshold{th}, nil)[0]
		if r.Pass != tt.pass || (tt.actual >= 0 && r.Actual != tt.actual) || (tt.actual < 0 && r.Actual != -1) {
			t.Errorf("%s: pass %v actual %v, want %v %v", tt.expr, r.Pass, r.Actual, tt.pass, tt.actual)
		}
	}
	for _, bad := range []string{"p99<", "p99<<3", "latency<3ms", "error_rate<3ms", "errors<3ms", "p99<3%"} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// --fail-if trips on a planted regression and only there.
func TestCompareFailIf(t *testing.T) {
	a := sampleSummary()
	b := sampleSummary()
	b.Ops[0].Response.P99 = 15 // echo p99 12 → 15 ms: +25 %
	b.Ops[1].Rate = 40         // slow rate 50 → 40: −20 %
	cmpd := Compare(a, b)
	check := func(expr string) []string {
		r, err := ParseRegression(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return r.Check(a, b, nil, nil)
	}
	if got := check("tools/call:p99>+10%"); len(got) != 1 || !strings.Contains(got[0], "tools/call:echo: p99 12.00 → 15.00 (+25.0%) crosses") {
		t.Fatalf("p99 regression not caught: %q", got)
	}
	if got := check("tools/call:p99>+30%"); len(got) != 0 {
		t.Fatalf("false alarm: %q", got)
	}
	if got := check("p99>+10%"); len(got) != 0 {
		t.Fatalf("the all row did not change: %q", got)
	}
	if got := check("tools/call:slow:rate<-5%"); len(got) != 1 {
		t.Fatalf("rate drop not caught: %q", got)
	}
	if got := check("tools/call:p99>+2ms"); len(got) != 1 {
		t.Fatalf("absolute p99 regression not caught: %q", got)
	}
	if got := check("error_rate>+0.1pp"); len(got) != 0 {
		t.Fatalf("%q", got)
	}
	for _, bad := range []string{"p99>10%", "p99>+10", "rate>+3ms", "p99>+1pp", "wat>+1%"} {
		if _, err := ParseRegression(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if d := cmpd[0].Deltas[4]; d.Metric != "p99" || d.Abs != 3 || d.Rel != 0.25 {
		t.Fatalf("delta %+v", d)
	}
}
