package verdict

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// What a threshold is checked against before a run: k6's names (a hint
// naming ours), a rate's value (a fraction or a percentage), and its op
// or scenario scope against the test's op names.

// k6Names maps the k6 metric and aggregation names a threshold may be
// written with to what mcpbench calls them.
var k6Names = map[string]string{
	"http_req_duration": "k6's http_req_duration is our response time: p95<200ms or p(95)<200 (every op), tools/call:p99<1s (one op or method); service_p95 is the time from the actual send",
	"http_req_waiting":  "k6's http_req_waiting is our time to first byte: ttfb_p95<100ms",
	"http_req_failed":   "k6's http_req_failed is our error_rate: error_rate<0.01 (a fraction, as k6's rate<0.01) or error_rate<1%",
	"http_reqs":         "k6's http_reqs are our completed ops: count>=1000 (ops), rate>=100 (ops/s)",
	"avg":               "k6's avg is our mean: mean<50ms",
	"med":               "k6's med is our p50: p50<20ms",
}

// k6Iterations is the hint for k6's iterations in a test without
// scenarios: ours counts scenario iterations.
const k6Iterations = "k6's iterations are our completed ops: count>=1000 (ops), rate>=100 (ops/s)"

// k6Hint is the hint for a threshold written with k6's names (as its
// metric, or as its scope: "http_req_duration:p(95)<200"); "" when none
// is.
func k6Hint(scope, metric string) string {
	for _, n := range []string{metric, scope} {
		if h, ok := k6Names[strings.TrimSpace(n)]; ok {
			return h
		}
	}
	return ""
}

// rateValue is a rate threshold's value in percent: v is a fraction
// without a unit (as in k6: error_rate<0.01) and a percentage with %
// (error_rate<1%). A fraction above 1, a percentage above 100 or another
// unit is an error.
func rateValue(metric, cmp string, v float64, unit string) (float64, error) {
	switch unit {
	case "%":
		if v > 100 {
			return 0, fmt.Errorf("%s is a rate: %g%% is over 100%%", metric, v)
		}
		return v, nil
	case "":
		if v > 1 {
			return 0, fmt.Errorf("%s is a rate: without %% a fraction from 0 to 1 (as in k6), with %% a percentage; %g is neither: write %s%s%g or %s%s%g%%",
				metric, v, metric, cmp, v/100, metric, cmp, v)
		}
		return 100 * v, nil
	}
	return 0, fmt.Errorf("%s is a rate: a fraction (%s%s0.01) or a percentage (%s%s1%%), not %s", metric, metric, cmp, metric, cmp, unit)
}

// CheckTest checks the threshold against the test it will judge, given
// its op names (a Plan's Names: "tools/call:echo", "ping",
// "browse#1:tools/list" for a scenario's steps). An op or scenario scope
// must select at least one of them, as an op name, a method (tools/call:
// every op of it) or a scenario (every step of it); the error lists the
// names that would. A scenario metric (iterations, iteration_p99 …) needs
// a scenario among what it reads. Other scopes (post:, get:, sessions:,
// the total) are not op names and pass. It reads no data: a threshold
// that passes may still have no data at the end (an op that never ran).
func (t Threshold) CheckTest(names []string) error {
	if t.def.read == nil { // built without ParseThreshold
		pt, err := ParseThreshold(t.Expr)
		if err != nil {
			return err
		}
		t = pt
	}
	var selected []string
	for _, n := range names {
		if t.scope != scopeOp || selects(t.Op, n) {
			selected = append(selected, n)
		}
	}
	if t.scope == scopeOp && len(selected) == 0 {
		return fmt.Errorf("threshold %q: no op or scenario %q in this test; %s", t.Expr, t.Op, scopeNames(names))
	}
	if strings.HasPrefix(t.Metric, "iteration") && !slices.ContainsFunc(selected, func(n string) bool { return strings.Contains(n, "#") }) {
		where := "this test has no scenarios"
		if t.scope == scopeOp {
			where = fmt.Sprintf("%q is not a scenario or a step of one (%s)", t.Op, scopeNames(names))
		}
		msg := fmt.Sprintf("threshold %q: %s reads scenario iterations, and %s", t.Expr, t.Metric, where)
		if t.Metric == "iterations" {
			msg += "; " + k6Iterations
		}
		return errors.New(msg)
	}
	return nil
}

// selects reports whether scope selects the op named name: the op
// itself, its method, or its scenario (steps are "<scenario>#<n>:<op>").
// views reads the same way.
func selects(scope, name string) bool {
	return name == scope || strings.HasPrefix(name, scope+":") || strings.HasPrefix(name, scope+"#")
}

// scopeNames lists the op scopes that select something among names: the
// ops, their methods and the scenarios.
func scopeNames(names []string) string {
	var ops, methods, scenarios []string
	add := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, n := range names {
		if sc, _, ok := strings.Cut(n, "#"); ok {
			add(&scenarios, sc)
			continue
		}
		add(&ops, n)
		if m, _, ok := strings.Cut(n, ":"); ok {
			add(&methods, m)
		}
	}
	if len(ops)+len(scenarios) == 0 {
		return "the test has no ops"
	}
	var parts []string
	if len(ops) > 0 {
		parts = append(parts, "ops: "+strings.Join(ops, ", "))
	}
	if len(methods) > 0 {
		parts = append(parts, "methods (every op of it): "+strings.Join(methods, ", "))
	}
	if len(scenarios) > 0 {
		parts = append(parts, "scenarios (every step of it): "+strings.Join(scenarios, ", "))
	}
	return strings.Join(parts, "; ")
}
