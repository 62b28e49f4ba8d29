package verdict

import (
	"strings"
)

// The checks metrics (package check): checks is the pass rate of the
// checks run (k6's checks: checks>0.99), checks_failed their failures;
// both per op (OP:checks) and per check, k6's tag syntax with the check's
// expression: checks{is_error == false}>0.99, or
// tools/call:echo:checks{content.0.text ~ "^hel"}==1. Registered after
// metrics.go's (file order).
func init() {
	def("checks", "%", "checks passed / checks run (checks{CHECK}: one check)", opScopes, func(v view) (float64, bool) {
		p, f := v.checkCounts()
		if p+f == 0 {
			return 0, false
		}
		return 100 * float64(p) / float64(p+f), true
	})
	def("checks_failed", "", "checks that failed (checks_failed{CHECK}: one check)", opScopes, func(v view) (float64, bool) {
		_, f := v.checkCounts()
		return cnt(f)
	})
}

// checkCounts sums the passes and failures of the view's checks: the
// op's, or (the total) every op's, all of them or the one selected.
func (v view) checkCounts() (passed, failed int64) {
	for _, c := range v.opOf().Checks {
		if v.check == "" || strings.Join(strings.Fields(c.Check), " ") == v.check {
			passed += c.Passed
			failed += c.Failed
		}
	}
	return passed, failed
}

// cutCheckSelector takes a check selector off a metric: "OP:checks{CHECK}"
// is "OP:checks" and CHECK (runs of spaces made one); other metrics are
// returned as they are.
func cutCheckSelector(metric string) (string, string) {
	for _, name := range []string{"checks_failed", "checks"} {
		i := strings.Index(metric, name+"{")
		if i < 0 || !strings.HasSuffix(metric, "}") || (i > 0 && metric[i-1] != ':') {
			continue
		}
		sel := metric[i+len(name)+1 : len(metric)-1]
		return metric[:i] + name, strings.Join(strings.Fields(sel), " ")
	}
	return metric, ""
}
