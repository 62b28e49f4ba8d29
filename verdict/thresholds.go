package verdict

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/results"
)

// A threshold is a pass/fail criterion on the summary (k6 style), written
//
//	[SCOPE:]METRIC CMP VALUE[UNIT]
//
// METRIC is any metric of MetricNames: response-time percentiles (p50,
// p95, p99.9, k6's p(95), any pNN[.N]), max and mean, and the same with
// service_, ttfb_ and resume_; counts and rates (count, rate, errors,
// error_rate, dropped, dropped_rate, interrupted, reinits, reissues,
// throttled); stream counters (resumes, resumes_accepted,
// early_reconnects, reopens, breaks, faulty_streams and every replay
// verdict: lost, duplicated, reordered, cross-stream, misrouted, late,
// unterminated, unresumable, silent-resume); session counters
// (deleted-session-accepted, wrong-missing-session-status,
// sessions_failed, close_failures, bad_session_ids); double_executions,
// storm_reconnects, storm_recovery_s; checks (the pass rate) and
// checks_failed, where checks{CHECK} selects one check by its expression
// (metrics_checks.go). SCOPE picks an op (an op name like
// tools/call:echo or a method like tools/call: every such op must pass),
// the response streams (post:), the GET streams (get:) or the sessions
// (sessions:); without it the total is read — for stream counters the
// response and GET streams together. Each reads exactly the number the
// summary prints.
//
// CMP is < <= > >= == or !=; UNIT is ms, s or us for times (default ms),
// none for counts and ops/s. A rate (error_rate, dropped_rate,
// cancelled_rate) is a fraction without a unit, as in k6
// (error_rate<0.01), and a percentage with % (error_rate<1%): the two
// are the same threshold; a fraction above 1 is an error. Examples:
// "tools/call:p99<200ms", "p(95)<150", "error_rate<1%", "lost==0",
// "get:lost==0", "deleted-session-accepted==0", "rate>=950".
//
// ParseThreshold checks the metric, the kind of scope and the unit; an op
// or scenario scope is checked against a plan's op names by CheckTest.
type Threshold struct {
	Expr   string
	Op     string // the scope as written: "" (total), "post", "get", "sessions" or an op
	Metric string
	Cmp    string
	Value  float64 // in the metric's unit (ms, %, ops/s, s, count)
	// CheckSel selects one check for the checks metrics (checks{CHECK}: its
	// expression, runs of spaces made one); "" reads every check.
	CheckSel string

	def   metricDef
	scope string
}

var reThreshold = regexp.MustCompile(`^(.*?)\s*(<=|>=|==|!=|<|>)\s*([-+]?[0-9]*\.?[0-9]+)\s*(ms|s|us|µs|%)?$`)

// ParseThreshold parses one threshold expression. An unknown metric is an
// error listing the valid names (k6's names — http_req_duration,
// http_req_failed, iterations, checks — name ours instead); a unit that
// does not fit the metric is an error naming the units that do.
func ParseThreshold(expr string) (Threshold, error) {
	m := reThreshold.FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		return Threshold{}, fmt.Errorf("threshold %q: want [scope:]metric<value[unit], e.g. tools/call:p99<200ms, error_rate<1%%, get:lost==0", expr)
	}
	t := Threshold{Expr: expr, Cmp: m[2]}
	metric := strings.TrimSpace(m[1])
	metric, t.CheckSel = cutCheckSelector(metric) // checks{CHECK} (metrics_checks.go)
	t.Op, t.Metric = splitScope(metric)
	if hint := k6Hint(t.Op, t.Metric); hint != "" {
		return t, fmt.Errorf("threshold %q: %s", expr, hint)
	}
	d, ok := lookupMetric(t.Metric)
	if !ok {
		return t, fmt.Errorf("threshold %q: unknown metric %q; valid metrics: %s", expr, t.Metric, metricList())
	}
	sc, err := resolveScope(d, t.Op)
	if err != nil {
		return t, fmt.Errorf("threshold %q: %v", expr, err)
	}
	t.def, t.scope = d, sc
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return t, fmt.Errorf("threshold %q: value %q: %v", expr, m[3], err)
	}
	unit := m[4]
	switch d.unit {
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
		if v, err = rateValue(t.Metric, t.Cmp, v, unit); err != nil {
			return t, fmt.Errorf("threshold %q: %v", expr, err)
		}
	case "s":
		switch unit {
		case "ms":
			v /= 1000
		case "", "s":
		default:
			return t, fmt.Errorf("threshold %q: %s is in seconds", expr, t.Metric)
		}
	default:
		if unit != "" {
			return t, fmt.Errorf("threshold %q: %s takes no unit", expr, t.Metric)
		}
	}
	t.Value = v
	return t, nil
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

// Check evaluates the threshold on s (q answers the percentiles the
// summary does not keep; nil: those have no data): the worst selected op
// decides. A threshold that selects nothing (or whose metric has no data)
// fails, so a typo cannot pass silently.
func (t Threshold) Check(s *results.Summary, q QuantileSource) results.ThresholdResult {
	if t.def.read == nil { // built without ParseThreshold
		if pt, err := ParseThreshold(t.Expr); err == nil {
			t = pt
		}
	}
	res := results.ThresholdResult{Expr: t.Expr, Limit: t.Value, Unit: t.def.unit, Pass: true}
	seen := false
	for _, v := range views(s, t.scope, t.Op, q) {
		v.check = t.CheckSel
		x, ok := t.def.read(v)
		if !ok {
			continue
		}
		pass := compare(x, t.Cmp, t.Value)
		if !seen || (!pass && res.Pass) || (pass == res.Pass && worse(x, res.Actual, t.Cmp)) {
			res.Actual = x
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

// CheckThresholds evaluates every threshold on s (q: see Check).
func CheckThresholds(s *results.Summary, ts []Threshold, q QuantileSource) []results.ThresholdResult {
	out := make([]results.ThresholdResult, 0, len(ts))
	for _, t := range ts {
		r := t.Check(s, q)
		if math.IsNaN(r.Actual) {
			r.Actual = -1 // JSON has no NaN: -1 marks "no data"
		}
		out = append(out, r)
	}
	return out
}
