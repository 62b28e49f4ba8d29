package workload

import (
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// agentOps is the library the scenario tests' steps name.
func agentOps() []profile.OpSpec {
	return []profile.OpSpec{
		{Name: "list", Method: "tools/list"},
		{Name: "call", Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": "hi"}},
		{Name: "read", Method: "resources/read", URI: "mcpbench://static/small"},
		{Name: "ping", Method: "ping"},
	}
}

// agentSteps: list tools → 3 parallel calls → read a resource (then
// think) → ping twice.
func agentSteps(think time.Duration) []profile.StepSpec {
	return []profile.StepSpec{{Op: "list"}, {Op: "call", Parallel: 3}, {Op: "read", Think: profile.Duration(think)}, {Op: "ping", Repeat: 2}}
}

// stepCounts returns each op row's count by name.
func stepCounts(s *results.Summary) map[string]int64 {
	out := map[string]int64{}
	for _, o := range s.Ops {
		out[o.Name] = o.Count
	}
	return out
}

// In fake time, a server whose calls take 20 ms, the others 0: an
// iteration of list → 3 parallel calls → read + 30 ms think → ping ×2
// takes exactly 20 + 30 = 50 ms, the three calls really run at once (the
// server sees three in flight), each step's requests are counted per
// iteration as the step says, open and closed.
func TestScenarioTimesExactly(t *testing.T) {
	for _, open := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			fake := mcptest.New()
			inflight, peak := 0, 0
			var mu = make(chan struct{}, 1)
			fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
				mu <- struct{}{}
				inflight++
				peak = max(peak, inflight)
				<-mu
				time.Sleep(20 * time.Millisecond)
				mu <- struct{}{}
				inflight--
				<-mu
				w.Result(r, map[string]any{"content": []any{}})
			})
			for _, m := range []string{"tools/list", "resources/read"} {
				fake.Handle(mcptest.K("POST", mcptest.Any, m, ""), func(w *mcptest.Writer, r *mcptest.Request) {
					w.Result(r, map[string]any{"tools": []any{}, "contents": []any{}})
				})
			}
			p := &profile.Profile{Name: "agent", URL: "http://fake/mcp", VUs: 1, Duration: profile.Duration(time.Second), Protocol: driver.Protocol20251125,
				Ops: agentOps(), Scenario: agentSteps(30 * time.Millisecond),
				Thresholds: []string{"agent:iteration_p99<49ms", "iterations_failed==0"}}
			if open {
				p.Rate, p.MaxVUs = 10, 1 // one iteration every 100 ms, each 50 ms long
			}
			sum := runFake(t, p, fake)
			its := int64(20) // closed: 1 s / 50 ms
			if open {
				its = 10
			}
			if len(sum.Scenarios) != 1 {
				t.Fatalf("scenarios %+v", sum.Scenarios)
			}
			sc := sum.Scenarios[0]
			want := map[string]int64{"agent#1:list": its, "agent#2:call": 3 * its, "agent#3:read": its, "agent#4:ping": 2 * its}
			if d := cmp.Diff(want, stepCounts(sum)); d != "" || sc.Iterations != its || sc.Failed != 0 || sum.All.Errors != 0 {
				t.Fatalf("open %v: steps (-want +got):\n%s iterations %d failed %d errors %d", open, d, sc.Iterations, sc.Failed, sum.All.Errors)
			}
			// Exact in fake time, up to the histogram's 3 significant digits.
			if l := sc.Iteration; math.Abs(l.P50-50) > 0.05 || math.Abs(l.Max-50) > 0.05 || l.Mean != 50 {
				t.Fatalf("open %v: iteration time p50 %v max %v mean %v ms, want exactly 50", open, l.P50, l.Max, l.Mean)
			}
			// The thresholds read the iteration table's numbers.
			if th := sum.Thresholds; len(th) != 2 || th[0].Pass || math.Abs(th[0].Actual-50) > 0.05 || !th[1].Pass || th[1].Actual != 0 {
				t.Fatalf("open %v: thresholds %+v, want iteration p99 50 ms failing 49 ms, failed 0 passing", open, th)
			}
			if peak != 3 {
				t.Fatalf("open %v: the server saw %d calls in flight at most, want the 3 of the parallel step", open, peak)
			}
			if got := strings.Join(sc.Steps, " → "); got != "agent#1:list → agent#2:call → agent#3:read → agent#4:ping" {
				t.Fatalf("steps %q", got)
			}
		})
	}
}

// Several named scenarios share a run by weight, against the official Go
// SDK server, closed and open: every request of every step completes, the
// calls the server executed are the call steps' requests, and no verdict
// is raised.
func TestScenariosOnRefServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	t.Parallel()
	for _, open := range []bool{false, true} {
		three, one := 3, 1
		p := &profile.Profile{Name: "agents", VUs: 4, Duration: profile.Duration(2 * time.Second), Protocol: driver.Protocol20251125,
			GETStream: true, GracefulStop: profile.Duration(10 * time.Second), Ops: agentOps(),
			Scenarios: []profile.ScenarioSpec{
				{Name: "agent", Weight: &three, Steps: agentSteps(5 * time.Millisecond)},
				{Name: "lister", Weight: &one, Steps: []profile.StepSpec{{Op: "list", Repeat: 2}}},
			}}
		if open {
			p.Rate = 100
		}
		sum, st := runRef(t, refserver.Options{}, p)
		if f := faults(sum); len(f) != 0 || sum.All.Errors != 0 || sum.All.Interrupted != 0 {
			t.Fatalf("open %v: verdicts %v errors %v", open, f, sum.All.ErrorsByClass)
		}
		byName := map[string]results.ScenarioSummary{}
		for _, sc := range sum.Scenarios {
			byName[sc.Name] = sc
		}
		a, l := byName["agent"], byName["lister"]
		c := stepCounts(sum)
		if a.Iterations == 0 || l.Iterations == 0 || c["agent#2:call"] != 3*a.Iterations || c["agent#4:ping"] != 2*a.Iterations || c["lister#1:list"] != 2*l.Iterations {
			t.Fatalf("open %v: iterations agent %d lister %d, steps %v", open, a.Iterations, l.Iterations, c)
		}
		if st.ToolCalls != c["agent#2:call"] {
			t.Fatalf("open %v: the server executed %d calls, the call step completed %d", open, st.ToolCalls, c["agent#2:call"])
		}
		if ratio := float64(a.Iterations) / float64(a.Iterations+l.Iterations); ratio < 0.6 || ratio > 0.9 {
			t.Fatalf("open %v: agent ran %.2f of the iterations, want about 3/4 by weight", open, ratio)
		}
		if a.Iteration.P50 < 5 || a.Iteration.P50 > a.Iteration.P99 {
			t.Fatalf("open %v: agent iteration times %+v (5 ms of think time in each)", open, a.Iteration)
		}
		// Every iteration due in the window ran or was dropped (counted),
		// whatever the machine's speed: 100/s × 2 s.
		if n := a.Iterations + l.Iterations + a.Dropped + l.Dropped; open && (n < 199 || n > 201) {
			t.Fatalf("open: %d + %d iterations, %d + %d dropped, want the 200 arrivals", a.Iterations, l.Iterations, a.Dropped, l.Dropped)
		}
	}
}

// Scenario mistakes name their field.
func TestScenarioValidation(t *testing.T) {
	zero := 0
	p := &profile.Profile{Name: "bad", Ops: agentOps(), Concurrency: 2,
		Scenarios: []profile.ScenarioSpec{
			{Name: "a", Steps: []profile.StepSpec{{Op: "nope"}, {Op: "call", Parallel: -1, Repeat: -2}}},
			{Name: "a", Weight: &zero},
		}}
	p.Defaults()
	var got []string
	for _, e := range p.Validate() {
		got = append(got, e.Error())
	}
	for _, want := range []string{
		`concurrency: 2 with scenarios`,
		`scenarios[0].steps[0].op: "nope" is not an op of ops`,
		`scenarios[0].steps[1].parallel: -1`,
		`scenarios[0].steps[1].repeat: -2`,
		`scenarios[1].name: "a" used twice`,
		`scenarios[1].steps: no steps`,
	} {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, want)
		}
		if !found {
			t.Errorf("no error containing %q in %q", want, got)
		}
	}
}
