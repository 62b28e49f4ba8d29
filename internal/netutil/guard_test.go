package netutil

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// onAddr returns a request to Host host with the Origin values origins,
// as if it had arrived on the local address local.
func onAddr(local, host string, origins ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "http://x/", nil)
	r.Host = host
	for _, o := range origins {
		r.Header.Add("Origin", o)
	}
	if local != "" {
		la, _ := net.ResolveTCPAddr("tcp", local)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, la))
	}
	return r
}

func TestGuard(t *testing.T) {
	origins, err := NewOriginPolicy([]string{"https://app.example"})
	if err != nil {
		t.Fatal(err)
	}
	g := Guard{Hosts: []string{"proxy.test"}, Origins: origins}
	for _, tc := range []struct {
		name, local, host string
		origins           []string
		want              string // "" served, else the refused header
	}{
		{"loopback host", "127.0.0.1:5665", "127.0.0.1:5665", nil, ""},
		{"localhost", "127.0.0.1:5665", "localhost:5665", nil, ""},
		{"ipv6 loopback", "[::1]:5665", "[::1]:5665", nil, ""},
		{"foreign host on loopback", "127.0.0.1:5665", "evil.example:5665", nil, "Host"},
		{"foreign host, no port", "127.0.0.1:5665", "evil.example", nil, "Host"},
		{"extra host", "127.0.0.1:5665", "PROXY.test:5665", nil, ""},
		{"foreign host off loopback", "192.0.2.1:5665", "evil.example:5665", nil, ""},
		{"unknown local address", "", "evil.example:5665", nil, ""},
		{"own origin", "127.0.0.1:5665", "127.0.0.1:5665", []string{"http://127.0.0.1:5665"}, ""},
		{"loopback names are one host", "127.0.0.1:5665", "127.0.0.1:5665", []string{"http://localhost:5665"}, ""},
		{"allowed origin", "127.0.0.1:5665", "127.0.0.1:5665", []string{"https://app.example:443"}, ""},
		{"foreign origin", "127.0.0.1:5665", "127.0.0.1:5665", []string{"http://evil.example"}, "Origin"},
		{"other port", "127.0.0.1:5665", "127.0.0.1:5665", []string{"http://127.0.0.1:1"}, "Origin"},
		{"other scheme", "127.0.0.1:5665", "127.0.0.1:5665", []string{"https://127.0.0.1:5665"}, "Origin"},
		{"opaque origin", "127.0.0.1:5665", "127.0.0.1:5665", []string{"null"}, "Origin"},
		{"one foreign of two", "127.0.0.1:5665", "127.0.0.1:5665", []string{"http://127.0.0.1:5665", "http://evil.example"}, "Origin"},
		{"foreign origin off loopback", "192.0.2.1:5665", "192.0.2.1:5665", []string{"http://evil.example"}, "Origin"},
		{"rebound name, own origin", "127.0.0.1:5665", "evil.example:5665", []string{"http://evil.example:5665"}, "Host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := g.Check(onAddr(tc.local, tc.host, tc.origins...))
			got := ""
			if e != nil {
				got = e.Header
			}
			if got != tc.want {
				t.Fatalf("Check = %v, want refusal of %q", e, tc.want)
			}
		})
	}
}

func TestGuardWrap(t *testing.T) {
	h := Guard{}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("data")) }))
	for _, tc := range []struct {
		host, origin string
		code         int
		body         string
	}{
		{"127.0.0.1:1", "", 200, "data"},
		{"evil.example:1", "", 403, "Forbidden: invalid Host header \"evil.example:1\"\n"},
		{"127.0.0.1:1", "http://evil.example", 403, "Forbidden: Origin \"http://evil.example\" is not allowed\n"},
	} {
		rec := httptest.NewRecorder()
		var o []string
		if tc.origin != "" {
			o = []string{tc.origin}
		}
		h.ServeHTTP(rec, onAddr("127.0.0.1:1", tc.host, o...))
		if rec.Code != tc.code || rec.Body.String() != tc.body {
			t.Errorf("Host %s Origin %q: %d %q, want %d %q", tc.host, tc.origin, rec.Code, rec.Body, tc.code, tc.body)
		}
	}
}

func TestOriginPolicyErrors(t *testing.T) {
	for _, s := range []string{"ftp://x", "http://x/path", "http://u@x", "x"} {
		if _, err := NewOriginPolicy([]string{s}); err == nil {
			t.Errorf("NewOriginPolicy(%q): no error", s)
		}
	}
}
