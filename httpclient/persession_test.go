package httpclient

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// connServer is an HTTP server (h2c with prior knowledge too) that counts
// the connections it accepted.
func connServer(t *testing.T) (url string, conns func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			n++
			mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// getOK sends a GET with rt and returns the response, its body read.
func getOK(t *testing.T, rt http.RoundTripper, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ok" {
		t.Fatalf("body %q, %v", b, err)
	}
	return resp
}

// Under HTTP/2 (h2c here) each session's transport has a connection of its
// own, which its requests share; closing it closes that connection only.
// The bodies are the ones the chaos layer cuts by stream or by connection.
func TestPerSessionConnectionsH2C(t *testing.T) {
	url, conns := connServer(t)
	hc := New(Options{HTTP: HTTP2, Proxy: "none"})
	ps, ok := hc.Transport.(PerSession)
	if !ok {
		t.Fatalf("transport %T is not a PerSession", hc.Transport)
	}
	s1, s2 := ps.ForSession(), ps.ForSession()
	if s1 == hc.Transport || s2 == hc.Transport || s1 == s2 {
		t.Fatal("HTTP/2: ForSession gave no transport of the session's own")
	}
	for range 3 {
		for _, s := range []http.RoundTripper{s1, s2} {
			resp := getOK(t, s, url)
			if m, ok := resp.Body.(Multiplexed); !ok || !m.Multiplexed() {
				t.Fatalf("HTTP/2 body %T: not Multiplexed", resp.Body)
			}
			if _, ok := resp.Body.(ConnCutter); !ok {
				t.Fatalf("HTTP/2 body %T: not a ConnCutter", resp.Body)
			}
			resp.Body.Close()
		}
	}
	if got := conns(); got != 2 {
		t.Fatalf("two sessions of 3 requests each: the server saw %d connections, want 2", got)
	}
	s1.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	getOK(t, s1, url).Body.Close()
	getOK(t, s2, url).Body.Close()
	if got := conns(); got != 3 {
		t.Fatalf("after session 1 closed its connection: %d connections, want 3 (a new one for session 1 only)", got)
	}
	if diff := cmp.Diff(map[string]int64{"h2c": 3}, TransportStats(hc).Protocols); diff != "" {
		t.Errorf("connections by protocol (-want +got):\n%s", diff)
	}
}

// Under HTTP/1.1 sessions share the kept-alive connections: ForSession
// gives the transport itself, and a body owns its connection
// (ConnResetter, not Multiplexed).
func TestPerSessionSharedHTTP1(t *testing.T) {
	url, conns := connServer(t)
	hc := New(Options{HTTP: HTTP1, Proxy: "none"})
	ps := hc.Transport.(PerSession)
	s1, s2 := ps.ForSession(), ps.ForSession()
	if s1 != hc.Transport || s2 != hc.Transport {
		t.Fatal("HTTP/1.1: ForSession gave a transport of the session's own")
	}
	for range 3 {
		resp := getOK(t, s1, url)
		if _, ok := resp.Body.(ConnResetter); !ok {
			t.Fatalf("HTTP/1.1 body %T: not a ConnResetter", resp.Body)
		}
		if _, ok := resp.Body.(Multiplexed); ok {
			t.Fatalf("HTTP/1.1 body %T: Multiplexed", resp.Body)
		}
		resp.Body.Close()
		getOK(t, s2, url).Body.Close()
	}
	if got := conns(); got != 1 {
		t.Fatalf("6 requests one after another: %d connections, want 1 kept alive", got)
	}
	if st := TransportStats(hc); st.Protocol() != "http/1.1" || st.Connections != 1 {
		t.Errorf("protocol %q, %d connections; want http/1.1, 1", st.Protocol(), st.Connections)
	}
}
