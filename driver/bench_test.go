package driver_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// sseHandler is the benchmarks' minimal SSE server (mcptest.BenchSSE).
var sseHandler = mcptest.BenchSSE

func benchSession(b *testing.B, cfg *driver.Config) *driver.Session {
	s, err := driver.NewSession(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	var res driver.Result
	if err := s.Initialize(b.Context(), &res); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchCalls times one tools/call (echo, with a progress token) per
// iteration on s.
func benchCalls(b *testing.B, s *driver.Session) {
	o, _ := driver.NewOp("", "tools/call", []byte(`{"name":"echo","arguments":{"text":"hello"}}`), true)
	var res driver.Result
	b.ReportAllocs()
	for b.Loop() {
		res.Reset()
		s.Do(b.Context(), o, &res)
		if res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}

// BenchmarkToolsCallSSE is the driver's hot path: one tools/call with a
// progress token, answered over SSE (priming event + response) by a minimal
// in-process server. Allocations include the server's (same process).
func BenchmarkToolsCallSSE(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(sseHandler))
	defer ts.Close()
	benchCalls(b, benchSession(b, &driver.Config{URL: ts.URL}))
}

// BenchmarkToolsCallSSERefServer is the same call answered by the go-sdk
// reference server in-process: the server's cost dominates.
func BenchmarkToolsCallSSERefServer(b *testing.B) {
	srv, err := refserver.Start(b.Context(), "", refserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	benchCalls(b, benchSession(b, &driver.Config{URL: srv.URL()}))
}

// benchChaos runs the hot path through a chaos transport built from plan.
func benchChaos(b *testing.B, plan chaos.Plan) {
	ts := httptest.NewServer(http.HandlerFunc(sseHandler))
	defer ts.Close()
	plan.Defaults()
	base := driver.NewHTTPClient(&driver.Config{})
	rt := chaos.New(plan, 1).Wrap(0, base.Transport)
	benchCalls(b, benchSession(b, &driver.Config{URL: ts.URL, HTTPClient: &http.Client{Transport: rt}}))
}

// BenchmarkToolsCallSSEChaosOff: chaos configured with an empty plan (the
// default): Wrap returns the transport itself.
func BenchmarkToolsCallSSEChaosOff(b *testing.B) { benchChaos(b, chaos.Plan{}) }

// BenchmarkToolsCallSSEChaosIdle: a plan whose cut never triggers, so every
// response body goes through the chaos wrapper and its event counting.
func BenchmarkToolsCallSSEChaosIdle(b *testing.B) {
	benchChaos(b, chaos.Plan{Faults: []chaos.Fault{{Action: chaos.ActionCut, When: chaos.When{AfterEvents: 1 << 30}}}})
}

// benchTransport times the hot path over one HTTP version against the
// minimal SSE server: http (our HTTP/1.1 transport), https with ALPN http/1.1
// (ours over TLS), h2 (net/http's HTTP/2, a connection per
// session) and h2c. Allocations and CPU include the in-process server's,
// which for HTTP/2 is net/http's HTTP/2 server.
func benchTransport(b *testing.B, tlsOn bool, mode, wantProto string) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(sseHandler))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(tlsOn)
	p.SetUnencryptedHTTP2(!tlsOn)
	ts.Config.Protocols = &p
	if tlsOn {
		ts.EnableHTTP2 = true
		ts.StartTLS()
	} else {
		ts.Start()
	}
	defer ts.Close()
	cfg := &driver.Config{URL: ts.URL, HTTP: mode, Insecure: true}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	s := benchSession(b, cfg)
	benchCalls(b, s)
	b.StopTimer()
	if got := httpclient.TransportStats(cfg.HTTPClient).Protocol(); got != wantProto {
		b.Fatalf("protocol %q, want %q", got, wantProto)
	}
	s.Close(b.Context())
}

func BenchmarkToolsCallSSEOverTLSHTTP1(b *testing.B) {
	benchTransport(b, true, httpclient.HTTP1, "http/1.1")
}
func BenchmarkToolsCallSSEOverTLSH2(b *testing.B) { benchTransport(b, true, httpclient.HTTPAuto, "h2") }
func BenchmarkToolsCallSSEH2C(b *testing.B)       { benchTransport(b, false, httpclient.HTTP2, "h2c") }
