package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbench/mcpbench/proxy"
)

// TestProxyRebinding: the proxy's listener applies serve's Host and Origin
// rule before forwarding. The upstream checks neither (as many servers
// do), so what the proxy lets through a web page could read; each refused
// request must never reach it (exact count).
func TestProxyRebinding(t *testing.T) {
	var reached atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.WriteString(w, "upstream data")
	}))
	defer upstream.Close()
	up, _ := url.Parse(upstream.URL + "/mcp")
	px, err := proxy.New(proxy.Config{Upstream: up, AllowedOrigins: []string{"https://app.example"}, Hosts: []string{"proxy.test"}})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(px)
	defer func() { px.Close(); front.Close() }()
	port := front.URL[strings.LastIndex(front.URL, ":")+1:]

	want := 0
	for _, tc := range []struct {
		name, host, origin string
		code               int
	}{
		{"own host", "", "", 200},
		{"own origin", "", front.URL, 200},
		{"localhost host and origin", "localhost:" + port, "http://localhost:" + port, 200},
		{"allowed origin", "", "https://app.example", 200},
		{"certificate name as host", "proxy.test:" + port, "", 200},
		{"foreign host", "evil.example:" + port, "", 403},
		{"foreign host with its own origin", "evil.example:" + port, "http://evil.example:" + port, 403},
		{"foreign origin", "", "http://evil.example", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, front.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Fatalf("%d %q, want %d", resp.StatusCode, body, tc.code)
			}
			if tc.code == 200 {
				want++
				if string(body) != "upstream data" {
					t.Fatalf("body %q", body)
				}
			} else if !strings.HasPrefix(string(body), "Forbidden: ") {
				t.Fatalf("403 body %q: want the refusal", body)
			}
			if got := reached.Load(); got != int64(want) {
				t.Fatalf("upstream reached %d times, want %d", got, want)
			}
		})
	}
}

func TestProxyAllowedOriginInvalid(t *testing.T) {
	up, _ := url.Parse("http://127.0.0.1:1/mcp")
	_, err := proxy.New(proxy.Config{Upstream: up, AllowedOrigins: []string{"http://x/path"}})
	if err == nil || !strings.Contains(err.Error(), `"http://x/path"`) {
		t.Fatalf("err = %v, want one naming the entry", err)
	}
}
