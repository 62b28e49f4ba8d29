package refserver

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// forbidden reports whether resp is the 403 of a refused Origin: a
// JSON-RPC error response without id.
func forbidden(t *testing.T, resp *http.Response) bool {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		return false
	}
	var m map[string]json.RawMessage
	if resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &m) != nil || m["id"] != nil || m["error"] == nil || string(m["jsonrpc"]) != `"2.0"` {
		t.Errorf("403 body %q (%s): want a JSON-RPC error response without id", body, resp.Header.Get("Content-Type"))
	}
	return true
}

func TestOriginValidation(t *testing.T) {
	allowed := []string{"https://app.example", "HTTP://Tool.Example:8080/"}
	for _, mode := range []Mode{ModeStateful, ModeJSON, ModeStateless, Mode2026} {
		t.Run(string(mode), func(t *testing.T) {
			s := startServer(t, Options{Mode: mode, AllowedOrigins: allowed})
			_, port, _ := net.SplitHostPort(s.Addr())
			ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
			for _, tc := range []struct {
				origin string
				want   bool // 403
			}{
				{"", false},
				{"http://evil.example", true},
				{"null", true},
				{"http://127.0.0.1:" + port, false},
				{"http://localhost:" + port, false},
				{"http://[::1]:" + port, false},
				{"http://LOCALHOST:" + port + "/", false},
				{"http://127.0.0.1:1", true},              // another port
				{"https://127.0.0.1:" + port, true},       // another scheme
				{"http://127.0.0.1:" + port + "/x", true}, // not an origin
				{"https://app.example", false},
				{"https://app.example:443", false},
				{"http://tool.example:8080", false},
				{"http://app.example", true},
				{"http://tool.example", true},
			} {
				h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
				if tc.origin != "" {
					h["Origin"] = tc.origin
				}
				if got := forbidden(t, rawRequest(t, http.MethodPost, s.URL(), h, ping)); got != tc.want {
					t.Errorf("POST with Origin %q: 403 %v, want %v", tc.origin, got, tc.want)
				}
			}
			// Every method is checked, GET included (a browser's EventSource).
			for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodOptions, http.MethodPost} {
				for origin, want := range map[string]bool{"http://evil.example": true, "https://app.example": false} {
					h := map[string]string{"Origin": origin, "Accept": "text/event-stream", "Mcp-Session-Id": "none"}
					if got := forbidden(t, rawRequest(t, method, s.URL(), h, "")); got != want {
						t.Errorf("%s with Origin %s: 403 %v, want %v", method, origin, got, want)
					}
				}
			}
		})
	}
	s := startServer(t, Options{AllowedOrigins: []string{"*"}})
	if forbidden(t, rawRequest(t, http.MethodPost, s.URL(), map[string]string{"Origin": "http://evil.example"}, initializeBody)) {
		t.Error(`AllowedOrigins "*" refused a foreign Origin`)
	}
}

func TestAllowedOriginsValidate(t *testing.T) {
	err := Options{AllowedOrigins: []string{"*", "https://ok.example", "evil.example", "ftp://x.example", "http://x.example/path", "http://u@x.example"}}.Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Validate() = %v, want ErrInvalidOptions", err)
	}
	if n := strings.Count(err.Error(), "AllowedOrigins:"); n != 4 {
		t.Errorf("Validate() named %d bad origins, want 4: %v", n, err)
	}
	for _, bad := range []string{`"evil.example"`, `"ftp://x.example"`, `"http://x.example/path"`, `"http://u@x.example"`} {
		if !strings.Contains(err.Error(), bad) {
			t.Errorf("Validate() = %v, does not name %s", err, bad)
		}
	}
}

// In the stateful modes a POST without Mcp-Session-Id other than initialize
// gets 400 (the SDK would start a new session for it).
func TestSessionlessRequest(t *testing.T) {
	for _, mode := range []Mode{ModeStateful, ModeJSON, ModeStateless} {
		s := startServer(t, Options{Mode: mode})
		h := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
		for _, tc := range []struct {
			body string
			want int
		}{
			{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, http.StatusBadRequest},
			{`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, http.StatusBadRequest},
			{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusBadRequest},
			{initializeBody, http.StatusOK},
		} {
			want := tc.want
			if mode == ModeStateless && strings.Contains(tc.body, `"id"`) {
				want = http.StatusOK // no sessions: every request stands alone
			} else if mode == ModeStateless {
				want = http.StatusAccepted
			}
			hh := h
			if strings.Contains(tc.body, "initialize") {
				hh = nil
			}
			resp := rawRequest(t, http.MethodPost, s.URL(), hh, tc.body)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%s: %s without a session: HTTP %d, want %d", mode, tc.body, resp.StatusCode, want)
			}
			if want == http.StatusBadRequest && !strings.Contains(string(body), "Mcp-Session-Id header required") {
				t.Errorf("%s: 400 body %q", mode, body)
			}
		}
		// A malformed body is the SDK's to answer; its body stays readable.
		resp := rawRequest(t, http.MethodPost, s.URL(), h, `{"jsonrpc":`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(string(body), "Mcp-Session-Id header required") {
			t.Errorf("%s: malformed body: HTTP %d %q", mode, resp.StatusCode, body)
		}
	}
	// server/discover of a 2026-07-28 client is answered without a session.
	s := startServer(t, Options{})
	resp := rawRequest(t, http.MethodPost, s.URL(), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
			`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("server/discover without a session: HTTP %d, want 200", resp.StatusCode)
	}
}

func TestLoopback(t *testing.T) {
	s := startServer(t, Options{})
	if !s.Loopback() {
		t.Errorf("Loopback() = false on %s", s.Addr())
	}
	for _, tc := range []struct {
		ip   net.IP
		want bool
	}{
		{net.IPv4(127, 0, 0, 1), true},
		{net.IPv4(127, 0, 0, 2), true},
		{net.IPv6loopback, true},
		{net.IPv4zero, false},
		{net.IPv6unspecified, false},
		{net.IPv4(192, 168, 1, 10), false},
	} {
		if got := loopbackAddr(&net.TCPAddr{IP: tc.ip, Port: 8080}); got != tc.want {
			t.Errorf("loopbackAddr(%v) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}

// BenchmarkOriginCheck measures the check every request pays: without an
// Origin header (mcpbench's own traffic) and with a same-origin one.
func BenchmarkOriginCheck(b *testing.B) {
	p, err := newOriginPolicy([]string{"https://app.example"})
	if err != nil {
		b.Fatal(err)
	}
	for _, origin := range []string{"", "http://127.0.0.1:8080"} {
		name := "none"
		if origin != "" {
			name = "same-origin"
		}
		b.Run(name, func(b *testing.B) {
			r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
			if origin != "" {
				r.Header.Set("Origin", origin)
			}
			b.ReportAllocs()
			for b.Loop() {
				if ok, _ := p.allows(r); !ok {
					b.Fatal("refused")
				}
			}
		})
	}
}
