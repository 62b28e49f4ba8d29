package verdict

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
)

// The help text lists every registered metric (so run --help and the
// README, which print MetricNames, name exactly what is checked above).
func TestMetricNamesListEveryMetric(t *testing.T) {
	all := strings.Join(MetricNames(), "\n")
	for _, d := range metricDefs {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(d.name) + ` `).MatchString(all) {
			t.Errorf("MetricNames lacks %s", d.name)
		}
	}
}

// Scopes, k6's p(NN), arbitrary percentiles and unknown names.
func TestThresholdScopesAndPercentiles(t *testing.T) {
	s := fixture.PrintedSummary()
	q := fakeQuantiles{"all/response/95": 4.5, "tools/call:echo/response/99.99": 9.25}
	tests := []struct {
		expr   string
		pass   bool
		actual float64
	}{
		{"deleted-session-accepted==0", false, 19},
		{"sessions:wrong-missing-session-status==0", false, 12},
		{"get:lost==0", false, 100},
		{"post:lost==0", false, 60},
		{"lost==0", false, 160},
		{"cross-stream<200", true, 166},
		{"p(95)<5ms", true, 4.5},
		{"p95<4ms", false, 4.5},
		{"tools/call:echo:p99.99<9ms", false, 9.25},
		{"p99.999<1s", false, -1}, // no data anywhere: fails, not passes
		{"dropped_rate<1%", false, 100 * float64(21) / float64(300+21+6)},
		{"storm_recovery_s<5", true, 4.5},
	}
	for _, tt := range tests {
		th, err := ParseThreshold(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		r := CheckThresholds(s, []Threshold{th}, q)[0]
		if r.Pass != tt.pass || math.Abs(r.Actual-tt.actual) > 1e-9 {
			t.Errorf("%s: pass %v actual %v, want %v %v", tt.expr, r.Pass, r.Actual, tt.pass, tt.actual)
		}
	}
	for _, bad := range []string{"latency<3", "sessions:p99<3", "get:rate>1", "ping:deleted-session-accepted==0", "p(101)<3"} {
		_, err := ParseThreshold(bad)
		if err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	_, err := ParseThreshold("latency<3")
	if err == nil || !strings.Contains(err.Error(), "valid metrics: p50") || !strings.Contains(err.Error(), "silent-resume") {
		t.Errorf("unknown metric error does not list the valid names: %v", err)
	}
}

type fakeQuantiles map[string]float64

func (f fakeQuantiles) Quantile(op, kind string, q float64) (float64, bool) {
	v, ok := f[op+"/"+kind+"/"+strconv.FormatFloat(q, 'f', -1, 64)]
	return v, ok
}
