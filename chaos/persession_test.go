package chaos

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpbench/mcpbench/httpclient"
)

// The chaos wrapper passes httpclient.PerSession through: over HTTP/2
// each session's wrapper has the session's own connection under it (and
// the VU's fault schedule); over HTTP/1.1 ForSession is the wrapper itself.
func TestWrapKeepsPerSession(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	send := func(rt http.RoundTripper) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	in := New(plan(t, "cut after_events=1 close=rst"), 1)

	h2 := in.Wrap(0, httpclient.New(httpclient.Options{HTTP: httpclient.HTTP2, Proxy: "none"}).Transport)
	ps, ok := h2.(httpclient.PerSession)
	if !ok {
		t.Fatalf("the wrapper %T is not an httpclient.PerSession", h2)
	}
	s1, s2 := ps.ForSession(), ps.ForSession()
	if s1 == h2 || s2 == h2 || s1 == s2 {
		t.Fatal("HTTP/2: the wrapper gave no transport of the session's own")
	}
	for range 2 {
		send(s1)
		send(s2)
	}
	if conns.Load() != 2 {
		t.Fatalf("two sessions over HTTP/2: %d connections, want 2", conns.Load())
	}
	if a, b, vu := len(Log(s1)), len(Log(s2)), len(Log(h2)); a != 4 || b != 4 || vu != 4 {
		t.Fatalf("decisions logged: %d and %d by the sessions, %d by the VU; want the VU's schedule (4) shared", a, b, vu)
	}

	h1 := in.Wrap(1, httpclient.New(httpclient.Options{HTTP: httpclient.HTTP1, Proxy: "none"}).Transport)
	if got := h1.(httpclient.PerSession).ForSession(); got != h1 {
		t.Fatalf("HTTP/1.1: ForSession gave %p, want the wrapper %p itself", got, h1)
	}
}
