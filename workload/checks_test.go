package workload

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// faultyFake answers tools/call "echo" with an empty text every 7th call,
// a structuredContent that violates the declared output schema every
// 11th and isError every 13th (counting the calls it answered from 1),
// and lists echo with that output schema. It counts the calls and the
// tools/list it answered.
type faultyFake struct {
	*mcptest.Server
	mu           sync.Mutex
	calls, lists int
}

func newFaultyFake() *faultyFake {
	f := &faultyFake{Server: mcptest.New()}
	f.Handle(mcptest.K("POST", mcptest.Any, "tools/list", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		f.mu.Lock()
		f.lists++
		f.mu.Unlock()
		w.Result(r, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"},
			"outputSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1}}, "required": []any{"n"}}}}})
	})
	f.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		time.Sleep(5 * time.Millisecond)
		f.mu.Lock()
		f.calls++
		k := f.calls
		f.mu.Unlock()
		text, structured := "hello", map[string]any{"n": k}
		if k%7 == 0 {
			text = ""
		}
		if k%11 == 0 {
			structured = map[string]any{"n": "eleven"}
		}
		w.Result(r, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "structuredContent": structured, "isError": k%13 == 0})
	})
	return f
}

// A server that plants wrong answers gets exactly the failed checks it
// planted — empty texts every 7th call, output-schema violations every
// 11th, isError every 13th — counted from the calls it answered; the
// checks that pass count the rest; the output schemas were fetched once
// per session; offenders.json keeps the failures with their op's start.
func TestChecksCountPlantedFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := newFaultyFake()
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs, p.MaxDelay = 100, 2, 2, profile.Duration(10*time.Second)
		p.Duration = profile.Duration(3 * time.Second)
		p.Ops[0].Arguments = map[string]any{"text": "hello"}
		p.Ops[0].Checks = []string{`content.0.text != ""`, "output_schema"}
		p.Checks = []string{"tools/call:echo => is_error == false", `content.0.text ~ "^(hello)?$"`}
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		pl, err := Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		rec := metrics.NewRecorder(pl.Names, 0)
		sum, err := Run(t.Context(), pl, Options{Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		fake.mu.Lock()
		n, lists := fake.calls, fake.lists
		fake.mu.Unlock()
		op := sum.Ops[0]
		if n != 300 || op.Count != int64(n) {
			t.Fatalf("the fake answered %d calls, the summary counts %d: want the 300 scheduled, every one counted", n, op.Count)
		}
		if lists != int(sum.Sessions.Opened) || lists != 2 {
			t.Errorf("tools/list answered %d times for %d sessions, want once a session", lists, sum.Sessions.Opened)
		}
		every := func(k int) int64 { return int64(n / k) }
		type row struct {
			check          string
			passed, failed int64
			seen           string
		}
		want := []row{
			{`content.0.text != ""`, int64(n) - every(7), every(7), `"" (empty)`},
			{"output_schema", int64(n) - every(11), every(11), `/properties/n: type: eleven has type "string", want "integer"`},
			{"is_error == false", int64(n) - every(13), every(13), "true"},
			{`content.0.text ~ "^(hello)?$"`, int64(n), 0, ""},
		}
		if len(op.Checks) != len(want) {
			t.Fatalf("checks %+v, want %d", op.Checks, len(want))
		}
		var failed int64
		for i, w := range want {
			c := op.Checks[i]
			seen := ""
			if c.FirstFailure != nil {
				seen = c.FirstFailure.Seen
				if c.FirstFailure.Start.IsZero() {
					t.Errorf("%s: first failure without its op's start", c.Check)
				}
			}
			if c.Check != w.check || c.Passed != w.passed || c.Failed != w.failed || !strings.Contains(seen, w.seen) {
				t.Errorf("check %d: %s passed %d failed %d seen %q; want %s %d %d seen %q", i, c.Check, c.Passed, c.Failed, seen, w.check, w.passed, w.failed, w.seen)
			}
			failed += w.failed
			t.Logf("%-30s passed %3d failed %2d first failure %q", c.Check, c.Passed, c.Failed, seen)
		}
		t.Logf("%d calls: %d empty texts, %d schema violations, %d isError", n, every(7), every(11), every(13))
		off := rec.OffendersFile()
		if off.CheckFailures != failed || len(off.FirstChecks) != min(int(failed), 100) || off.FirstChecks[0].Start.IsZero() {
			t.Errorf("offenders: %d check failures (%d kept), want %d with the op's start", off.CheckFailures, len(off.FirstChecks), failed)
		}
		// The thresholds read the same counts.
		if got, w := op.Errors, every(13); got != w {
			t.Errorf("errors %d, want the %d isError answers", got, w)
		}
	})
}

// Against the reference server a passing check set reads 0 failed, on
// every check, output_schema included (the count tool declares one).
func TestChecksCleanOnRefServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a second")
	}
	t.Parallel()
	p := &profile.Profile{Name: "checks", Duration: profile.Duration(time.Second), VUs: 2, Ops: []profile.OpSpec{
		{Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": "hello"}, Checks: []string{`content.0.text == "hello"`, `content.0.text ~ "^hel"`}},
		{Method: "tools/call", Tool: "count", Arguments: map[string]any{"key": "k"}, Checks: []string{"output_schema", "structured.executions >= 1"}},
	}, Checks: []string{"is_error == false"}, Thresholds: []string{"checks==1", "checks_failed==0"}}
	sum, _ := runRef(t, refserver.Options{}, p)
	var run int64
	for _, o := range sum.Ops {
		if len(o.Checks) != 3 {
			t.Errorf("%s: %d checks, want 3", o.Name, len(o.Checks))
		}
		for _, c := range o.Checks {
			if c.Failed != 0 || c.Passed != o.Count || c.Passed == 0 {
				t.Errorf("%s: %s passed %d failed %d (first %+v) of %d ops, want all passed", o.Name, c.Check, c.Passed, c.Failed, c.FirstFailure, o.Count)
			}
			run += c.Passed + c.Failed
		}
	}
	for _, th := range sum.Thresholds {
		if !th.Pass {
			t.Errorf("threshold %s failed: %v", th.Expr, th.Actual)
		}
	}
	t.Logf("%d checks run, 0 failed", run)
}

// A malformed check is an error naming its op (or --check), the check and
// why; a scope that selects no op and output_schema off a tools/call are
// errors too.
func TestChecksErrors(t *testing.T) {
	p, errs := profile.ParseProfile([]byte(`name: bad
url: http://127.0.0.1:1/mcp
checks: ["nosuch => is_error == false", " => is_error == false"]
ops:
  - tool: echo
    method: tools/call
    checks: ['content.0.text == hello', 'content.0.text', 'structured.n > "x"']
  - method: ping
    checks: [output_schema]
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p.Checks = append(p.Checks, `content.0.text ~ "("`, "tools/list => output_schema")
	p.CheckFlags = 2
	_, err := Compile(p, nil)
	var pe *profile.ProfileError
	if !errors.As(err, &pe) {
		t.Fatalf("err %v, want a *ProfileError", err)
	}
	got := pe.Error()
	for _, want := range []string{
		`ops[0] (tools/call:echo).checks[0]: bad check "content.0.text == hello": value "hello" is not a JSON literal: write a string in double quotes`,
		`ops[0] (tools/call:echo).checks[1]: bad check "content.0.text": no operator`,
		`ops[0] (tools/call:echo).checks[2]: bad check "structured.n > \"x\"": > compares numbers`,
		`ops[1] (ping).checks[0]: output_schema checks a tools/call's structuredContent; ping has no output schema`,
		`checks[1]: " => is_error == false": nothing before =>`,
		`checks: bad check "content.0.text ~ \"(\"": regular expression`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	// Scopes are checked against the test's ops once the rest is right.
	p, _ = profile.ParseProfile([]byte(`name: scopes
url: http://127.0.0.1:1/mcp
checks: ["nosuch => is_error == false"]
ops: [{method: tools/call, tool: echo}, {method: ping}]
`))
	p.Checks = append(p.Checks, "ping => output_schema")
	p.CheckFlags = 1
	_, err = Compile(p, nil)
	if err == nil {
		t.Fatal("compiled")
	}
	for _, want := range []string{
		`checks[0]: "nosuch => is_error == false" selects no op: "nosuch" is not an op name, method or scenario of the test (ops: tools/call:echo, ping)`,
		`checks: output_schema checks a tools/call's structuredContent; op ping is a ping`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	// A check selector must name a check of the test.
	p, _ = profile.ParseProfile([]byte(`name: selectors
url: http://127.0.0.1:1/mcp
ops: [{method: tools/call, tool: echo, checks: [output_schema]}, {method: ping}]
checks: ["is_error == false"]
thresholds: ["checks{is_error ==  false}>0.9", "checks{no such}>0.9", "tools/call:echo:checks_failed{output_schema}==0"]
`))
	_, err = Compile(p, nil)
	want := `thresholds[1]: threshold "checks{no such}>0.9": no check "no such" in this test (checks: output_schema, is_error == false)`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "thresholds[0]") || strings.Contains(err.Error(), "thresholds[2]") {
		t.Errorf("err %v, want only %q", err, want)
	}
	// A checks threshold in a test without checks reads nothing.
	p, _ = profile.ParseProfile([]byte(`name: none
url: http://127.0.0.1:1/mcp
ops: [{method: ping}]
thresholds: ["checks>0.99"]
`))
	if _, err = Compile(p, nil); err == nil || !strings.Contains(err.Error(), `thresholds[0]: threshold "checks>0.99": the test has no checks`) {
		t.Errorf("err %v, want the test has no checks", err)
	}
}

// An op without checks keeps a nil Inspect (no cost on the hot path); a
// scope selects ops by name, method and scenario step.
func TestChecksAttach(t *testing.T) {
	p, errs := profile.ParseProfile([]byte(`name: attach
url: http://127.0.0.1:1/mcp
checks: ["tools/call => is_error == false", "ping => is_error == false"]
ops: [{method: tools/call, tool: echo, checks: ['content.0.text != ""']}, {method: tools/list}, {method: ping}]
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := pl.CheckExprs()
	if pl.Ops[1].Inspect != nil || got[1] != nil {
		t.Errorf("tools/list has an Inspect or checks %q: want none", got[1])
	}
	if strings.Join(got[0], "|") != `content.0.text != ""|is_error == false` || strings.Join(got[2], "|") != "is_error == false" || pl.Ops[0].Inspect == nil {
		t.Errorf("checks %q", got)
	}
	for _, tc := range []struct {
		scope, name string
		want        bool
	}{
		{"", "ping", true}, {"tools/call", "tools/call:echo", true}, {"tools/call:echo", "tools/call:echo", true},
		{"tools/call:e", "tools/call:echo", false}, {"agent", "agent#2:tools/call:echo", true}, {"tools/call:echo", "agent#2:tools/call:echo", true},
		{"tools/list", "agent#2:tools/call:echo", false},
	} {
		if got := profile.CheckScopeMatches(tc.scope, tc.name); got != tc.want {
			t.Errorf("profile.CheckScopeMatches(%q, %q) = %v", tc.scope, tc.name, got)
		}
	}
}
