package proxy_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/proxy"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkRun is what the official go-sdk client did through the proxy.
type sdkRun struct {
	callErr  error
	verdicts proxy.ClientVerdicts
	planted  map[proxy.Kind]int
	log      string
}

// goSDKThrough runs the official go-sdk client (connect, one progress
// tool call, close) through the proxy planting specs.
func goSDKThrough(t *testing.T, opts refserver.Options, specs ...string) sdkRun {
	return goSDKThroughH2(t, opts, false, specs...)
}

// goSDKThroughH2 is goSDKThrough, with HTTP/2 without TLS (h2c, prior
// knowledge) on both sides of the proxy when h2c is set.
func goSDKThroughH2(t *testing.T, opts refserver.Options, h2c bool, specs ...string) sdkRun {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	up, _ := url.Parse(srv.URL())
	var faults []proxy.Fault
	for _, s := range specs {
		f, err := proxy.ParseFault(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	var log bytes.Buffer
	px, err := proxy.New(proxy.Config{Upstream: up, Faults: faults, Seed: 1, Log: &log, UpstreamH2C: h2c})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: px, Protocols: new(http.Protocols)}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	go hs.Serve(ln)
	defer hs.Close()
	hc := &http.Client{Transport: http.DefaultTransport}
	if h2c {
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		defer tr.CloseIdleConnections()
		hc.Transport = tr
	}

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk-through-proxy", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp", DisableStandaloneSSE: true, HTTPClient: hc}, nil)
	var run sdkRun
	if err != nil {
		run.callErr = err
	} else {
		_, run.callErr = cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"progressToken": "sdk-1"}, Name: "progress", Arguments: map[string]any{"count": 3, "interval_ms": 5}})
		cs.Close()
	}
	px.Close()
	run.verdicts, run.planted, run.log = px.Verdicts(), px.Planted(), log.String()
	return run
}

// linesOf returns the log lines with any of the words.
func linesOf(log string, words ...string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

func verdictJSON(v proxy.ClientVerdicts) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The official go-sdk client (v1.8.0, go.mod) through the proxy: what it
// does under each fault, judged by the proxy (run with -v for the log
// lines as evidence). The expectations pin the SDK's behaviour as found:
// it resumes a cut stream with the right Last-Event-ID, after the retry
// hint; it never re-sends the call; after a 404 it fails the call (no
// re-initialization, no DELETE); a 503 fails the call at once (Retry-After
// not honoured); a resumed stream that ends without the response fails the
// call (no second resume: judged not resumed).
func TestGoSDKClientThroughProxy(t *testing.T) {
	for _, tt := range []struct {
		specs  []string
		callOK bool
		check  func(v proxy.ClientVerdicts) bool
	}{
		{[]string{"cut after=2 target=tools/call"}, true, func(v proxy.ClientVerdicts) bool {
			return v.StreamsBroken == 1 && v.ResumesRightID == 1 && v.Checks["resume_last_event_id"] == "pass" && v.Checks["delete_at_end"] == "pass"
		}},
		{[]string{"cut after=2 close=fin target=tools/call"}, true, func(v proxy.ClientVerdicts) bool { return v.ResumesRightID == 1 && v.NotResumed == 0 }},
		{[]string{"cut before_id target=tools/call"}, false, func(v proxy.ClientVerdicts) bool {
			return v.BrokenWithoutID == 1 && v.Resumes == 0 && v.RequestsResent == 0
		}},
		{[]string{"cut after=2 target=tools/call", "retry retry=400"}, true, func(v proxy.ClientVerdicts) bool {
			return v.ResumesRightID == 1 && v.Checks["retry_hint"] == "pass"
		}},
		{[]string{"cut after=2 target=tools/call", "replay mode=too-little"}, true, func(v proxy.ClientVerdicts) bool { return v.ResumesRightID == 1 }},
		{[]string{"cut after=2 target=tools/call", "replay mode=silent for=300ms"}, false, func(v proxy.ClientVerdicts) bool {
			return v.ResumesRightID == 1 && v.Resumes == 1 && v.RequestsResent == 0 && v.NotResumed == 1 && v.Checks["resume_last_event_id"] == "fail"
		}},
		{[]string{"status code=404 target=tools/call"}, false, func(v proxy.ClientVerdicts) bool {
			return v.Planted404 == 1 && v.Checks["reinitialize_after_404"] == "fail" && v.SessionsDeleted == 0
		}},
		{[]string{"status code=503 retry_after=1 target=tools/call"}, false, func(v proxy.ClientVerdicts) bool { return v.SessionsDeleted == 1 }},
	} {
		t.Run(strings.Join(tt.specs, "+"), func(t *testing.T) {
			t.Parallel() // most of each run is the SDK's back-off before it resumes
			r := goSDKThrough(t, refserver.Options{}, tt.specs...)
			report := fmt.Sprintf("call error: %v\nplanted %v\nverdicts %s\nevidence:\n%s", r.callErr, r.planted, verdictJSON(r.verdicts),
				linesOf(r.log, `"ev":"request"`, `"ev":"fault"`, `"ev":"end"`, `"ev":"answer"`))
			if (r.callErr == nil) != tt.callOK || !tt.check(r.verdicts) {
				t.Fatalf("the go-sdk client did not do what it did when this test was written:\n%s", report)
			}
			t.Log(report)
		})
	}
}

// HTTP/2 without TLS on both sides (client → proxy → server): requests
// arrive and leave as HTTP/2, and a cut (RST_STREAM) is resumed as over
// HTTP/1.1.
func TestH2CBothSides(t *testing.T) {
	r := goSDKThroughH2(t, refserver.Options{H2C: true}, true, "cut after=2 target=tools/call")
	if r.callErr != nil || r.verdicts.ResumesRightID != 1 || r.planted[proxy.KindCut] != 1 {
		t.Fatalf("call error %v, verdicts %s, planted %v", r.callErr, verdictJSON(r.verdicts), r.planted)
	}
	for _, l := range strings.Split(strings.TrimSpace(r.log), "\n") {
		if (strings.Contains(l, `"ev":"request"`) || strings.Contains(l, `"ev":"answer"`)) && !strings.Contains(l, `"proto":"HTTP/2.0"`) {
			t.Fatalf("not HTTP/2: %s", l)
		}
	}
}

// HTTPS with HTTP/2 by ALPN on both sides (client → proxy → server with a
// private CA): the requests and the upstream's answers are HTTP/2, and a
// cut is resumed.
func TestTLSBothSides(t *testing.T) {
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{TLS: &refserver.TLSOptions{HTTP2Only: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	up, _ := url.Parse(srv.URL())
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(srv.CACertPEM())
	f, _ := proxy.ParseFault("cut after=2 target=tools/call")
	var log bytes.Buffer
	px, err := proxy.New(proxy.Config{Upstream: up, Faults: []proxy.Fault{f}, Log: &log, UpstreamCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(px)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "tls", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: ts.Client(), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, callErr := cs.CallTool(t.Context(), &mcp.CallToolParams{Meta: mcp.Meta{"progressToken": 1}, Name: "progress", Arguments: map[string]any{"count": 3}})
	cs.Close()
	px.Close()
	v := px.Verdicts()
	if callErr != nil || v.ResumesRightID != 1 || px.Planted()[proxy.KindCut] != 1 {
		t.Fatalf("call error %v, verdicts %s, planted %v\n%s", callErr, verdictJSON(v), px.Planted(), log.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if (strings.Contains(l, `"ev":"request"`) || strings.Contains(l, `"ev":"answer"`)) && !strings.Contains(l, `"proto":"HTTP/2.0"`) {
			t.Fatalf("not HTTP/2: %s", l)
		}
	}
}
