package probe_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/probe"
	"github.com/mcpbench/mcpbench/refserver"
)

// casesNamed returns every case named name (a server of both eras has one
// per era for some).
func casesNamed(r *probe.Report, name string) []probe.Case {
	var out []probe.Case
	for _, c := range r.Cases {
		if c.Case == name {
			out = append(out, c)
		}
	}
	return out
}

// The session checks of a server that speaks both eras, each one
// answered in the legacy session.
var dualSessionCases = []string{
	"session id characters", "notification",
	"request with an unknown session id", "request with an unknown well-formed session id", "request without the session id",
	"GET: SSE stream or 405", "second concurrent GET", "GET without the session id", "GET with an unknown session id",
	"GET with an unknown well-formed session id", "GET with an unknown Last-Event-ID",
	"retry hint before the server closes a stream", "resume a stream the server closed (SSE polling)", "resume with Last-Event-ID (exact replay)",
	"DELETE the session", "DELETE the session again", "request on the deleted session", "GET on the deleted session",
}

// A correct server of both eras: the session checks run in its legacy
// session (and pass), the stateless ones in 2026-07-28, and the legacy
// resumption is checked although 2026-07-28 has none.
func TestProbeDualEraCompliant(t *testing.T) {
	r, err := probeURL(t, serveFake(t, &mcptest.ProbeFake{Modern: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := differing(r); len(d) != 0 {
		t.Fatalf("a compliant server of both eras differs in %v", d)
	}
	if !r.Discover.Modern || r.Sessions != "stateful" || r.Recommended != "2026-07-28" {
		t.Fatalf("report %+v", r)
	}
	for _, name := range dualSessionCases {
		for _, c := range casesNamed(r, name) {
			if c.Protocol != "2025-11-25" || c.Result != probe.OK {
				t.Errorf("%s: %s in %q, want ok in 2025-11-25 (%s)", name, c.Result, c.Protocol, c.Detail)
			}
		}
		if len(casesNamed(r, name)) != 1 {
			t.Errorf("%s: %d cases, want 1", name, len(casesNamed(r, name)))
		}
	}
	for _, c := range r.Cases {
		if strings.HasPrefix(c.Case, "2026-07-28: ") != (c.Protocol == "2026-07-28") && c.Case != "SSE answer ends after its response" {
			t.Errorf("%s: protocol %q", c.Case, c.Protocol)
		}
	}
	var eras []string
	for _, c := range casesNamed(r, "SSE answer ends after its response") {
		eras = append(eras, c.Protocol)
	}
	if diff := cmp.Diff([]string{"2026-07-28", "2025-11-25"}, eras); diff != "" {
		t.Errorf("the streaming answer's end, checked per era (-want +got):\n%s", diff)
	}
	if s := r.Streaming; s.Era != "2026-07-28" || s.AnsweredAs != "sse" || s.EventIDs || s.Progress != 3 {
		t.Errorf("2026-07-28 streaming %+v", s)
	}
	if s := r.LegacyStreaming; s == nil || s.Era != "2025-11-25" || !s.EventIDs || !s.Priming || s.Progress != 3 || !s.Ended {
		t.Errorf("legacy streaming %+v", s)
	}
	if !strings.HasPrefix(r.Resumable, "yes: a finished stream resumed from st") || !strings.HasSuffix(r.Resumable, ", in 2025-11-25 (2026-07-28 has no resumption)") {
		t.Errorf("resumable %q", r.Resumable)
	}
	if c := caseNamed(t, r, "resume a stream the server closed (SSE polling)"); !c.OK {
		t.Errorf("polling %+v", c)
	}
	if !r.Discover.ListenOK || !r.Discover.ListenAck || !strings.HasPrefix(r.Discover.Listen, "open (acknowledged ") {
		t.Errorf("listen: ok %v, ack %v, %q", r.Discover.ListenOK, r.Discover.ListenAck, r.Discover.Listen)
	}
}

// mcp-go's faults, planted in a server of both eras: ids checked by their
// format only (an unknown well-formed id and a deleted one are served) and
// a subscriptions/listen that acknowledges nothing and ends at once. The
// deleted-session checks must run in the legacy session (a 2026-07-28
// ping without a session id gets 404 "method not found", which says
// nothing of the session), and listen must not read as a stream.
func TestProbeDualEraMCPGoFaults(t *testing.T) {
	f := &mcptest.ProbeFake{Modern: true, Faults: mcptest.ProbeFaults{DeletedAccepted: true, WellFormedAccepted: true, ListenAcksNothing: true}}
	r, err := probeURL(t, serveFake(t, f), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DELETE the session again", "GET on the deleted session", "GET with an unknown well-formed session id",
		"request on the deleted session", "request with an unknown well-formed session id"}
	if diff := cmp.Diff(want, differing(r)); diff != "" {
		t.Errorf("differing cases (-want +got):\n%s", diff)
	}
	for _, name := range want {
		if c := caseNamed(t, r, name); c.Protocol != "2025-11-25" || c.Status != 200 && c.Status != 204 {
			t.Errorf("%s: %+v, want a 2xx in 2025-11-25", name, c)
		}
	}
	if c := caseNamed(t, r, "request with an unknown well-formed session id"); !strings.Contains(c.Detail, "checks ids by their format only") {
		t.Errorf("detail %q", c.Detail)
	}
	// The malformed id is refused: only the well-formed one shows the fault.
	if c := caseNamed(t, r, "request with an unknown session id"); !c.OK || c.Status != 404 {
		t.Errorf("malformed id %+v", c)
	}
	if r.Discover.ListenOK || !r.Discover.ListenAck || r.Discover.Listen != "ended at once: acknowledged nothing ({})" {
		t.Errorf("listen: ok %v, ack %v, %q", r.Discover.ListenOK, r.Discover.ListenAck, r.Discover.Listen)
	}
	if c := caseNamed(t, r, "2026-07-28: subscriptions/listen stream"); c.Result != probe.NA || !strings.Contains(c.Detail, "acknowledged none") {
		t.Errorf("listen case %+v", c)
	}
	if !strings.HasPrefix(r.Resumable, "yes: ") {
		t.Errorf("resumable %q", r.Resumable)
	}
}

// A listen stream that acknowledges what was asked and then ends at once
// is not a subscription stream.
func TestProbeListenEndsAtOnce(t *testing.T) {
	f := &mcptest.ProbeFake{Modern: true, Faults: mcptest.ProbeFaults{ListenEndsAtOnce: true}}
	r, err := probeURL(t, serveFake(t, f), nil)
	if err != nil {
		t.Fatal(err)
	}
	const name = "2026-07-28: subscriptions/listen stream"
	if diff := cmp.Diff([]string{name}, differing(r)); diff != "" {
		t.Errorf("differing cases (-want +got):\n%s", diff)
	}
	if c := caseNamed(t, r, name); c.Detail != `acknowledged {"toolsListChanged":true}, then ended the stream at once (2 events)` {
		t.Errorf("listen case %+v", c)
	}
	if r.Discover.ListenOK || !strings.HasPrefix(r.Discover.Listen, "ended at once after acknowledging") {
		t.Errorf("listen: ok %v, %q", r.Discover.ListenOK, r.Discover.Listen)
	}
}

// The reference server stays clean in every mode, with the new checks:
// the well-formed unknown ids get 404 where it has sessions, its
// subscriptions/listen stream stays open, and in 2026-07-28 mode (which
// serves legacy clients without sessions) every row says its era.
func TestProbeRefServerEras(t *testing.T) {
	for _, mode := range []refserver.Mode{refserver.ModeStateful, refserver.ModeJSON, refserver.ModeStateless, refserver.Mode2026} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			srv, err := refserver.Start(t.Context(), "", refserver.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			r, err := probeURL(t, srv.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := differing(r); len(d) != 0 {
				t.Errorf("the reference server differs in %v", d)
			}
			for _, c := range r.Cases {
				if c.Protocol == "" {
					t.Errorf("%s: no protocol", c.Case)
				}
			}
			stateful := mode == refserver.ModeStateful || mode == refserver.ModeJSON
			for _, name := range []string{"request with an unknown well-formed session id", "GET with an unknown well-formed session id"} {
				c := caseNamed(t, r, name)
				if stateful && (!c.OK || c.Status != 404) || !stateful && c.Result != probe.NA {
					t.Errorf("%s: %+v", name, c)
				}
			}
			dual := mode == refserver.Mode2026
			if (r.LegacyStreaming != nil) != dual || r.Discover.ListenOK != dual {
				t.Errorf("legacy streaming %+v, listen %v %q", r.LegacyStreaming, r.Discover.ListenOK, r.Discover.Listen)
			}
			if dual {
				if c := caseNamed(t, r, "2026-07-28: subscriptions/listen stream"); !c.OK {
					t.Errorf("listen %+v", c)
				}
				if r.Resumable != "not resumable (no event ids), in 2025-11-25 (2026-07-28 has no resumption)" {
					t.Errorf("resumable %q", r.Resumable)
				}
				if i := slices.IndexFunc(r.Cases, func(c probe.Case) bool { return c.Case == "DELETE the session" }); i < 0 || r.Cases[i].Protocol != "2025-11-25" {
					t.Errorf("DELETE case not in 2025-11-25")
				}
			}
		})
	}
}
