package probe_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/probe"
	"github.com/mcpbench/mcpbench/refserver"
)

// startRef starts the reference server with opts until the test ends.
func startRef(t *testing.T, opts refserver.Options) *refserver.Server {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestProbeRefServer(t *testing.T) {
	t.Parallel()
	cases := func(r *probe.Report) map[string]probe.Case {
		m := map[string]probe.Case{}
		for _, c := range r.Cases {
			m[c.Case] = c
		}
		return m
	}
	srv := startRef(t, refserver.Options{Mode: refserver.ModeStateful})
	r, err := probe.Run(t.Context(), &driver.Config{URL: srv.URL()}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Discover.Modern || r.Sessions != "stateful" || r.Recommended != "2025-11-25" || r.GETStream != "offered" || !r.EventIDs || !r.Priming || r.Answers != "sse" {
		t.Fatalf("stateful: %+v", r)
	}
	c := cases(r)
	for _, name := range []string{"request with an unknown session id", "request on the deleted session", "notification", "DELETE the session"} {
		if !c[name].OK {
			t.Errorf("stateful %q: %+v", name, c[name])
		}
	}
	srv = startRef(t, refserver.Options{Mode: refserver.Mode2026})
	r, err = probe.Run(t.Context(), &driver.Config{URL: srv.URL()}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c = cases(r)
	if !r.Discover.Modern || r.Recommended != "2026-07-28" || !r.Discover.ListenAck || r.Sessions != "stateless" || r.GETStream != "not offered (405)" {
		t.Fatalf("2026: %+v", r)
	}
	for _, name := range []string{"2026-07-28: Mcp-Method header does not match the body", "2026-07-28: unknown method", "2026-07-28: unsupported (future) protocol version"} {
		if !c[name].OK {
			t.Errorf("2026 %q: %+v", name, c[name])
		}
	}
}

// The probe's stream-link row: a server with links passes with an exact
// replay at the link; one without passes, saying none is sent; a link to
// another origin (rewritten by the transport) differs.
func TestProbeStreamLink(t *testing.T) {
	const name = `rel="stream" resume URL (SEP-1335 draft)`
	for _, tc := range []struct {
		links  bool
		rt     http.RoundTripper
		ok     bool
		detail string
	}{
		{true, nil, true, "replayed exactly, then the end"},
		{false, nil, true, "not sent"},
		{true, linkRewriter{}, false, "another origin"},
	} {
		srv := startRef(t, refserver.Options{StreamLinks: tc.links})
		cfg := &driver.Config{URL: srv.URL()}
		if tc.rt != nil {
			cfg.HTTPClient = &http.Client{Transport: tc.rt}
		}
		r, err := probe.Run(t.Context(), cfg, probe.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var row *probe.Case
		for i := range r.Cases {
			if r.Cases[i].Case == name {
				row = &r.Cases[i]
			}
		}
		if row == nil || row.OK != tc.ok || !strings.Contains(row.Detail, tc.detail) {
			t.Errorf("links %v, rewritten %v: row %+v; want ok %v, detail with %q", tc.links, tc.rt != nil, row, tc.ok, tc.detail)
		}
		if tc.links && tc.ok && srv.Stats().LinkResumes != 1 {
			t.Errorf("server saw %d link resumes, want 1", srv.Stats().LinkResumes)
		}
	}
}

// linkRewriter points every Link header at another origin.
type linkRewriter struct{}

func (linkRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && resp.Header.Get("Link") != "" {
		resp.Header.Set("Link", `<http://other.invalid:9/mcp>; rel="stream"`)
	}
	return resp, err
}
