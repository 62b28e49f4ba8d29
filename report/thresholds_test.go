package report

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// Every metric thresholds and --fail-if accept reads exactly the number
// the text report prints (issue: deleted-session-accepted==0 passed next
// to "deleted-session-accepted 8"). The table names, per metric, the
// printed numbers it must equal (their sum where a total adds two printed
// numbers); a metric missing from the table fails the test, so none can
// be added without this check.
func TestEveryThresholdReadsThePrintedNumber(t *testing.T) {
	s := fixture.PrintedSummary()
	s.Ops[0].Checks = []results.CheckSummary{{Check: `content.0.text == "hello"`, Passed: 9997, Failed: 3, PassRate: 0.9997,
		FirstFailure: &results.CheckFailure{Seen: `"" (empty)`}}, {Check: "is_error == false", Passed: 10000, PassRate: 1}}
	s.Ops[1].Checks = []results.CheckSummary{{Check: "is_error == false", Passed: 4999, Failed: 1, PassRate: 0.9998}}
	s.All.Checks = []results.CheckSummary{{Check: `content.0.text == "hello"`, Passed: 9997, Failed: 3}, {Check: "is_error == false", Passed: 14999, Failed: 1}}
	var buf bytes.Buffer
	if err := WriteText(&buf, s); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	num := `([0-9.]+)`
	row := func(col int) string { // the "all" row of the response-time table
		return `Response time \(ms, completed ops, from the intended[^\n]*\n(?:[^\n]*\n)*?all +` + strings.Repeat(`\S+ +`, col) + num
	}
	iter := func(col int) string { // the scenario's row of the iterations table
		return `Iterations \(ms[^\n]*\n[^\n]*\nagent +` + strings.Repeat(`\S+ +`, col) + num
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
	for k, v := range map[string][]string{
		"cancelled":          {`Cancellation: ` + num + ` calls cancelled`},
		"cancelled_rate":     {`Cancellation: \d+ calls cancelled \(` + num + `% of`},
		"cancel_raced":       {`Cancellation:[^\n]*raced ` + num},
		"pages":              {`Pages: ` + num + ` list pages`},
		"log_messages":       {`Notifications[^\n]*log messages ` + num + ` ·`, `Notifications[^\n]*log messages \d+ · ` + num},
		"post:log_messages":  {`Notifications[^\n]*log messages ` + num + ` ·`},
		"get:log_messages":   {`Notifications[^\n]*log messages \d+ · ` + num},
		"tools_list_changed": {`Notifications[^\n]*tools/list_changed ` + num + ` ·`, `Notifications[^\n]*tools/list_changed \d+ · ` + num},
		"resources_updated":  {`Notifications[^\n]*resources/updated ` + num + ` ·`, `Notifications[^\n]*resources/updated \d+ · ` + num},
		"updates_notified":   {`Resource updates:[^\n]*; ` + num + ` notified`},
		"updates_unnotified": {`Resource updates:[^\n]*, ` + num + ` never notified`},
		"updates_unmatched":  {`Resource updates:[^\n]*, ` + num + ` unmatched`},
		"update_p50":         {`Resource updates:[^\n]*send p50 ` + num},
		"update_p90":         {`Resource updates:[^\n]*send p50 \S+ p90 ` + num},
		"update_p99":         {`Resource updates:[^\n]*send p50 \S+ p90 \S+ p99 ` + num},
		"update_max":         {`Resource updates:[^\n]*send p50 \S+ p90 \S+ p99 \S+ max ` + num},
		"iterations":         {iter(0)},
		"iterations_failed":  {iter(2)},
		"iteration_p50":      {iter(3)},
		"iteration_p90":      {iter(4)},
		"iteration_p99":      {iter(5)},
		"iteration_p99.9":    {iter(6)},
		"iteration_max":      {iter(7)},
		"iteration_mean":     {iter(8)},
		"iterations_dropped": {`agent: [^\n]*\(` + num + ` iterations dropped`},
		"checks":             {`Checks: \d+ of \d+ failed \(` + num + `% passed\)`},
		"checks_failed":      {`Checks: ` + num + ` of \d+ failed`},
		"ping:checks":        {`\n  ping +is_error == false +\d+ +\d+ +` + num + `%`},
		`tools/call:echo:checks{content.0.text  == "hello"}`: {`\n  tools/call:echo +content.0.text == "hello" +\d+ +\d+ +` + num + `%`},
		`ping:checks_failed{is_error == false}`:              {`\n  ping +is_error == false +\d+ +` + num},
	} {
		printed[k] = v
	}
	printed["storm_recovery_s"] = []string{`(?s)recovered [0-9.]+ s after.*recovered ` + num + ` s after`} // the longer of the two
	for _, v := range []string{"lost", "duplicated", "reordered", "cross-stream", "misrouted", "late", "unterminated", "unresumable", "silent-resume", "after-cancel"} {
		printed[v] = []string{verdictRe(post, v), verdictRe(get, v)}
		printed["post:"+v] = []string{verdictRe(post, v)}
		printed["get:"+v] = []string{verdictRe(get, v)}
	}
	// Every registered metric is in the table (at its total scope, or the
	// one scope it has).
	for _, d := range verdict.Defs() {
		name := d.Name
		if len(d.Scopes) == 1 && d.Scopes[0] != "OP" {
			name = d.Scopes[0] + ":" + d.Name
		}
		if _, ok := printed[name]; !ok {
			if _, ok := printed[d.Name]; !ok {
				t.Errorf("metric %s is not checked against the printed text: add it to the table", d.Name)
			}
		}
	}
	// The iteration metrics read a run with scenarios (closed model: its
	// drops and rate lines differ from the fixture's open model's).
	scen := fixture.PrintedSummary()
	scen.Model, scen.TargetRate = "closed", 0
	scen.Scenarios = []results.ScenarioSummary{{Name: "agent", Steps: []string{"agent#1:list", "agent#2:call"}, Iterations: 73,
		Rate: 7.3, Failed: 79, Dropped: 83, Iteration: results.Latency{P50: 21.5, P90: 33.25, P99: 47.5, P999: 52, Max: 61, Mean: 24.75}}}
	var sbuf bytes.Buffer
	if err := WriteText(&sbuf, scen); err != nil {
		t.Fatal(err)
	}
	for expr, res := range printed {
		text, s := text, s
		if strings.HasPrefix(expr, "iteration") {
			text, s = sbuf.String(), scen
		}
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
		got, err := verdict.Read(s, expr, nil)
		if err != nil || len(got) != 1 {
			t.Errorf("%s: %v %v", expr, got, err)
			continue
		}
		if math.Abs(got[0]-want) > 0.0051 { // the text rounds to 2-3 decimals
			t.Errorf("%s reads %v, the report prints %v", expr, got[0], want)
		}
	}
}
