package metrics

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// printedSummary is a summary where every printed counter has its own
// value, so a threshold that read the wrong field would show it.
func printedSummary() *Summary {
	led := func(streams, faulty int64, base int64) *LedgerSummary {
		l := &LedgerSummary{Streams: streams, Faulty: faulty, Verdicts: map[string]int64{}}
		for i, v := range []string{"lost", "duplicated", "reordered", "cross-stream", "misrouted", "late", "unterminated", "unresumable", "silent-resume"} {
			l.Verdicts[v] = base + int64(i)
		}
		return l
	}
	op := func(name string, n int64) OpSummary {
		f := float64(n)
		o := OpSummary{Name: name, Count: 100 * n, Rate: 10.5 * f, Errors: 3 * n, ErrorRate: 3.0 / 100, Dropped: 7 * n, Interrupted: 2 * n,
			Throttled: 5 * n, ThrottleWaitS: 1.5, Reinits: 11 * n, Reissues: 13 * n, ReissuedOK: n,
			Response:      Latency{P50: 1.25 * f, P90: 2.5 * f, P99: 5.75 * f, P999: 8.5 * f, Max: 12.5 * f, Mean: 1.5 * f},
			Service:       Latency{P50: 1.125 * f, P90: 2.25 * f, P99: 4.75 * f, P999: 7.25 * f, Max: 11.5 * f, Mean: 1.375 * f},
			TTFB:          Latency{P50: 0.5 * f, P90: 0.75 * f, P99: 1.75 * f, P999: 2.25 * f, Max: 3.5 * f, Mean: 0.625 * f},
			Resumes:       &ResumeSummary{Attempts: 17 * n, Accepted: 15 * n, Early: 4 * n, TimeToResume: Latency{P50: 101 * f, P99: 104 * f, Max: 110 * f}, Wait: Latency{P50: 100, P99: 103}},
			Ledger:        led(90*n, 9*n, 20*n),
			ErrorsByClass: map[string]int64{"timeout": 3 * n},
		}
		wd := Latency{P50: 2 * f, P90: 3 * f, P99: 900 * f, P999: 950 * f, Max: 1000 * f, Mean: 30 * f}
		o.WithDropped = &wd
		return o
	}
	s := &Summary{Tool: "mcpbench test", Target: "http://127.0.0.1:1/mcp", Protocol: "2025-11-25", Profile: "t", Model: "open",
		DurationS: 10, TargetRate: 400, VUs: 40, MaxVUs: 40,
		Ops: []OpSummary{op("tools/call:echo", 1), op("ping", 2)}, All: op("all", 3)}
	s.Dropped, s.Rate = s.All.Dropped, s.All.Rate
	s.DroppedRate = float64(s.All.Dropped) / float64(s.All.Count+s.All.Dropped+s.All.Interrupted)
	s.GETStreams = &GETStreamSummary{Opened: 40, Failed: 6, Events: 400, Breaks: 23, BreakCauses: map[string]int64{"ended": 20, "transport": 3},
		Resumes:        &ResumeSummary{Attempts: 19, Accepted: 18, Early: 8, TimeToResume: Latency{P50: 201, P99: 209}},
		ReopenAttempts: &ResumeSummary{Attempts: 29, Accepted: 27, Early: 12, TimeToResume: Latency{P50: 301, P99: 309}},
		Ledger:         led(40, 3, 100)}
	s.Sessions = SessionSummary{Opened: 41, Failed: 43, Closed: 40, CloseFails: 47, BadSessionIDs: 53,
		Hygiene: &HygieneSummary{Probed: 59, Faulty: 31, Verdicts: map[string]int64{"deleted-session-accepted": 19, "wrong-missing-session-status": 12}, Statuses: map[string]int64{"200": 19, "400": 12}}}
	s.Server = &ServerStats{ToolCalls: 1000, DoubleExecutions: 61, CountKeys: 70}
	s.Storms = []Wave{{AtS: 10, Attempts: 67, RecoveryS: 2.5}, {AtS: 20, Attempts: 71, RecoveryS: 4.5}}
	return s
}

// Every metric thresholds and --fail-if accept reads exactly the number
// the text report prints (issue: deleted-session-accepted==0 passed next
// to "deleted-session-accepted 8"). The table names, per metric, the
// printed numbers it must equal (their sum where a total adds two printed
// numbers); a metric missing from the table fails the test, so none can
// be added without this check.
func TestEveryThresholdReadsThePrintedNumber(t *testing.T) {
	s := printedSummary()
	var buf bytes.Buffer
	if err := WriteText(&buf, s); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	num := `([0-9.]+)`
	row := func(col int) string { // the "all" row of the response-time table
		return `Response time \(ms, completed ops, from the intended[^\n]*\n(?:[^\n]*\n)*?all +` + strings.Repeat(`\S+ +`, col) + num
	}
	verdictRe := func(prefix, v string) string { return prefix + `[^\n]*` + regexp.QuoteMeta(v) + ` ` + num }
	post, get := `Replay ledger \(response streams\)`, `  replay ledger`
	printed := map[string][]string{
		"count": {row(0)}, "rate": {row(1)}, "errors": {row(2)},
		"p50": {row(3)}, "p90": {row(4)}, "p99": {row(5)}, "p99.9": {row(6)}, "max": {row(7)}, "mean": {row(8)},
		"p(99)":       {row(5)},
		"service_p50": {`Service time[^\n]*\n(?:[^\n]*\n)*?all +\S+ +\S+ +\S+ +` + num},
		"service_max": {`Service time[^\n]*\n(?:[^\n]*\n)*?all +` + strings.Repeat(`\S+ +`, 7) + num},
		"ttfb_p99":    {`Time to first byte[^\n]*p99 ` + num}, "ttfb_mean": {`Time to first byte[^\n]*mean ` + num},
		"resume_p50": {`Resumes \(response streams\)[^\n]*time to resume p50 ` + num}, "resume_p99": {`Resumes \(response streams\)[^\n]*time to resume p50 \S+ p99 ` + num},
		"get:resume_p99":                        {`  resumes \(with Last-Event-ID[^\n]*time to resume p50 \S+ p99 ` + num},
		"error_rate":                            {`Errors: \d+ of \d+ \(` + num + `%\)`},
		"dropped":                               {`dropped ` + num + ` \(`},
		"dropped_rate":                          {`dropped \d+ \(` + num + `% of arrivals`},
		"interrupted":                           {`Interrupted by the end of the run \(not in latency\): ` + num},
		"reinits":                               {`re-initialized after 404: ` + num},
		"reissues":                              {`Requests re-issued[^\n]*: ` + num + ` re-issues`},
		"throttled":                             {`Throttled: ` + num + ` ops`},
		"resumes":                               {`Resumes \(response streams\): ` + num + ` attempts`, `  resumes \(with Last-Event-ID[^\n]*: ` + num + ` attempts`},
		"post:resumes":                          {`Resumes \(response streams\): ` + num + ` attempts`},
		"get:resumes":                           {`  resumes \(with Last-Event-ID[^\n]*: ` + num + ` attempts`},
		"resumes_accepted":                      {`Resumes \(response streams\): \d+ attempts, ` + num + ` accepted`, `  resumes \(with[^\n]*attempts, ` + num + ` accepted`},
		"early_reconnects":                      {`Resumes \(response streams\)[^\n]*accepted, ` + num + ` early`, `  resumes \(with[^\n]*accepted, ` + num + ` early`, `  re-opens[^\n]*accepted, ` + num + ` early`},
		"get:early_reconnects":                  {`  resumes \(with[^\n]*accepted, ` + num + ` early`, `  re-opens[^\n]*accepted, ` + num + ` early`},
		"get:reopens":                           {`  re-opens[^\n]*: ` + num + ` attempts`},
		"get:breaks":                            {`GET streams:[^\n]*; ` + num + ` breaks`},
		"get:streams_failed":                    {`GET streams: \d+ opened, \d+ not offered \(405\), ` + num + ` failed`},
		"faulty_streams":                        {post + `: \d+ judged, ` + num + ` faulty`, get + `: \d+ judged, ` + num + ` faulty`},
		"get:faulty_streams":                    {get + `: \d+ judged, ` + num + ` faulty`},
		"sessions:deleted-session-accepted":     {`Session hygiene[^\n]*deleted-session-accepted ` + num},
		"deleted-session-accepted":              {`Session hygiene[^\n]*deleted-session-accepted ` + num},
		"wrong-missing-session-status":          {`Session hygiene[^\n]*wrong-missing-session-status ` + num},
		"sessions:wrong-missing-session-status": {`Session hygiene[^\n]*wrong-missing-session-status ` + num},
		"sessions_failed":                       {`Sessions: \d+ opened, ` + num + ` failed`},
		"close_failures":                        {`Sessions:[^\n]*closed, ` + num + ` close failures`},
		"bad_session_ids":                       {`Session ids outside visible ASCII[^\n]*: ` + num},
		"double_executions":                     {`Reference server:[^\n]* ` + num + ` executed more than once`},
		"storm_reconnects":                      {`Storm at 10.0s: ` + num + ` reconnect`, `Storm at 20.0s: ` + num + ` reconnect`},
		"storm_recovery_s":                      {`recovered ` + num + ` s after the cut[^\n]*\n(?:[^\n]*\n)*?[^\n]*recovered ` + `[0-9.]+`},
	}
	printed["storm_recovery_s"] = []string{`(?s)recovered [0-9.]+ s after.*recovered ` + num + ` s after`} // the longer of the two
	for _, v := range []string{"lost", "duplicated", "reordered", "cross-stream", "misrouted", "late", "unterminated", "unresumable", "silent-resume"} {
		printed[v] = []string{verdictRe(post, v), verdictRe(get, v)}
		printed["post:"+v] = []string{verdictRe(post, v)}
		printed["get:"+v] = []string{verdictRe(get, v)}
	}
	// Every registered metric is in the table (at its total scope, or the
	// one scope it has).
	for _, d := range metricDefs {
		name := d.name
		if len(d.scopes) == 1 && d.scopes[0] != scopeOp {
			name = d.scopes[0] + ":" + d.name
		}
		if _, ok := printed[name]; !ok {
			if _, ok := printed[d.name]; !ok {
				t.Errorf("metric %s is not checked against the printed text: add it to the table", d.name)
			}
		}
	}
	for expr, res := range printed {
		want := 0.0
		for _, re := range res {
			m := regexp.MustCompile(re).FindAllStringSubmatch(text, -1)
			if len(m) != 1 {
				t.Errorf("%s: %q matches %d times in:\n%s", expr, re, len(m), text)
				continue
			}
			v, _ := strconv.ParseFloat(m[0][1], 64)
			want += v
		}
		got, err := Read(s, expr, nil)
		if err != nil || len(got) != 1 {
			t.Errorf("%s: %v %v", expr, got, err)
			continue
		}
		if math.Abs(got[0]-want) > 0.0051 { // the text rounds to 2-3 decimals
			t.Errorf("%s reads %v, the report prints %v", expr, got[0], want)
		}
	}
}

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
	s := printedSummary()
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
