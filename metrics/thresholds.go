package metrics

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
)

// A threshold is a pass/fail criterion on the summary, written
//
//	[OP:]METRIC CMP VALUE[UNIT]
//
// OP selects the ops it applies to: an op name ("tools/call:echo") or a
// method ("tools/call" matches every tools/call:*); without OP it applies
// to all ops together. Every selected op must pass. METRIC is one of:
//
//	p50 p90 p99 p99.9 max mean      response time (ms)
//	service_p50 … service_max       service time (ms)
//	ttfb_p50 … ttfb_max             time to first byte (ms)
//	resume_p50 … resume_max         time to resume a broken stream (ms)
//	error_rate                      errors / ops (%)
//	errors  count  dropped  reinits  reissues  early_reconnects
//	rate                            completed ops/s
//	lost duplicated reordered cross-stream unterminated unresumable
//	                                replay-ledger verdict counts
//
// CMP is < <= > >= == or !=; UNIT is ms, s or us for times (default ms),
// % for error_rate (default %), none for counts and rates. Examples:
// "tools/call:p99<200ms", "error_rate<1%", "lost==0", "rate>=950".
type Threshold struct {
	Expr   string
	Op     string // "" for all ops
	Metric string
	Cmp    string
	Value  float64 // in the metric's unit (ms, %, ops/s, count)
}

var reThreshold = regexp.MustCompile(`^(.*?)(<=|>=|==|!=|<|>)\s*([-+]?[0-9]*\.?[0-9]+)\s*(ms|s|us|µs|%)?$`)

var latencyMetrics = map[string]bool{"p50": true, "p90": true, "p99": true, "p99.9": true, "max": true, "mean": true}
var countMetrics = map[string]bool{"errors": true, "count": true, "dropped": true, "reinits": true, "reissues": true, "early_reconnects": true}

// ParseThreshold parses one threshold expression.
func ParseThreshold(expr string) (Threshold, error) {
	m := reThreshold.FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		return Threshold{}, fmt.Errorf("threshold %q: want [op:]metric<value[unit], e.g. tools/call:p99<200ms or error_rate<1%%", expr)
	}
	t := Threshold{Expr: expr, Cmp: m[2]}
	left := strings.TrimSpace(m[1])
	if i := strings.LastIndexByte(left, ':'); i >= 0 {
		t.Op, t.Metric = left[:i], left[i+1:]
	} else {
		t.Metric = left
	}
	v, _ := strconv.ParseFloat(m[3], 64)
	unit := m[4]
	kind, ok := metricKind(t.Metric)
	if !ok {
		return t, fmt.Errorf("threshold %q: unknown metric %q", expr, t.Metric)
	}
	switch kind {
	case "ms":
		switch unit {
		case "s":
			v *= 1000
		case "us", "µs":
			v /= 1000
		case "%":
			return t, fmt.Errorf("threshold %q: %s is a time (ms, s, us)", expr, t.Metric)
		}
	case "%":
		if unit != "" && unit != "%" {
			return t, fmt.Errorf("threshold %q: error_rate is a percentage", expr)
		}
	default:
		if unit != "" {
			return t, fmt.Errorf("threshold %q: %s takes no unit", expr, t.Metric)
		}
	}
	t.Value = v
	return t, nil
}

// metricKind returns the unit of a metric: "ms", "%", "ops/s" or "".
func metricKind(m string) (string, bool) {
	for _, p := range []string{"", "service_", "ttfb_", "resume_"} {
		if rest, ok := strings.CutPrefix(m, p); ok && latencyMetrics[rest] {
			return "ms", true
		}
	}
	switch {
	case m == "error_rate":
		return "%", true
	case m == "rate":
		return "ops/s", true
	case countMetrics[m]:
		return "", true
	}
	for _, v := range driver.Verdicts() {
		if m == v.String() {
			return "", true
		}
	}
	return "", false
}

// value reads a metric off an op summary (ok false: no data, e.g. a
// resume percentile without resumes).
func (t Threshold) value(o *OpSummary) (float64, bool) {
	lat := func(l Latency, name string) float64 {
		switch name {
		case "p50":
			return l.P50
		case "p90":
			return l.P90
		case "p99":
			return l.P99
		case "p99.9":
			return l.P999
		case "max":
			return l.Max
		}
		return l.Mean
	}
	m := t.Metric
	switch {
	case latencyMetrics[m]:
		return lat(o.Response, m), o.Count > 0
	case strings.HasPrefix(m, "service_"):
		return lat(o.Service, m[len("service_"):]), o.Count > 0
	case strings.HasPrefix(m, "ttfb_"):
		return lat(o.TTFB, m[len("ttfb_"):]), o.Count > 0
	case strings.HasPrefix(m, "resume_"):
		if o.Resumes == nil {
			return 0, false
		}
		return lat(o.Resumes.TimeToResume, m[len("resume_"):]), true
	}
	switch m {
	case "error_rate":
		return 100 * o.ErrorRate, o.Count > 0
	case "rate":
		return o.Rate, true
	case "errors":
		return float64(o.Errors), true
	case "count":
		return float64(o.Count), true
	case "dropped":
		return float64(o.Dropped), true
	case "reinits":
		return float64(o.Reinits), true
	case "reissues":
		return float64(o.Reissues), true
	case "early_reconnects":
		if o.Resumes == nil {
			return 0, true
		}
		return float64(o.Resumes.Early), true
	}
	if o.Ledger == nil {
		return 0, true // no stream judged: no fault either
	}
	return float64(o.Ledger.Verdicts[m]), true
}

func compare(a float64, cmp string, b float64) bool {
	switch cmp {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "==":
		return a == b
	}
	return a != b
}

// Check evaluates the threshold on s: the worst selected op decides. A
// threshold that selects no op (or whose metric has no data) fails, so a
// typo cannot pass silently.
func (t Threshold) Check(s *Summary) ThresholdResult {
	kind, _ := metricKind(t.Metric)
	res := ThresholdResult{Expr: t.Expr, Limit: t.Value, Unit: kind, Pass: true}
	var ops []*OpSummary
	if t.Op == "" {
		ops = []*OpSummary{&s.All}
	} else {
		for i := range s.Ops {
			n := s.Ops[i].Name
			if n == t.Op || strings.HasPrefix(n, t.Op+":") {
				ops = append(ops, &s.Ops[i])
			}
		}
	}
	seen := false
	for _, o := range ops {
		v, ok := t.value(o)
		if !ok {
			continue
		}
		pass := compare(v, t.Cmp, t.Value)
		if !seen || (!pass && res.Pass) || (pass == res.Pass && worse(v, res.Actual, t.Cmp)) {
			res.Actual = v
		}
		seen = true
		res.Pass = res.Pass && pass
	}
	if !seen {
		res.Pass, res.Actual = false, math.NaN()
	}
	return res
}

// worse reports whether a is further from passing than b.
func worse(a, b float64, cmp string) bool {
	if cmp == ">" || cmp == ">=" {
		return a < b
	}
	return a > b
}

// CheckThresholds evaluates every threshold on s.
func CheckThresholds(s *Summary, ts []Threshold) []ThresholdResult {
	out := make([]ThresholdResult, 0, len(ts))
	for _, t := range ts {
		r := t.Check(s)
		if math.IsNaN(r.Actual) {
			r.Actual = -1 // JSON has no NaN: -1 marks "no data"
		}
		out = append(out, r)
	}
	return out
}

// ThresholdsFailed counts the failed thresholds.
func ThresholdsFailed(rs []ThresholdResult) int {
	n := 0
	for _, r := range rs {
		if !r.Pass {
			n++
		}
	}
	return n
}
