package probe_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/probe"
	"github.com/mcpbench/mcpbench/refserver"
)

const (
	hostCase       = "foreign Host, no Origin (DNS rebinding)"
	originCase     = "foreign Origin (DNS rebinding)"
	sameOriginCase = "same-origin Origin accepted"
	pingCase       = "ping returns {}"
	crossTalkCase  = "concurrent calls: no cross-talk between streams"
	pollCase       = "resume a stream the server closed (SSE polling)"
)

func probeWith(t *testing.T, url string, opts probe.Options) *probe.Report {
	t.Helper()
	r, err := probe.Run(t.Context(), &driver.Config{URL: url}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests > probeBudget {
		t.Errorf("the probe sent %d requests, more than %d", r.Requests, probeBudget)
	}
	return r
}

// Host and Origin are checked apart: go-sdk and mcp-go refuse a foreign
// Host but serve a foreign Origin; a server that refuses its own origin
// refuses every browser client; one without Host checks is open to a
// rebound page's requests that carry no Origin.
func TestProbeHostAndOriginApart(t *testing.T) {
	tests := []struct {
		name   string
		faults mcptest.ProbeFaults
		differ []string
		detail map[string]string // case → part of its detail
	}{
		{"compliant", mcptest.ProbeFaults{}, nil, map[string]string{hostCase: "Host: evil.example:", sameOriginCase: "HTTP 200"}},
		{"Host only (go-sdk, mcp-go)", mcptest.ProbeFaults{IgnoreOrigin: true}, []string{originCase},
			map[string]string{originCase: "to Origin http://evil.example", hostCase: "HTTP 403"}},
		{"Origin only", mcptest.ProbeFaults{IgnoreHost: true}, []string{hostCase}, map[string]string{hostCase: "served, as a page of a rebound name would be"}},
		{"refuses same-origin", mcptest.ProbeFaults{RefuseSameOrigin: true}, []string{sameOriginCase},
			map[string]string{sameOriginCase: "the server refuses its own origin, so every browser client"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := probeWith(t, serveFake(t, &mcptest.ProbeFake{Faults: tt.faults}), probe.Options{})
			if diff := cmp.Diff(tt.differ, differing(r)); diff != "" {
				t.Errorf("differing cases (-want +got):\n%s", diff)
			}
			for name, part := range tt.detail {
				if c := caseNamed(t, r, name); !strings.Contains(c.Detail, part) {
					t.Errorf("%s: detail %q lacks %q", name, c.Detail, part)
				}
			}
			if c := caseNamed(t, r, hostCase); c.Protocol != "2025-11-25" || !strings.Contains(c.Spec, "DNS rebinding") {
				t.Errorf("Host case %+v", c)
			}
		})
	}
}

// The Host check applies to local servers only: a public name is no
// rebinding target, so a server there that serves any Host is not judged.
func TestProbeHostCheckLocalOnly(t *testing.T) {
	srv := httptest.NewServer(&mcptest.ProbeFake{Faults: mcptest.ProbeFaults{IgnoreHost: true}})
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr) // every name reaches the fake
	}}}
	r, err := probe.Run(t.Context(), &driver.Config{URL: "http://mcp.example.com/mcp", HTTPClient: hc}, probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := caseNamed(t, r, hostCase); c.Result != probe.NA || !strings.Contains(c.Detail, "not on a loopback or private address (mcp.example.com)") {
		t.Errorf("public name: Host case %+v", c)
	}
	if c := caseNamed(t, r, sameOriginCase); !c.OK || !strings.Contains(c.Detail, "Origin: http://mcp.example.com:") {
		t.Errorf("public name: same-origin case %+v", c)
	}
}

func TestProbePingResult(t *testing.T) {
	r := probeWith(t, serveFake(t, &mcptest.ProbeFake{Faults: mcptest.ProbeFaults{PingResult: true}}), probe.Options{})
	if c := caseNamed(t, r, pingCase); c.Result != probe.Differs || c.Detail != `result {"ok":true}` {
		t.Errorf("ping case %+v", c)
	}
	r = probeWith(t, serveFake(t, &mcptest.ProbeFake{}), probe.Options{})
	if c := caseNamed(t, r, pingCase); !c.OK {
		t.Errorf("ping case on a compliant fake %+v", c)
	}
}

// A server that sends one call's progress on another call's stream (as
// mcp-go does) differs, with the request ids in the evidence.
func TestProbeCrossTalk(t *testing.T) {
	r := probeWith(t, serveFake(t, &mcptest.ProbeFake{Faults: mcptest.ProbeFaults{CrossTalk: true}}), probe.Options{})
	if diff := cmp.Diff([]string{crossTalkCase}, differing(r)); diff != "" {
		t.Errorf("differing cases (-want +got):\n%s", diff)
	}
	c := caseNamed(t, r, crossTalkCase)
	if !regexp.MustCompile(`the stream of request \d+ carried progress of request \d+ \(token "mcpbench-probe-c\d"\)`).MatchString(c.Detail) ||
		!strings.HasPrefix(c.Detail, "3 calls of progress{\"count\":3} at once (request ") {
		t.Errorf("cross-talk case detail %q", c.Detail)
	}
}

// The reference server keeps each call's progress on its own stream; the
// calls overlap (interval_ms spreads their progress).
func TestProbeCrossTalkRefServer(t *testing.T) {
	srv, err := refserver.Start(t.Context(), "", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	r := probeWith(t, srv.URL(), probe.Options{})
	c := caseNamed(t, r, crossTalkCase)
	want := regexp.MustCompile(`^3 calls of progress\{"count":3,"interval_ms":20\} at once \(request \d+: 3 own progress, \d+: 3 own progress, \d+: 3 own progress\)$`)
	if !c.OK || !want.MatchString(c.Detail) {
		t.Errorf("cross-talk case %+v", c)
	}
}

// --stream-tool names the tool to call, even one that is not read-only;
// a name the server does not list says so and calls nothing.
func TestProbeStreamToolNamed(t *testing.T) {
	f := &mcptest.ProbeFake{Tool: "ticker"}
	r := probeWith(t, serveFake(t, f), probe.Options{StreamTool: "ticker", StreamArgs: `{"count":2}`})
	if r.Streaming.Tool != "ticker" || r.Streaming.Args != `{"count":2}` || r.Streaming.Progress != 2 {
		t.Errorf("streaming %+v", r.Streaming)
	}
	if c := caseNamed(t, r, crossTalkCase); !c.OK || f.Calls("ticker") != 1+3 {
		t.Errorf("cross-talk case %+v; ticker called %d times, want 4", c, f.Calls("ticker"))
	}

	f = &mcptest.ProbeFake{}
	r = probeWith(t, serveFake(t, f), probe.Options{StreamTool: "nosuch"})
	const why = `not run: no tool named "nosuch" (--stream-tool); the server lists "progress"`
	if r.Streaming.Why != why || f.Calls("progress") != 0 {
		t.Errorf("streaming %+v, progress called %d times", r.Streaming, f.Calls("progress"))
	}
	if c := caseNamed(t, r, crossTalkCase); c.Result != probe.NA || !strings.HasSuffix(c.Detail, why) {
		t.Errorf("cross-talk case %+v", c)
	}
}

// A progress tool with close_after but no retry_ms (the TypeScript SDK
// server's) is made to close its stream; --close-args does it for a tool
// of another name.
func TestProbeCloseArgs(t *testing.T) {
	r := probeWith(t, serveFake(t, &mcptest.ProbeFake{NoRetryArg: true, RetryMS: 300}), probe.Options{})
	c := caseNamed(t, r, "retry hint before the server closes a stream")
	if !c.OK || c.Detail != `progress{"count":2,"close_after":2}: retry 300 ms, then closed after 4 events` {
		t.Errorf("retry case %+v", c)
	}
	if c := caseNamed(t, r, pollCase); !c.OK {
		t.Errorf("poll case %+v", c)
	}

	f := &mcptest.ProbeFake{Tool: "ticker", RetryMS: 200}
	r = probeWith(t, serveFake(t, f), probe.Options{StreamTool: "ticker", CloseArgs: `{"count":3,"close_after":1}`})
	if c := caseNamed(t, r, pollCase); !c.OK || !strings.Contains(c.Detail, "3 events more, the response, then the end") {
		t.Errorf("poll case %+v", c)
	}
	// Without --close-args the same tool is not made to close.
	r = probeWith(t, serveFake(t, &mcptest.ProbeFake{Tool: "ticker"}), probe.Options{StreamTool: "ticker"})
	if c := caseNamed(t, r, pollCase); c.Result != probe.NA || !strings.Contains(c.Detail, "--close-args") {
		t.Errorf("poll case without --close-args %+v", c)
	}
}

func TestProbeOptionsValidate(t *testing.T) {
	for _, tt := range []struct {
		o    probe.Options
		want string
	}{
		{probe.Options{StreamTool: "t", StreamArgs: "[1]"}, `--stream-args "[1]": not a JSON object`},
		{probe.Options{StreamTool: "t", CloseArgs: "{"}, `--close-args "{": not a JSON object`},
		{probe.Options{StreamArgs: "{}"}, "--stream-args and --close-args need --stream-tool"},
		{probe.Options{StreamTool: "t", StreamArgs: `{"a":1}`, CloseArgs: `{"b":2}`}, ""},
	} {
		err := tt.o.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: error %v, want %q", tt.o, err, tt.want)
		}
	}
}
