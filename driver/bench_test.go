package driver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// BenchmarkSSEDecoder decodes a stream of progress notifications.
func BenchmarkSSEDecoder(b *testing.B) {
	var stream []byte
	for i := range 100 {
		stream = append(stream, "id: s_"+strconv.Itoa(i)+"\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":"+strconv.Itoa(i)+",\"total\":100}}\n\n"...)
	}
	r := bytes.NewReader(stream)
	d := driver.NewSSEDecoder(r)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(stream)
		d.Start(r)
		for {
			if _, err := d.Next(); err != nil {
				break
			}
		}
	}
}

// oneByteReader returns its input one byte per Read, the worst chunking a
// server (or a slow network) can produce.
type oneByteReader struct {
	b []byte
	i int
}

func (r *oneByteReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[r.i]
	r.i++
	return 1, nil
}

// BenchmarkSSEDecoderOneByteChunks decodes streams delivered one byte per
// Read: the cost per byte must not depend on how long a line is (it did:
// a long line was rescanned after every read). Reports ns/byte.
func BenchmarkSSEDecoderOneByteChunks(b *testing.B) {
	var events []byte
	for i := range 100 {
		events = append(events, "id: s_"+strconv.Itoa(i)+"\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":"+strconv.Itoa(i)+",\"total\":100}}\n\n"...)
	}
	longLine := func(n int) []byte {
		s := append([]byte("data: "), bytes.Repeat([]byte("x"), n)...)
		return append(s, "\n\n"...)
	}
	for _, c := range []struct {
		name   string
		stream []byte
		events int
	}{
		{"events", events, 100},
		{"line-64KiB", longLine(64 << 10), 1},
		{"line-1MiB", longLine(1 << 20), 1},
		{"line-4MiB", longLine(4 << 20), 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := &oneByteReader{b: c.stream}
			d := driver.NewSSEDecoder(r)
			b.SetBytes(int64(len(c.stream)))
			b.ReportAllocs()
			for b.Loop() {
				r.i = 0
				d.Start(r)
				n := 0
				for {
					if _, err := d.Next(); err != nil {
						break
					}
					n++
				}
				if n != c.events {
					b.Fatalf("%d events, want %d", n, c.events)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c.stream)), "ns/byte")
		})
	}
}

// BenchmarkParseMessage scans one progress notification.
func BenchmarkParseMessage(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":3,"total":10,"message":"working"}}`)
	b.ReportAllocs()
	for b.Loop() {
		m, err := driver.ParseMessage(msg)
		if err != nil || m.Kind != driver.KindNotification {
			b.Fatal(err)
		}
		driver.FieldNumber(m.Params, "progress")
	}
}

// BenchmarkParseMessageToolsCall scans a typical tools/call response (text
// content, structured content, isError) and looks up isError, as the
// session does for every tools/call.
func BenchmarkParseMessageToolsCall(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1234,"result":{"content":[{"type":"text","text":"Weather in Berlin: 18.5 \u00b0C, partly cloudy.\nWind 12 km/h from the west; humidity 64%. Forecast for tomorrow: light rain in the afternoon."}],"structuredContent":{"city":"Berlin","temperature":18.5,"unit":"celsius","conditions":["partly cloudy","windy"],"wind":{"speed":12,"direction":"W"},"humidity":0.64,"alerts":null},"isError":false}}`)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := driver.ParseMessage(msg)
		if err != nil || m.Kind != driver.KindResponse {
			b.Fatal(err)
		}
		driver.Field(m.Result, "isError")
	}
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
