package verdict

import (
	"strings"
	"testing"
)

// A rate is a fraction without a unit (k6's rate<0.01) and a percentage
// with %: both forms are the same threshold, read on the same summary.
func TestThresholdRateFractionOrPercent(t *testing.T) {
	s := sampleSummary() // error_rate of all: 10/1700 = 0.59 %
	for _, tt := range []struct {
		expr  string
		limit float64 // in percent, as the result shows it
		pass  bool
	}{
		{"error_rate<0.01", 1, true},
		{"error_rate<1%", 1, true},
		{"error_rate<0.005", 0.5, false},
		{"error_rate<0.5%", 0.5, false},
		{"error_rate<=1", 100, true},
		{"error_rate==0", 0, false},
		{"tools/call:slow:error_rate<0.03", 3, true}, // 10/500 = 2 %
	} {
		th, err := ParseThreshold(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		r := CheckThresholds(s, []Threshold{th}, nil)[0]
		if r.Limit != tt.limit || r.Pass != tt.pass || r.Unit != "%" {
			t.Errorf("%s: limit %v %s pass %v, want %v %% pass %v", tt.expr, r.Limit, r.Unit, r.Pass, tt.limit, tt.pass)
		}
	}
}

// Every problem a threshold can have is an error that says what to write
// instead: k6's names get ours, a rate above 1 without % is neither form,
// a unit that does not fit names the ones that do.
func TestThresholdErrorsSayWhatToWrite(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{"http_req_duration<200", []string{"k6's http_req_duration", "p(95)<200", "p95<200ms"}},
		{"http_req_duration:p(95)<200", []string{"k6's http_req_duration", "p(95)<200"}},
		{"http_req_failed<0.01", []string{"k6's http_req_failed is our error_rate", "error_rate<0.01", "error_rate<1%"}},
		{"http_req_failed:rate<0.01", []string{"our error_rate"}},
		{"checks>1.5", []string{"checks is a rate", "checks>0.015", "checks>1.5%"}},
		{"avg<10ms", []string{"our mean"}},
		{"error_rate<5", []string{"a fraction from 0 to 1", "error_rate<0.05", "error_rate<5%"}},
		{"error_rate<150%", []string{"over 100%"}},
		{"dropped_rate<3ms", []string{"dropped_rate is a rate", "dropped_rate<0.01", "dropped_rate<1%", "not ms"}},
		{"p99<3%", []string{"p99 is a time (ms, s, us)"}},
		{"lost==0ms", []string{"lost takes no unit"}},
		{"latency<3ms", []string{`unknown metric "latency"`, "valid metrics: p50", "error_rate"}},
		{"get:count>1", []string{"count has no get: scope"}},
	} {
		_, err := ParseThreshold(tt.expr)
		if err == nil {
			t.Errorf("%s: no error", tt.expr)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tt.expr, err, w)
			}
		}
	}
}

// An op or scenario scope must select one of the test's ops; the error
// lists the ops, methods and scenarios that would.
func TestThresholdCheckTest(t *testing.T) {
	mix := []string{"tools/call:echo", "tools/call:slow", "ping"}
	scen := []string{"browse#1:tools/list", "browse#2:tools/call:echo", "write#1:tools/call:slow"}
	for _, tt := range []struct {
		expr  string
		names []string
		ok    bool
		want  []string
	}{
		{"tools/call:echo:p99<1s", mix, true, nil},
		{"tools/call:p99<1s", mix, true, nil},
		{"ping:error_rate<0.01", mix, true, nil},
		{"p99<1s", mix, true, nil},
		{"get:lost==0", mix, true, nil},
		{"sessions:sessions_failed==0", mix, true, nil},
		{"tools/call:ech:p99<1s", mix, false, []string{`no op or scenario "tools/call:ech"`, "ops: tools/call:echo, tools/call:slow, ping", "methods (every op of it): tools/call"}},
		{"tools/cal:p99<1s", mix, false, []string{`"tools/cal"`}},
		{"echo:p99<1s", mix, false, []string{`"echo"`}}, // a tool name alone is not an op
		{"browse:p99<1s", scen, true, nil},
		{"browse#2:p99<1s", scen, true, nil},
		{"tools/list:p99<1s", scen, false, []string{"scenarios (every step of it): browse, write"}},
		{"tools/call:p99<1s", nil, false, []string{"the test has no ops"}},
		// k6's iterations, or any scenario metric, in a test without scenarios
		{"iterations>100", mix, false, []string{"reads scenario iterations", "this test has no scenarios", "k6's iterations are our completed ops", "count>=", "rate>="}},
		{"iteration_p99<1s", mix, false, []string{"this test has no scenarios"}},
		{"ping:iterations_failed==0", append([]string{"ping"}, scen...), false, []string{`"ping" is not a scenario`}},
		{"iterations>100", scen, true, nil},
		{"write:iteration_p99<1s", scen, true, nil},
	} {
		th, err := ParseThreshold(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		err = th.CheckTest(tt.names)
		if (err == nil) != tt.ok {
			t.Errorf("%s on %v: error %v, want ok %v", tt.expr, tt.names, err, tt.ok)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tt.expr, err, w)
			}
		}
	}
	// A scope CheckTest passes selects data when the ops ran: the gate
	// and Check agree on what a scope selects.
	s := sampleSummary()
	for _, expr := range []string{"tools/call:p99<1s", "tools/call:echo:p99<1s", "ping:p99<1s"} {
		th, _ := ParseThreshold(expr)
		if err := th.CheckTest([]string{"tools/call:echo", "tools/call:slow", "ping"}); err != nil {
			t.Fatal(err)
		}
		if r := th.Check(s, nil); r.Actual != r.Actual || !r.Pass { // NaN: selected nothing
			t.Errorf("%s: %+v", expr, r)
		}
	}
}
