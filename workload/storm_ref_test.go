package workload

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// Against the reference server, whose GET and listen streams stay open, a
// storm causes exactly one reconnect per stream it cut, and there are no
// other reconnects beside: the storm analysis stays clean.
func TestStormOnReferenceServerIsClean(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	for _, mode := range []refserver.Mode{refserver.ModeStateful, refserver.Mode2026} {
		t.Run(string(mode), func(t *testing.T) {
			p := echoProfile()
			p.VUs, p.Duration, p.GETStream = 4, profile.Duration(2500*time.Millisecond), true
			p.ThinkTime = profile.Duration(50 * time.Millisecond)
			p.Chaos = &chaos.Plan{Storm: &chaos.Storm{At: profile.Duration(time.Second), Target: chaos.TargetGET}}
			if mode == refserver.Mode2026 {
				p.Protocol = "2026-07-28" // subscriptions/listen streams
			}
			sum, _ := runRef(t, refserver.Options{Mode: mode}, p)
			if want := map[refserver.Mode]string{refserver.ModeStateful: "2025-11-25", refserver.Mode2026: "2026-07-28"}[mode]; sum.Protocol != want {
				t.Fatalf("protocol %q, want %q", sum.Protocol, want)
			}
			if len(sum.Storms) != 1 {
				t.Fatalf("storms %+v", sum.Storms)
			}
			w := sum.Storms[0]
			if w.Cuts != 4 || w.Attempts != w.Cuts || w.Normal != 0 || w.NormalPerSec != 0 {
				t.Fatalf("storm %+v: want the 4 streams cut, 4 reconnects caused, none other", w)
			}
		})
	}
}

// The same on response streams: a storm that cuts the 4 long calls in
// flight causes their 4 resumes (with Last-Event-ID), nothing else.
func TestStormOnReferenceServerResponseStreamsIsClean(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	p := echoProfile()
	p.Ops = []profile.OpSpec{{Method: "tools/call", Tool: "long", Arguments: map[string]any{"ms": 2000, "interval_ms": 50}, Progress: true, Weight: weight(1)}}
	p.VUs, p.Duration = 4, profile.Duration(2500*time.Millisecond)
	p.Chaos = &chaos.Plan{Storm: &chaos.Storm{At: profile.Duration(time.Second), Target: chaos.TargetPOST}}
	sum, _ := runRef(t, refserver.Options{}, p)
	if len(sum.Storms) != 1 {
		t.Fatalf("storms %+v", sum.Storms)
	}
	w := sum.Storms[0]
	if w.Cuts != 4 || w.Attempts != w.Cuts || w.Normal != 0 || sum.All.Resumes == nil || sum.All.Resumes.Attempts != 4 {
		t.Fatalf("storm %+v, resumes %+v: want the 4 calls cut and resumed once each, nothing else", w, sum.All.Resumes)
	}
}
