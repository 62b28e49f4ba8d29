package workload

import (
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

func progressOp(n int) profile.OpSpec {
	return profile.OpSpec{Method: "tools/call", Tool: "progress", Arguments: map[string]any{"count": n, "interval_ms": 2},
		Progress: true, Weight: weight(1), Expect: profile.Expect{Progress: n}}
}

// --concurrency 4 against a server that writes some progress notifications
// of one call on the stream of another call of the session in flight:
// the summary's misrouted equals what the server planted, nothing else is
// judged, and offenders.json names both requests.
func TestConcurrencyMisroutedAsPlanted(t *testing.T) {
	t.Parallel()
	fake := mcptest.New()
	mr := &mcptest.Misrouter{Steps: 4, Every: 2, Gap: time.Millisecond}
	mr.Install(fake)
	p := &profile.Profile{Name: "lanes", URL: "http://fake/mcp", VUs: 1, Concurrency: 4, Duration: profile.Duration(time.Second),
		Protocol: driver.Protocol20251125, Ops: []profile.OpSpec{progressOp(4)}}
	hc, stop := mcptest.ServePipe(fake)
	defer stop()
	pl, err := Compile(p, hc)
	if err != nil {
		t.Fatal(err)
	}
	rec := metrics.NewRecorder(pl.Names, 4)
	sum, err := Run(t.Context(), pl, Options{Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	if mr.Planted() == 0 {
		t.Fatal("no two calls overlapped: nothing planted")
	}
	want := map[string]int64{"post:misrouted": mr.Planted()}
	if d := cmp.Diff(want, faults(sum)); d != "" || sum.All.Errors != 0 {
		t.Fatalf("verdicts (-planted +judged):\n%s errors %v", d, sum.All.ErrorsByClass)
	}
	if sum.All.Count != mr.Calls() || sum.Concurrency != 4 {
		t.Fatalf("completed %d, the server answered %d; concurrency %d", sum.All.Count, mr.Calls(), sum.Concurrency)
	}
	offs, _ := rec.Offenders()
	both := regexp.MustCompile(`progress \d of request (\d+) \(in flight on another lane\) arrived on the stream of request (\d+)`)
	if len(offs) == 0 || len(offs[0].Evidence) == 0 || !both.MatchString(offs[0].Evidence[0]) {
		t.Fatalf("offenders %+v: want evidence naming both requests", offs)
	}
}

// Four requests in flight per session against the official Go SDK
// server, closed and open model, with GET streams, churn and deleted
// session checks: every verdict is 0, and completed calls equal the
// server's executions.
func TestConcurrencyCleanOnRefServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	t.Parallel()
	for _, open := range []bool{false, true} {
		p := &profile.Profile{Name: "lanes", VUs: 3, Concurrency: 4, Duration: profile.Duration(2 * time.Second), GETStream: true,
			CheckDeleted: true, Churn: profile.Churn{Rate: 3}, Protocol: driver.Protocol20251125, GracefulStop: profile.Duration(10 * time.Second),
			Ops: []profile.OpSpec{progressOp(3), {Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": "hi"}, Weight: weight(1)}}}
		if open {
			p.Rate, p.MaxVUs = 300, 3
		}
		sum, st := runRef(t, refserver.Options{TickInterval: 50 * time.Millisecond}, p)
		if f := faults(sum); len(f) != 0 || sum.All.Errors != 0 {
			t.Fatalf("open %v: a correct server judged faulty: %v, errors %v", open, f, sum.All.ErrorsByClass)
		}
		if sum.All.Count+sum.All.Interrupted != st.ToolCalls {
			t.Fatalf("open %v: completed %d (+%d interrupted), the server executed %d", open, sum.All.Count, sum.All.Interrupted, st.ToolCalls)
		}
		if sum.Sessions.Churned == 0 || sum.VUs != 3 {
			t.Fatalf("open %v: churned %d, VUs %d: the run did not exercise lanes with churn", open, sum.Sessions.Churned, sum.VUs)
		}
		// Every arrival due in the window was run or dropped (counted),
		// whatever the machine's speed: 300/s × 2 s.
		if arrivals := sum.All.Count + sum.All.Interrupted + sum.Dropped; open && (arrivals < 599 || arrivals > 601 || sum.All.Count == 0) {
			t.Fatalf("open: %d completed + %d interrupted + %d dropped, want the 600 arrivals", sum.All.Count, sum.All.Interrupted, sum.Dropped)
		}
	}
}

// Under 2026-07-28 (stateless: no session, no resumption) four requests
// in flight per VU stay clean against the reference server, and every
// call ran once.
func TestConcurrencyCleanModern(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server")
	}
	t.Parallel()
	p := &profile.Profile{Name: "lanes", VUs: 2, Concurrency: 4, Duration: profile.Duration(time.Second), Protocol: driver.Protocol20260728,
		GracefulStop: profile.Duration(10 * time.Second), Ops: []profile.OpSpec{progressOp(3)}}
	sum, st := runRef(t, refserver.Options{Mode: refserver.Mode2026}, p)
	if f := faults(sum); len(f) != 0 || sum.All.Errors != 0 || sum.All.Count == 0 {
		t.Fatalf("verdicts %v, errors %v, %d calls", f, sum.All.ErrorsByClass, sum.All.Count)
	}
	if sum.All.Count+sum.All.Interrupted != st.ToolCalls || sum.Protocol != driver.Protocol20260728 {
		t.Fatalf("completed %d (+%d), the server executed %d; protocol %s", sum.All.Count, sum.All.Interrupted, st.ToolCalls, sum.Protocol)
	}
}
