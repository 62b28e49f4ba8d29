package verdict

import (
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// The checks thresholds read the pass rate (or the failures) of every
// check, of one op's, or of one check by its expression; a check
// selector or a test without checks reads no data and fails.
func TestChecksThresholds(t *testing.T) {
	hello := `content.0.text == "hello"`
	s := &results.Summary{Ops: []results.OpSummary{
		{Name: "tools/call:echo", Count: 1000, Checks: []results.CheckSummary{{Check: hello, Passed: 990, Failed: 10}, {Check: "is_error == false", Passed: 1000}}},
		{Name: "tools/call:count", Count: 1000, Checks: []results.CheckSummary{{Check: "output_schema", Passed: 1000}, {Check: "is_error == false", Passed: 999, Failed: 1}}},
		{Name: "ping", Count: 5},
	}}
	s.All = results.OpSummary{Name: "all", Count: 2005, Checks: []results.CheckSummary{{Check: hello, Passed: 990, Failed: 10}, {Check: "is_error == false", Passed: 1999, Failed: 1}, {Check: "output_schema", Passed: 1000}}}
	for _, tc := range []struct {
		expr   string
		pass   bool
		actual float64
	}{
		{"checks>0.99", true, 100 * 3989.0 / 4000},
		{"checks>99.9%", false, 100 * 3989.0 / 4000},
		{"checks_failed==0", false, 11},
		{"checks_failed<=11", true, 11},
		{"tools/call:echo:checks>=0.99", true, 99.5},
		{"tools/call:checks>0.996", false, 99.5}, // every tools/call: echo is the worst
		{"tools/call:count:checks_failed<=1", true, 1},
		{`checks{is_error == false}>0.999`, true, 100 * 1999.0 / 2000},
		{`tools/call:count:checks{is_error  ==  false}==1`, false, 99.9},
		{`tools/call:echo:checks{content.0.text == "hello"}>=0.99`, true, 99},
		{`checks_failed{output_schema}==0`, true, 0},
		{`checks{no such check}>0.5`, false, -1},
		{"ping:checks>0.5", false, -1},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		r := CheckThresholds(s, []Threshold{th}, nil)[0]
		if r.Pass != tc.pass || (r.Actual-tc.actual) > 1e-9 || (tc.actual-r.Actual) > 1e-9 {
			t.Errorf("%s: pass %v actual %v; want %v %v", tc.expr, r.Pass, r.Actual, tc.pass, tc.actual)
		}
	}
	if err := (func() error { th, _ := ParseThreshold("nosuch:checks>0.9"); return th.CheckTest([]string{"ping"}) })(); err == nil {
		t.Error("an op scope of no op passed CheckTest")
	}
}
