package workload

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// The new ops compile to the params the spec gives them, and the new
// options reach the driver's ops.
func TestMCPOpsCompile(t *testing.T) {
	p, errs := profile.ParseProfile([]byte(`name: more
url: http://127.0.0.1:1/mcp
get_stream: true
ops:
  - {method: resources/templates/list}
  - {method: resources/subscribe, uri: "x://a"}
  - {method: resources/unsubscribe, uri: "x://a"}
  - {method: completion/complete, prompt: greet, argument: {name: name, value: Al}}
  - {method: completion/complete, uri: "x://items/{id}", argument: {name: id, value: "4"}, arguments: {kind: 7}}
  - {method: logging/setLevel, level: debug}
  - {method: tools/call, tool: touch, arguments: {uri: "x://a"}, changes: "x://a", cancel: {after: 50ms, p: 0.1}}
  - {method: tools/list, max_pages: 7}
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Name, Params string
		Cancel       *driver.Cancel
		Changes      string
		MaxPages     int
	}
	var all []got
	for _, op := range pl.Ops {
		all = append(all, got{op.Name, string(op.Params), op.Cancel, op.Changes, op.MaxPages})
	}
	want := []got{
		{Name: "resources/templates/list"},
		{Name: "resources/subscribe:x://a", Params: `{"uri":"x://a"}`},
		{Name: "resources/unsubscribe:x://a", Params: `{"uri":"x://a"}`},
		{Name: "completion/complete:greet", Params: `{"argument":{"name":"name","value":"Al"},"ref":{"name":"greet","type":"ref/prompt"}}`},
		{Name: "completion/complete:x://items/{id}", Params: `{"argument":{"name":"id","value":"4"},"context":{"arguments":{"kind":"7"}},"ref":{"type":"ref/resource","uri":"x://items/{id}"}}`},
		{Name: "logging/setLevel:debug", Params: `{"level":"debug"}`},
		{Name: "tools/call:touch", Params: `{"arguments":{"uri":"x://a"},"name":"touch"}`, Cancel: &driver.Cancel{After: 50 * time.Millisecond, P: 0.1}, Changes: "x://a"},
		{Name: "tools/list", MaxPages: 7},
	}
	if d := cmp.Diff(want, all); d != "" {
		t.Fatalf("ops (-want +got):\n%s", d)
	}
}

// Every mistake in the new fields is reported, naming its field.
func TestMCPOpsValidation(t *testing.T) {
	p, errs := profile.ParseProfile([]byte(`name: bad
url: http://127.0.0.1:1/mcp
ops:
  - {method: logging/setLevel, level: loud}
  - {method: resources/subscribe}
  - {method: completion/complete, argument: {name: x}}
  - {method: completion/complete, prompt: greet}
  - {method: tools/call, tool: echo, level: info, argument: {name: x}}
  - {method: tools/call, tool: slow, cancel: {after: 0s, p: 2}}
  - {method: tools/call, tool: echo, max_pages: 3}
  - {method: ping, changes: "x://b"}
  - {method: resources/subscribe, uri: "x://a"}
  - {method: tools/call, tool: touch, changes: "x://c"}
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	_, err := Compile(p, nil)
	var pe *profile.ProfileError
	if !errors.As(err, &pe) {
		t.Fatalf("err %v, want a *ProfileError", err)
	}
	var got []string
	for _, e := range pe.Errs {
		got = append(got, e.Error())
	}
	for _, want := range []string{
		`ops[0].level: "loud", want one of debug`,
		`ops[1].uri: required for resources/subscribe`,
		`ops[2]: completion/complete needs prompt`,
		`ops[3].argument.name: required for completion/complete`,
		`ops[4].level: only logging/setLevel takes a level`,
		`ops[4].argument: only completion/complete takes an argument`,
		`ops[5].cancel.after: 0s, want > 0`,
		`ops[5].cancel.p: 2, want a share in (0, 1]`,
		`ops[6].max_pages: 3, want ≥ 0 and only on a list op`,
		`ops[7].changes: only a tools/call changes a resource`,
		`ops[1]: resources/subscribe needs get_stream: true`,
		`ops[9].changes: no resources/subscribe op subscribes to "x://c"`,
	} {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, want)
		}
		if !found {
			t.Errorf("no error %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
}

func TestParseCancel(t *testing.T) {
	for in, want := range map[string]string{
		"after=50ms p=0.1":  "50ms 0.1",
		"after=2s,p=1":      "2s 1",
		"after=20ms":        "20ms 1",
		"p=0.5":             `error: "p=0.5": after= is required`,
		"after=50ms p=1.5":  "error: p=1.5: want a share in (0, 1]",
		"after=-1s":         "error: after=-1s: want a positive duration",
		"after=5ms when=2s": `error: "when": unknown field`,
	} {
		c, err := profile.ParseCancel(in)
		g := c.After.D().String() + " " + strings.TrimRight(strings.TrimRight(jsonNum(c.P), "0"), ".")
		if err != nil {
			g = "error: " + err.Error()
		}
		if !strings.HasPrefix(g, want) {
			t.Errorf("ParseCancel(%q) = %s, want %s", in, g, want)
		}
	}
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// A server that ignores notifications/cancelled and answers anyway is
// caught: the after-cancel verdict equals exactly the messages it wrote
// after acknowledging the cancels; cancelled calls are reported apart
// (not completed, not errors), and their share follows p.
func TestCancelIgnoredCaught(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		ci := &mcptest.CancelIgnorer{Work: 50 * time.Millisecond, Late: 10 * time.Millisecond}
		ci.Install(fake)
		p := echoProfile()
		// One session (the fake names every session s1, so request ids
		// must not repeat), four requests in flight.
		p.VUs, p.Concurrency, p.Duration, p.Protocol = 1, 4, profile.Duration(5*time.Second), driver.Protocol20251125
		p.Ops = []profile.OpSpec{{Method: "tools/call", Tool: "slow", Progress: true, Weight: weight(1), Cancel: &profile.CancelSpec{After: profile.Duration(20 * time.Millisecond), P: 0.5}}}
		sum := runFake(t, p, fake)
		o := sum.Ops[0]
		if ci.Planted() == 0 || o.Cancelled == 0 {
			t.Fatalf("nothing cancelled, nothing planted")
		}
		if d := cmp.Diff(map[string]int64{"post:after-cancel": ci.Planted()}, faults(sum)); d != "" {
			t.Fatalf("verdicts (-planted +judged):\n%s", d)
		}
		if o.Cancelled != ci.Cancels() || o.Errors != 0 || o.CancelRaced != 0 || o.Count+o.Cancelled != ci.Calls() {
			t.Fatalf("cancelled %d (server saw %d cancels), completed %d, errors %d, raced %d; server answered %d", o.Cancelled, ci.Cancels(), o.Count, o.Errors, o.CancelRaced, ci.Calls())
		}
		if r := o.CancelledRate; r < 0.4 || r > 0.6 {
			t.Errorf("cancelled share %.3f, want about 0.5", r)
		}
	})
}

// The mcp-features profile against the official Go SDK server: nothing
// arrives after a cancel (the server stops the call and sends nothing
// more), the server received exactly the cancels the summary counts, lists
// are followed over several pages, every log call's 3 messages arrive,
// tool-list changes reach the GET streams, and the tool error's own
// message is the error example.
func TestMCPFeaturesCleanOnRefServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	t.Parallel()
	p, err := profile.LoadProfile("mcp-features")
	if err != nil {
		t.Fatal(err)
	}
	p.Duration, p.Warmup, p.Protocol = profile.Duration(2*time.Second), 0, driver.Protocol20251125
	for i := range p.Ops {
		if p.Ops[i].Tool == "slow" {
			// Far longer than the cancel's 20 ms: no call may end before its
			// cancel arrives, however loaded the machine (-race).
			p.Ops[i].Arguments = map[string]any{"ms": 1000}
		}
	}
	sum, st := runRef(t, refserver.Options{PageSize: p.Server.PageSize}, p)
	if f := faults(sum); len(f) != 0 {
		t.Fatalf("a correct server judged faulty: %v", f)
	}
	ops := map[string]*struct{ count, cancelled, pages int64 }{}
	for _, o := range sum.Ops {
		ops[o.Name] = &struct{ count, cancelled, pages int64 }{o.Count, o.Cancelled, o.Pages}
	}
	a := sum.All
	if a.Cancelled == 0 || a.Cancelled != st.Cancels || a.CancelRaced != 0 || ops["tools/call:slow"].cancelled != a.Cancelled {
		t.Errorf("cancelled %d (raced %d), the server received %d cancels", a.Cancelled, a.CancelRaced, st.Cancels)
	}
	if l := ops["tools/list"]; l.pages < 3*l.count || l.count == 0 {
		t.Errorf("tools/list: %d pages over %d calls, want ≥ 3 a call (15 tools, 5 a page)", l.pages, l.count)
	}
	if n := a.Notifications; n == nil || n.Messages == 0 || n.Messages%3 != 0 || n.Messages > 3*ops["tools/call:log"].count {
		t.Errorf("log messages %+v for %d log calls of 3", n, ops["tools/call:log"].count)
	}
	if g := sum.GETStreams; g == nil || g.Notifications == nil || g.Notifications.ToolsListChanged == 0 {
		t.Errorf("no tools/list_changed on the GET streams: %+v", g)
	}
	want := map[string]string{"tool-error": "tool returned isError: quota exceeded for key k1"}
	if d := cmp.Diff(want, a.ErrorExamples); d != "" || a.Errors != ops["tools/call:fail"].count {
		t.Errorf("error examples (-want +got):\n%s errors %d", d, a.Errors)
	}
}

// The subscriptions profile against the official Go SDK server: every
// change of the subscribed resource is notified, none is left over, and
// no notification is unmatched.
func TestSubscriptionsCleanOnRefServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	t.Parallel()
	p, err := profile.LoadProfile("subscriptions")
	if err != nil {
		t.Fatal(err)
	}
	p.Duration, p.Warmup, p.Protocol = profile.Duration(2*time.Second), 0, driver.Protocol20251125
	sum, _ := runRef(t, refserver.Options{}, p)
	s := sum.Subscriptions
	if f := faults(sum); len(f) != 0 || s == nil {
		t.Fatalf("faults %v, subscriptions %+v", f, s)
	}
	if s.Changes == 0 || s.Notified != s.Changes || s.Unnotified != 0 || s.Unmatched != 0 || s.Latency.P50 <= 0 {
		t.Fatalf("subscriptions %+v: want every change notified once", s)
	}
	for _, th := range sum.Thresholds {
		if !th.Pass {
			t.Errorf("threshold %s failed: %v", th.Expr, th.Actual)
		}
	}
}
