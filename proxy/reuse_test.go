package proxy_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbench/mcpbench/proxy"
)

// An SSE answer short enough that the server sent a Content-Length is
// forwarded whole though re-encoded (the length is dropped: chunked), and
// both connections are kept alive across calls (one each for 20 calls).
func TestSSEAnswerLengthAndReuse(t *testing.T) {
	var upConns, pxConns atomic.Int64
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: \n\n")
	}), ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			upConns.Add(1)
		}
	}}
	go hs.Serve(ln)
	defer hs.Close()
	up, _ := url.Parse("http://" + ln.Addr().String() + "/mcp")
	px, _ := proxy.New(proxy.Config{Upstream: up})
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	hs2 := &http.Server{Handler: px, ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			pxConns.Add(1)
		}
	}}
	go hs2.Serve(ln2)
	defer hs2.Close()
	tr := &http.Transport{}
	for range 20 {
		req, _ := http.NewRequest("POST", "http://"+ln2.Addr().String()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "id: 1\ndata: \n\n" {
			t.Fatalf("body %q, %v: want the priming event whole", b, err)
		}
	}
	if pxConns.Load() != 1 || upConns.Load() != 1 {
		t.Fatalf("client→proxy connections %d, proxy→upstream %d: want 1 and 1 (kept alive)", pxConns.Load(), upConns.Load())
	}
}

// Host and Origin reach the upstream as the client sent them (a server's
// DNS-rebinding and Origin checks judge the client, not the proxy), once
// the proxy's own guard let them through (a Host and an Origin it was
// told to allow: TestProxyRebinding has the refusals).
func TestHostAndOriginPassThrough(t *testing.T) {
	type seen struct{ host, origin string }
	got := make(chan seen, 1)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Host, r.Header.Get("Origin")}
		w.WriteHeader(http.StatusAccepted)
	})}
	go hs.Serve(ln)
	defer hs.Close()
	up, _ := url.Parse("http://" + ln.Addr().String() + "/mcp")
	px, _ := proxy.New(proxy.Config{Upstream: up, Hosts: []string{"mcp.example.test"}, AllowedOrigins: []string{"https://app.example.test"}})
	ln2, _ := net.Listen("tcp", "127.0.0.1:0")
	hs2 := &http.Server{Handler: px}
	go hs2.Serve(ln2)
	defer hs2.Close()
	req, _ := http.NewRequest("POST", "http://"+ln2.Addr().String()+"/anything", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Host = "mcp.example.test:8443"
	req.Header.Set("Origin", "https://app.example.test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d: want the upstream's 202", resp.StatusCode)
	}
	if s := <-got; s != (seen{"mcp.example.test:8443", "https://app.example.test"}) {
		t.Fatalf("upstream saw Host %q, Origin %q (status %d): want them as the client sent them", s.host, s.origin, resp.StatusCode)
	}
}
