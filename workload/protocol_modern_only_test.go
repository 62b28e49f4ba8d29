package workload

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// Issue 34 item 9: a server that speaks only 2026-07-28 and refuses every
// legacy request (the TypeScript SDK v2 server). With session churn, the
// deleted-session check or resume chaos, auto asked for 2025-11-25
// anyway and was refused at every initialize: the run never started.
// Auto now picks what the server speaks and names the features that do
// not apply there, before the load and in the summary.

// modernOnlyFake is mcptest.ModernOnly with an echo tool.
func modernOnlyFake() *mcptest.ModernOnly {
	fake := slowFake(10 * time.Millisecond)
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/list", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"resultType": "complete", "tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
	})
	return mcptest.NewModernOnly(fake)
}

// runHandlerStart is runFakeStart for any handler.
func runHandlerStart(t *testing.T, p *profile.Profile, h http.Handler) (*results.Summary, []results.NotApplicable) {
	t.Helper()
	hc, stop := mcptest.ServePipe(h)
	defer stop()
	pl, err := Compile(p, hc)
	if err != nil {
		t.Fatal(err)
	}
	sink := &startSink{}
	sum, err := Run(t.Context(), pl, Options{Sinks: []results.Sink{sink}})
	if err != nil {
		t.Fatalf("the run did not start: %v", err)
	}
	if sink.info == nil {
		t.Fatal("the run never started its clock")
	}
	return sum, sink.info.NotApplicable
}

func TestAutoPicksModernOnlyServer(t *testing.T) {
	cases := []struct {
		name  string
		set   func(p *profile.Profile)
		feats []string
	}{
		{"churn", func(p *profile.Profile) { p.Churn = profile.Churn{Rate: 2} }, []string{featChurn}},
		{"check-deleted", func(p *profile.Profile) { p.CheckDeleted = true }, []string{featCheckDeleted}},
		{"resume chaos", func(p *profile.Profile) { p.Chaos = cutPOST() }, []string{featResume}},
		{"all three", func(p *profile.Profile) { p.Churn, p.CheckDeleted, p.Chaos = profile.Churn{Rate: 2}, true, cutPOST() },
			[]string{featChurn, featCheckDeleted, featResume}},
	}
	// The fake answers JSON: the cuts have no stream to cut either
	// (named from the preflight ping, as against any JSON server).
	jsonCut := func(p *profile.Profile) bool { return p.Chaos != nil }
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := echoProfile()
				p.VUs, p.Duration = 2, profile.Duration(time.Second)
				c.set(p)
				fake := modernOnlyFake()
				sum, before := runHandlerStart(t, p, fake)
				if sum.Protocol != "2026-07-28" || !strings.Contains(sum.ProtocolWhy, "speaks only 2026-07-28") {
					t.Fatalf("auto chose %s (%s): want 2026-07-28, the only version the server speaks", sum.Protocol, sum.ProtocolWhy)
				}
				for _, f := range c.feats {
					if !named(before, f, "2026-07-28") || !named(sum.NotApplicable, f, "2026-07-28") {
						t.Fatalf("%s not named: before %v, summary %v", f, before, sum.NotApplicable)
					}
				}
				want := len(c.feats)
				if jsonCut(p) {
					want++
					if !named(sum.NotApplicable, featStreamFaults, "application/json") {
						t.Fatalf("JSON answers not named: %v", sum.NotApplicable)
					}
				}
				if len(sum.NotApplicable) != want {
					t.Fatalf("not applicable %v: want exactly %v", sum.NotApplicable, c.feats)
				}
				// Only the version probe is refused: server/discover's
				// legacy-era fallback (none) and no initialize.
				if n := fake.Refused(); n != 0 {
					t.Fatalf("%d legacy requests refused: want 0 (auto speaks 2026-07-28 only)", n)
				}
				if sum.All.Count == 0 || sum.All.Errors != 0 {
					t.Fatalf("%d ops, %d errors: want ops and no error", sum.All.Count, sum.All.Errors)
				}
			})
		})
	}
}

// A server that speaks both eras keeps the session-based version for
// these features (as before), and a legacy-only server too.
func TestAutoKeepsSessionsWhenServerSpeaksThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := echoProfile()
		p.VUs, p.Duration, p.Churn = 2, profile.Duration(time.Second), profile.Churn{Rate: 2}
		sum, _ := runFakeStart(t, p, bothEras())
		if sum.Protocol != "2025-11-25" || !strings.Contains(sum.ProtocolWhy, "session churn") || len(sum.NotApplicable) != 0 {
			t.Fatalf("auto chose %s (%s), not applicable %v: want 2025-11-25 for the churn", sum.Protocol, sum.ProtocolWhy, sum.NotApplicable)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		p := echoProfile()
		p.VUs, p.Duration, p.CheckDeleted = 2, profile.Duration(time.Second), true
		sum, _ := runFakeStart(t, p, slowFake(10*time.Millisecond))
		if sum.Protocol != "2025-11-25" || len(sum.NotApplicable) != 0 {
			t.Fatalf("auto chose %s (%s), not applicable %v", sum.Protocol, sum.ProtocolWhy, sum.NotApplicable)
		}
	})
}

// Issue 34 item 5: the profile's server: block names what it sets when
// it cannot apply (an external server); an empty block names nothing.
func TestServerNotApplicable(t *testing.T) {
	n, ok := ServerNotApplicable(profile.ServerSpec{GETRetry: profile.Duration(500 * time.Millisecond), Tick: profile.Duration(time.Second)})
	if !ok || n.Feature != "the profile's server: block (get_retry 500ms, tick 1s)" || !strings.Contains(n.Reason, "external server (--url)") || !strings.Contains(n.Reason, "GET streams carry no event") {
		t.Fatalf("%+v %v", n, ok)
	}
	n, ok = ServerNotApplicable(profile.ServerSpec{Mode: "stateless", PageSize: 5})
	if !ok || n.Feature != "the profile's server: block (mode stateless, page_size 5)" || strings.Contains(n.Reason, "GET streams") {
		t.Fatalf("%+v %v", n, ok)
	}
	if n, ok := ServerNotApplicable(profile.ServerSpec{}); ok {
		t.Fatalf("an empty block: %+v", n)
	}
}
