package workload

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// runRef runs p against a reference server (official Go SDK) over
// loopback and returns the summary and the server's counters.
func runRef(t *testing.T, opts refserver.Options, p *profile.Profile) (*results.Summary, refserver.Stats) {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p.URL = srv.URL()
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), pl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum, srv.Stats()
}

// faults lists every non-zero verdict of a run, streams and sessions.
func faults(s *results.Summary) map[string]int64 {
	out := map[string]int64{}
	add := func(where string, l *results.LedgerSummary) {
		if l == nil {
			return
		}
		for v, n := range l.Verdicts {
			if n != 0 {
				out[where+v] += n
			}
		}
	}
	add("post:", s.All.Ledger)
	if g := s.GETStreams; g != nil {
		add("get:", g.Ledger)
	}
	if h := s.Sessions.Hygiene; h != nil && h.Faulty > 0 {
		out["sessions:faulty"] = h.Faulty
	}
	return out
}

// A correct server stays clean: every verdict of every stream and session
// is 0 against the official Go SDK server — progress streams, GET streams
// with numbered notifications, churn with deleted-session checks, and
// response streams cut and resumed. Completed ops equal the server's tool
// executions (every call ran exactly once). This is the guard against false
// positives for every verdict the ledger gives.
func TestReferenceServerStaysClean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	t.Parallel()
	// Closed model: a goroutine per VU. Open model: the sessions share the
	// worker pool (open.go), churn and the GET streams included.
	for _, rate := range []float64{0, 150} {
		name := "closed"
		if rate > 0 {
			name = "open"
		}
		t.Run(name, func(t *testing.T) { referenceServerStaysClean(t, rate) })
	}
}

func referenceServerStaysClean(t *testing.T, rate float64) {
	p := &profile.Profile{Name: "clean", VUs: 8, Duration: profile.Duration(3 * time.Second), GETStream: true, CheckDeleted: true,
		Protocol: driver.Protocol20251125, Churn: profile.Churn{Rate: 4}, GracefulStop: profile.Duration(10 * time.Second),
		Ops: []profile.OpSpec{
			{Method: "tools/call", Tool: "progress", Arguments: map[string]any{"count": 3, "interval_ms": 5}, Progress: true, Weight: weight(2), Expect: profile.Expect{Progress: 3}},
			{Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": "hi"}, Progress: true, Weight: weight(2)},
			{Method: "tools/list", Weight: weight(1)},
		}}
	if rate > 0 {
		p.Rate, p.MaxVUs = rate, 8
	}
	sum, st := runRef(t, refserver.Options{TickInterval: 50 * time.Millisecond}, p)
	if f := faults(sum); len(f) != 0 || sum.All.Errors != 0 {
		t.Fatalf("a correct server judged faulty: %v, errors %v", f, sum.All.ErrorsByClass)
	}
	g := sum.GETStreams
	if g == nil || g.Events < 100 || g.Breaks != 0 || sum.Sessions.Churned == 0 || sum.Sessions.Hygiene == nil || sum.Sessions.Hygiene.Probed == 0 {
		t.Fatalf("the run did not exercise what it checks: GET %+v, churned %d, hygiene %+v", g, sum.Sessions.Churned, sum.Sessions.Hygiene)
	}
	tools := int64(0)
	for _, o := range sum.Ops {
		if o.Name != "tools/list" {
			tools += o.Count + o.Interrupted
		}
	}
	if tools != st.ToolCalls {
		t.Fatalf("completed tool calls %d, the server executed %d", tools, st.ToolCalls)
	}
	if sum.All.Ledger == nil || sum.All.Ledger.Streams < 100 {
		t.Fatalf("few streams judged: %+v", sum.All.Ledger)
	}
}

// Resume chaos against the reference server: every progress stream is cut
// after its second event and resumed; the ledger stays clean and every
// call ran once.
func TestReferenceServerResumeChaosClean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	t.Parallel()
	p := &profile.Profile{Name: "resume", VUs: 8, Duration: profile.Duration(3 * time.Second), Protocol: driver.Protocol20251125,
		GracefulStop: profile.Duration(10 * time.Second),
		Resume:       profile.Resume{DefaultRetry: profile.Duration(20 * time.Millisecond)},
		Ops:          []profile.OpSpec{{Method: "tools/call", Tool: "progress", Arguments: map[string]any{"count": 5, "interval_ms": 5}, Progress: true, Weight: weight(1), Expect: profile.Expect{Progress: 5}}},
		Chaos:        &chaos.Plan{Faults: []chaos.Fault{{Action: chaos.ActionCut, When: chaos.When{AfterEvents: 2}, Close: chaos.CloseRST}}}}
	sum, st := runRef(t, refserver.Options{}, p)
	if f := faults(sum); len(f) != 0 || sum.All.Errors != 0 {
		t.Fatalf("a correct server judged faulty: %v, errors %v", f, sum.All.ErrorsByClass)
	}
	r := sum.All.Resumes
	// One cut and one accepted resume per call (under load a resume GET may
	// need a second attempt: it is counted, and the ledger stays clean).
	if r == nil || r.Accepted != sum.All.Count || r.Attempts < r.Accepted || sum.Chaos.CutsRST != sum.All.Count {
		t.Fatalf("resumes %+v, cuts %d for %d calls: want one cut and one accepted resume per call", r, sum.Chaos.CutsRST, sum.All.Count)
	}
	// The summary keeps the plan as run (defaults filled) for a reader.
	var ran chaos.Plan
	if err := json.Unmarshal(sum.Chaos.Plan, &ran); err != nil || len(ran.Faults) != 1 || ran.Faults[0].When.AfterEvents != 2 ||
		ran.Faults[0].Close != chaos.CloseRST || ran.Faults[0].Target != chaos.TargetPOST {
		t.Fatalf("summary's chaos plan %s (%v): want the one cut after 2 events, RST, its target defaulted to post", sum.Chaos.Plan, err)
	}
	if sum.All.Count+sum.All.Interrupted != st.ToolCalls { // no warm-up: every execution is a measured call
		t.Fatalf("completed %d (+%d interrupted), the server executed %d", sum.All.Count, sum.All.Interrupted, st.ToolCalls)
	}
}

// A run releases its connections: after Run returns, the server sees none
// of them open (a sweep compiles a plan, and so a connection pool, per
// step; before the fix each step left its sessions' kept-alive
// connections open until the process ended: 500 sockets a step).
func TestRunClosesItsConnections(t *testing.T) {
	t.Parallel()
	var open atomic.Int64
	srv := httptest.NewUnstartedServer(okFake())
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	for step := 1; step <= 2; step++ {
		p := echoProfile()
		p.URL, p.Protocol, p.VUs, p.Duration = srv.URL+"/mcp", driver.Protocol20251125, 6, profile.Duration(200*time.Millisecond)
		pl, err := Compile(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(t.Context(), pl, Options{})
		if err != nil || sum.All.Count == 0 || sum.All.Errors != 0 {
			t.Fatalf("step %d: %v, %d ops, errors %v", step, err, sum.All.Count, sum.All.ErrorsByClass)
		}
		for deadline := time.Now().Add(5 * time.Second); open.Load() != 0; {
			if time.Now().After(deadline) {
				t.Fatalf("step %d: %d connections still open after the run returned", step, open.Load())
			}
			time.Sleep(5 * time.Millisecond) // polling the server's count, bounded by the deadline
		}
	}
}
