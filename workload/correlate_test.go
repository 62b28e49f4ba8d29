package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// corrOps: list tools, then call the first by name with its "n" (a
// number, sent as a number) and a text that quotes it.
func corrOps() []profile.OpSpec {
	return []profile.OpSpec{
		{Name: "list", Method: "tools/list"},
		{Name: "call", Method: "tools/call", Tool: `{{step "list" "tools.0.name"}}`,
			Arguments: map[string]any{"n": `{{step "list" "tools.0.n"}}`, "text": `first is {{step "list" "tools.0.name"}}`}},
	}
}

// A fake whose list fails every 4th call and answers no tool every 3rd
// (not 4th): the call step reads the first tool's name and n, so exactly
// those iterations' calls are not sent, each counted as missing-value
// with the reason; every call sent carries the values of its own
// iteration's list (never an earlier one's).
func TestCorrelateMissingExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		var mu sync.Mutex
		lists := 0
		var bad []string
		calls := 0
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/list", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			mu.Lock()
			lists++
			n := lists
			mu.Unlock()
			switch {
			case n%4 == 0:
				w.JSON(200, mcptest.ErrorResponse(r.ID, -32603, "list failed"))
			case n%3 == 0:
				w.Result(r, map[string]any{"tools": []any{}})
			default:
				w.Result(r, map[string]any{"tools": []any{map[string]any{"name": fmt.Sprintf("tool-%d", n), "n": n}, map[string]any{"name": "second"}}})
			}
		})
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			var p struct {
				Name      string
				Arguments struct {
					N    json.Number
					Text string
				}
			}
			mu.Lock()
			calls++
			if err := json.Unmarshal(r.Params, &p); err != nil || "tool-"+p.Arguments.N.String() != p.Name ||
				p.Arguments.Text != "first is "+p.Name || p.Arguments.N.String() != fmt.Sprint(lists) || !strings.Contains(string(r.Params), `"n":`+fmt.Sprint(lists)) {
				bad = append(bad, string(r.Params))
			}
			mu.Unlock()
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := &profile.Profile{Name: "agent", URL: "http://fake/mcp", VUs: 1, Duration: profile.Duration(time.Second), Protocol: driver.Protocol20251125,
			Ops: corrOps(), Scenario: []profile.StepSpec{{Op: "list", Think: profile.Duration(10 * time.Millisecond)}, {Op: "call"}}}
		sum := runFake(t, p, fake)
		c := stepCounts(sum)
		its := c["agent#1:list"]
		missing := int64(0)
		for n := int64(1); n <= its; n++ {
			if n%4 == 0 || n%3 == 0 {
				missing++
			}
		}
		if its < 50 || c["agent#2:call"] != its {
			t.Fatalf("steps %v, want ~100 iterations, every call step counted", c)
		}
		var call, list OpSummaryLike
		for _, o := range sum.Ops {
			switch o.Name {
			case "agent#2:call":
				call = OpSummaryLike{o.Errors, o.ErrorsByClass}
			case "agent#1:list":
				list = OpSummaryLike{o.Errors, o.ErrorsByClass}
			}
		}
		if call.errors != missing || call.classes["missing-value"] != missing || len(call.classes) != 1 {
			t.Fatalf("call step: %d errors %v, want exactly %d missing-value (of %d iterations)", call.errors, call.classes, missing, its)
		}
		if list.classes["jsonrpc-error"] != its/4 {
			t.Fatalf("list step: %v, want %d jsonrpc-error", list.classes, its/4)
		}
		if int64(calls) != its-missing || len(bad) > 0 {
			t.Fatalf("the server got %d calls (want %d); calls with values not of their own list: %q", calls, its-missing, bad)
		}
		if sum.Scenarios[0].Failed != missing {
			t.Fatalf("failed iterations %d, want %d", sum.Scenarios[0].Failed, missing)
		}
		ex := sum.All.ErrorExamples["missing-value"]
		if !strings.Contains(ex, `{{step "list" "tools.0.`) || !strings.Contains(ex, `not sent`) {
			t.Fatalf("example %q does not say which value and why", ex)
		}
	})
}

// OpSummaryLike is an op row's errors and classes.
type OpSummaryLike struct {
	errors  int64
	classes map[string]int64
}

// The reasons, worded: the step that failed, or the path it lacks.
func TestMissingValueError(t *testing.T) {
	r := argtmpl.Ref{Step: "list", Path: "tools.0.name", Field: "ops[1].tool"}
	failed := missing(r, &argtmpl.Captured{Fail: driver.ClassJSONRPC})
	absent := missing(r, &argtmpl.Captured{})
	if got, want := failed.Error(), `ops[1].tool: {{step "list" "tools.0.name"}}: not sent: step "list" failed (jsonrpc-error)`; got != want {
		t.Errorf("failed: %q, want %q", got, want)
	}
	if got, want := absent.Error(), `ops[1].tool: {{step "list" "tools.0.name"}}: not sent: the result of step "list" has no tools.0.name`; got != want {
		t.Errorf("absent: %q, want %q", got, want)
	}
	if !errors.Is(failed, driver.ErrMissingValue) || driver.Classify(absent) != driver.ClassMissingValue {
		t.Error("not classified missing-value")
	}
}

// A reference to an unknown step, to a later step or to itself, to a
// parallel step, or from an op of the mix is a profile error naming the
// step and the field; every one is reported at once.
func TestCorrelateProfileErrors(t *testing.T) {
	ops := []profile.OpSpec{
		{Name: "list", Method: "tools/list"},
		{Name: "call", Method: "tools/call", Tool: `{{step "lst" "tools.0.name"}}`},
		{Name: "read", Method: "resources/read", URI: `{{step "later" "resources.0.uri"}}`},
		{Name: "self", Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": `{{step "self" "content.0.text"}}`}},
		{Name: "par", Method: "tools/call", Tool: `{{step "list" "tools.0.name"}}`},
		{Name: "bad", Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": `{{step "list"}}`}},
		{Name: "pipe", Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": `{{step "list" "a" | printf "%s"}}`}},
		{Name: "env", Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": `{{env "NOPE"}}`}},
	}
	p := &profile.Profile{URL: "http://127.0.0.1:1/mcp", VUs: 1, Duration: profile.Duration(time.Second), Ops: ops,
		Scenario: []profile.StepSpec{{Op: "list", Parallel: 2}, {Op: "call"}, {Op: "read"}, {Name: "later", Op: "list"}, {Op: "self"}, {Op: "par"},
			{Op: "bad"}, {Op: "pipe"}, {Op: "env"}}}
	_, err := Compile(p, nil)
	var pe *profile.ProfileError
	if !errors.As(err, &pe) {
		t.Fatalf("err %v, want a profile error", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`scenario[1] (step "call"): ops[1].tool: {{step "lst" "tools.0.name"}}: no step "lst" in scenario "scenario" before this one (steps before it: "list")`,
		`scenario[2] (step "read"): ops[2].uri: {{step "later" "resources.0.uri"}}: step "later" runs at or after this one in scenario "scenario"`,
		`scenario[4] (step "self"): ops[3].arguments.text: {{step "self" "content.0.text"}}: step "self" runs at or after this one`,
		`scenario[5] (step "par"): ops[4].tool: {{step "list" "tools.0.name"}}: step "list" (scenario[0]) fires 2 requests at once`,
		`ops[5].arguments.text: {{step "list"}}: step takes 2 arguments`,
		`ops[6].arguments.text: {{step}} and {{env}} work as actions of their own`,
		`ops[7].arguments.text: {{env "NOPE"}}: "NOPE" is not given: pass -e NOPE=VALUE`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	// The op mix cannot read steps.
	q := &profile.Profile{URL: "http://127.0.0.1:1/mcp", VUs: 1, Duration: profile.Duration(time.Second), Ops: ops[1:2]}
	if _, err := Compile(q, nil); err == nil || !strings.Contains(err.Error(), `ops[0].tool: {{step "lst" "tools.0.name"}} reads a scenario step's result: this profile runs the op mix`) {
		t.Fatalf("mix: %v", err)
	}
}

// Against the reference server (the official Go SDK): list the tools and
// call the first by name; list the resources and read the first by its
// URI. Every step succeeds and the server ran every call.
func TestCorrelateOnRefServer(t *testing.T) {
	ops := []profile.OpSpec{
		// A step read by a later one may have checks of its own: both
		// inspect its result.
		{Name: "tools", Method: "tools/list", Checks: []string{`tools.0.name ~ "."`}},
		{Name: "call", Method: "tools/call", Tool: `{{step "tools" "tools.0.name"}}`},
		{Name: "resources", Method: "resources/list"},
		{Name: "read", Method: "resources/read", URI: `{{step "resources" "resources.0.uri"}}`},
	}
	for _, open := range []bool{false, true} {
		p := &profile.Profile{Name: "corr", VUs: 2, Duration: profile.Duration(time.Second), Protocol: driver.Protocol20251125, Ops: ops,
			Scenario: []profile.StepSpec{{Op: "tools"}, {Op: "call"}, {Op: "resources"}, {Op: "read"}}}
		if open {
			p.Rate = 200 // iterations/s, on VUs added as needed
		}
		sum, st := runRef(t, refserver.Options{}, p)
		c := stepCounts(sum)
		if sum.All.Errors != 0 || c["corr#1:tools"] == 0 || c["corr#2:call"] != c["corr#1:tools"] || c["corr#4:read"] != c["corr#3:resources"] {
			t.Fatalf("open %v: steps %v errors %v %v", open, c, sum.All.ErrorsByClass, sum.All.ErrorExamples)
		}
		var passed, failed int64
		for _, o := range sum.Ops {
			for _, ck := range o.Checks {
				passed, failed = passed+ck.Passed, failed+ck.Failed
			}
		}
		if passed != c["corr#1:tools"] || failed != 0 {
			t.Fatalf("open %v: the tools step's check passed %d, failed %d; want %d passed", open, passed, failed, c["corr#1:tools"])
		}
		if st.ToolCalls < c["corr#2:call"] {
			t.Fatalf("open %v: the server ran %d calls, the step completed %d", open, st.ToolCalls, c["corr#2:call"])
		}
	}
}
