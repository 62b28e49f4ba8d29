package workload

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// Issue 20 item 4: a requested feature that cannot apply is named before
// the load starts (the sinks' RunInfo: run.json and the lines the CLI
// prints) and in the summary, instead of a silent zero.

// startSink keeps what the run knew when its clock started.
type startSink struct{ info *results.RunInfo }

func (s *startSink) Start(info *results.RunInfo)      { s.info = info }
func (s *startSink) Interval(*results.IntervalRecord) {}
func (s *startSink) End(*results.RunEnd)              {}

// runFakeStart is runFake that also returns the features named not
// applicable when the load started.
func runFakeStart(t *testing.T, p *profile.Profile, fake *mcptest.Server) (*results.Summary, []results.NotApplicable) {
	t.Helper()
	hc, stop := mcptest.ServePipe(fake)
	defer stop()
	pl, err := Compile(p, hc)
	if err != nil {
		t.Fatal(err)
	}
	sink := &startSink{}
	sum, err := Run(t.Context(), pl, Options{Sinks: []results.Sink{sink}})
	if err != nil {
		t.Fatal(err)
	}
	if sink.info == nil {
		t.Fatal("the run never started its clock")
	}
	return sum, sink.info.NotApplicable
}

// named reports whether list names feature with a reason holding why.
func named(list []results.NotApplicable, feature, why string) bool {
	for _, n := range list {
		if n.Feature == feature && strings.Contains(n.Reason, why) {
			return true
		}
	}
	return false
}

func cutPOST() *chaos.Plan {
	return &chaos.Plan{Faults: []chaos.Fault{{Action: chaos.ActionCut, When: chaos.When{AfterEvents: 1}, Target: chaos.TargetPOST}}}
}

// --check-deleted against a server that gives no session id: there is no
// DELETE to probe. Before, the run said it chose a session-based version
// for the check and then printed no hygiene line at all.
func TestCheckDeletedOnStatelessServerIsNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slowFake(10 * time.Millisecond)
		fake.SessionID = ""
		p := echoProfile()
		p.VUs, p.Duration, p.CheckDeleted = 2, profile.Duration(time.Second), true
		sum, before := runFakeStart(t, p, fake)
		if sum.Sessions.Hygiene != nil {
			t.Fatalf("hygiene %+v from a server with no sessions", sum.Sessions.Hygiene)
		}
		for _, l := range [][]results.NotApplicable{before, sum.NotApplicable} {
			if !named(l, featCheckDeleted, "no Mcp-Session-Id") {
				t.Fatalf("not named: before the load %v, summary %v", before, sum.NotApplicable)
			}
		}
	})
}

// bothEras speaks 2026-07-28 and 2025-11-25 (server/discover lists both).
func bothEras() *mcptest.Server {
	fake := slowFake(10 * time.Millisecond)
	fake.Handle(mcptest.K("POST", mcptest.Any, "server/discover", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"supportedVersions": []string{"2026-07-28", "2025-11-25"}})
	})
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/list", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
	})
	return fake
}

// Auto never picks 2026-07-28 (no resumption) for a run that cuts
// response streams to resume them: it picks the newest session-based
// version and says why. With 2026-07-28 asked for, resumption is named.
func TestAutoKeepsResumeChaosOnSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := echoProfile()
		p.VUs, p.Duration, p.Chaos = 1, profile.Duration(time.Second), cutPOST()
		sum, _ := runFakeStart(t, p, bothEras())
		if sum.Protocol != "2025-11-25" || !strings.Contains(sum.ProtocolWhy, "resuming cut response streams") {
			t.Fatalf("auto chose %s (%s): want 2025-11-25, for the resumes", sum.Protocol, sum.ProtocolWhy)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		p := echoProfile()
		p.VUs, p.Duration, p.Chaos, p.Protocol = 1, profile.Duration(time.Second), cutPOST(), "2026-07-28"
		sum, before := runFakeStart(t, p, bothEras())
		if sum.Protocol != "2026-07-28" || !named(before, featResume, "no stream resumption") || !named(sum.NotApplicable, featResume, "no stream resumption") {
			t.Fatalf("protocol %s; not applicable before %v, summary %v", sum.Protocol, before, sum.NotApplicable)
		}
	})
}

// Cuts against a server that answers JSON cut nothing ("0 cuts"): named,
// from the ping the run sends before its clock starts.
func TestChaosOnJSONAnswersIsNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := echoProfile()
		p.VUs, p.Duration, p.Chaos, p.Protocol = 1, profile.Duration(time.Second), cutPOST(), "2025-11-25"
		sum, before := runFakeStart(t, p, slowFake(10*time.Millisecond))
		if sum.Chaos == nil || sum.Chaos.CutsRST+sum.Chaos.CutsFIN != 0 || sum.All.Count == 0 {
			t.Fatalf("chaos %+v, %d ops: want ops and no cut", sum.Chaos, sum.All.Count)
		}
		if !named(before, featStreamFaults, "application/json") || !named(sum.NotApplicable, featStreamFaults, "application/json") {
			t.Fatalf("not named: before %v, summary %v", before, sum.NotApplicable)
		}
	})
}

// A storm on GET streams against a server whose GET is 405 has nothing to
// cut ("0 reconnect attempts, first +0 ms"): named before the load when
// the server is stateless (the GET is asked once), and in the summary
// from the run's own 405s when it has sessions (no probe: a second GET of
// a session could meet a 409).
func TestStormWithoutGETStreamIsNamed(t *testing.T) {
	storm := func(p *profile.Profile) {
		p.VUs, p.Duration, p.GETStream, p.Protocol = 2, profile.Duration(2*time.Second), true, "2025-11-25"
		p.Chaos = &chaos.Plan{Storm: &chaos.Storm{At: profile.Duration(time.Second), Target: chaos.TargetGET}}
	}
	synctest.Test(t, func(t *testing.T) {
		fake := slowFake(10 * time.Millisecond)
		fake.SessionID = ""
		p := echoProfile()
		storm(p)
		sum, before := runFakeStart(t, p, fake)
		if sum.GETStreams == nil || sum.GETStreams.Opened != 0 {
			t.Fatalf("GET streams %+v", sum.GETStreams)
		}
		for _, f := range []string{featGETStream, featGETStorm} {
			if !named(before, f, "405") || !named(sum.NotApplicable, f, "405") {
				t.Fatalf("%s not named: before %v, summary %v", f, before, sum.NotApplicable)
			}
		}
	})
	synctest.Test(t, func(t *testing.T) {
		p := echoProfile()
		storm(p)
		sum, before := runFakeStart(t, p, slowFake(10*time.Millisecond)) // session id s1, GET 405
		if len(before) != 0 || !named(sum.NotApplicable, featGETStorm, "every GET with 405") || !named(sum.NotApplicable, featGETStream, "every GET with 405") {
			t.Fatalf("before %v, summary %v", before, sum.NotApplicable)
		}
	})
}

// Against the reference server (the official go-sdk), every feature
// applies: no "not applicable" entry, and each feature shows in its
// figures. In its stateless and JSON modes the same run names what they
// rule out: the detection reads a real server's answers, not only a
// fake's.
func TestRefServerFeaturesApply(t *testing.T) {
	t.Parallel()
	profile := func() *profile.Profile {
		return &profile.Profile{
			Name: "applies", VUs: 4, Duration: profile.Duration(2 * time.Second),
			GETStream: true, CheckDeleted: true, Churn: profile.Churn{Rate: 4},
			Resume: profile.Resume{DefaultRetry: profile.Duration(50 * time.Millisecond)},
			Ops:    []profile.OpSpec{{Method: "tools/call", Tool: "progress", Arguments: map[string]any{"count": 3, "interval_ms": 5}, Progress: true, Weight: weight(1)}},
			Chaos: &chaos.Plan{
				Faults: []chaos.Fault{{Action: chaos.ActionCut, When: chaos.When{AfterEvents: 2}, Target: chaos.TargetPOST}},
				Storm:  &chaos.Storm{At: profile.Duration(time.Second), Target: chaos.TargetGET},
			},
		}
	}
	t.Run("stateful", func(t *testing.T) {
		sum, _ := runRef(t, refserver.Options{TickInterval: 100 * time.Millisecond}, profile())
		if len(sum.NotApplicable) != 0 {
			t.Fatalf("not applicable against the reference server: %v", sum.NotApplicable)
		}
		h, r := sum.Sessions.Hygiene, sum.All.Resumes
		switch {
		case h == nil || h.Probed == 0:
			t.Fatalf("check-deleted probed nothing: %+v", h)
		case sum.Chaos == nil || sum.Chaos.CutsRST+sum.Chaos.CutsFIN == 0 || r == nil || r.Accepted == 0:
			t.Fatalf("chaos %+v, resumes %+v: want cuts resumed", sum.Chaos, r)
		case sum.GETStreams == nil || sum.GETStreams.Opened == 0 || len(sum.Storms) != 1 || sum.Storms[0].Attempts == 0:
			t.Fatalf("GET streams %+v, storms %+v", sum.GETStreams, sum.Storms)
		case sum.Sessions.Churned == 0:
			t.Fatal("no session churned")
		}
	})
	t.Run("stateless", func(t *testing.T) {
		sum, _ := runRef(t, refserver.Options{Mode: refserver.ModeStateless}, profile())
		for _, f := range []string{featCheckDeleted, featGETStream, featGETStorm} {
			if !named(sum.NotApplicable, f, "") {
				t.Errorf("%s not named: %v", f, sum.NotApplicable)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		sum, _ := runRef(t, refserver.Options{Mode: refserver.ModeJSON}, profile())
		if !named(sum.NotApplicable, featStreamFaults, "application/json") {
			t.Errorf("cuts on JSON answers not named: %v", sum.NotApplicable)
		}
	})
}
