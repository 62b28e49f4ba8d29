package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// Sessions spread over two endpoints (VU i on endpoint i mod 2): each
// endpoint's completed calls in the summary equal what that server says
// it executed, its sessions are its VUs (3 and 2 of 5), and the totals
// are the sum.
func TestEndpointsSpreadSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two reference servers")
	}
	t.Parallel()
	var srvs []*refserver.Server
	for range 2 {
		srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		srvs = append(srvs, srv)
	}
	p := &profile.Profile{Name: "replicas", URL: srvs[0].URL(), URLs: []string{srvs[1].URL()}, VUs: 5, SourceAddrs: "127.0.0.2,127.0.0.3",
		Duration: profile.Duration(time.Second), Protocol: driver.Protocol20251125,
		Ops: []profile.OpSpec{{Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": "hi"}, Weight: weight(1)}}}
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(t.Context(), pl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Endpoints) != 2 || sum.All.Errors != 0 || !strings.Contains(sum.Target, "(+1 more endpoints)") {
		t.Fatalf("endpoints %+v, errors %d, target %q", sum.Endpoints, sum.All.Errors, sum.Target)
	}
	var total int64
	for i, ep := range sum.Endpoints {
		if ep.URL != srvs[i].URL() || ep.Count != srvs[i].Stats().ToolCalls || ep.Count == 0 {
			t.Errorf("endpoint %d: %s completed %d, its server executed %d", i, ep.URL, ep.Count, srvs[i].Stats().ToolCalls)
		}
		if want := int64(3 - i); ep.Sessions != want {
			t.Errorf("endpoint %d: %d sessions, want %d", i, ep.Sessions, want)
		}
		total += ep.Count
	}
	if total != sum.All.Count {
		t.Errorf("endpoints' counts add to %d, the run's to %d", total, sum.All.Count)
	}
}

// urls and source_addrs mistakes name their field.
func TestEndpointsValidation(t *testing.T) {
	p := &profile.Profile{Name: "bad", URLs: []string{"http://[::1"}, SourceAddrs: "127.0.0.x", Ops: []profile.OpSpec{{Method: "ping"}}}
	p.Defaults()
	var got []string
	for _, e := range p.Validate() {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"urls[0]: url: not a valid URL", "urls: given without url", `source_addrs: source address "127.0.0.x"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no error %q in:\n%s", want, all)
		}
	}
}
