package mcptest

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Every case HostileCases lists is served, and only those: a case of the
// handler table that HostileCases does not describe would be one that
// scripts/hostile refuses.
func TestServeHostileServesEveryCase(t *testing.T) {
	served := map[string]bool{"never-answers": true, "slowloris": true, "garbage": true, "h2-only": true}
	for name := range hostileHandlers {
		served[name] = true
	}
	if got, want := slices.Sorted(maps.Keys(served)), slices.Sorted(maps.Keys(HostileCases)); !slices.Equal(got, want) {
		t.Fatalf("cases served %q, HostileCases lists %q", got, want)
	}
	for _, name := range slices.Sorted(maps.Keys(HostileCases)) {
		url, stop, err := ServeHostile(name, "127.0.0.1:0", http.NotFoundHandler())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if url == "" {
			t.Errorf("%s: no URL", name)
		}
		stop()
		stop() // idempotent
	}
	if _, _, err := ServeHostile("no-such-case", "127.0.0.1:0", nil); !errors.Is(err, ErrUnknownHostile) {
		t.Errorf("unknown case: err %v, want ErrUnknownHostile", err)
	}
}

// The handlers answer as HostileCases says, for the cases that answer at
// once.
func TestHostileHandlers(t *testing.T) {
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		header string // a header the answer must carry ("" none)
	}{
		{"auth-401", http.MethodPost, "/mcp", `{"method":"tools/call"}`, http.StatusUnauthorized, "WWW-Authenticate"},
		{"redirect-307", http.MethodPost, "/mcp", `{"method":"initialize"}`, http.StatusTemporaryRedirect, "Location"},
		{"throttle-429", http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, http.StatusTooManyRequests, "Retry-After"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, stop, err := ServeHostile(tt.name, "127.0.0.1:0", http.NotFoundHandler())
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			req, err := http.NewRequest(tt.method, url, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status || resp.Header.Get(tt.header) == "" {
				t.Errorf("status %d, %s %q; want %d with %s", resp.StatusCode, tt.header, resp.Header.Get(tt.header), tt.status, tt.header)
			}
		})
	}
}
