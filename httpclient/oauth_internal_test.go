package httpclient

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func jsonResp(code int, v any) *http.Response {
	b, _ := json.Marshal(v)
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(string(b)))}
}

// fakeAS is an in-memory MCP resource and authorization server issuing
// tokens that live ttl, on the test's (fake) clock.
type fakeAS struct {
	ttl     time.Duration
	start   time.Time
	mu      sync.Mutex
	tokens  map[string]time.Time
	fetches []time.Duration // when each token was issued, since start
	expired int             // requests that carried an expired token
}

func (a *fakeAS) server(r *http.Request) (*http.Response, error) {
	const base = "http://127.0.0.1:1"
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		return jsonResp(200, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}}), nil
	case "/.well-known/oauth-authorization-server":
		return jsonResp(200, map[string]any{"issuer": base, "token_endpoint": base + "/token"}), nil
	case "/token":
		a.mu.Lock()
		defer a.mu.Unlock()
		tok := fmt.Sprintf("t%d", len(a.fetches))
		a.tokens[tok] = time.Now().Add(a.ttl)
		a.fetches = append(a.fetches, time.Since(a.start))
		return jsonResp(200, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(a.ttl.Seconds())}), nil
	}
	return nil, fmt.Errorf("unexpected %s", r.URL)
}

func (a *fakeAS) mcp(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	exp, known := a.tokens[tok]
	if ok && known && time.Now().Before(exp) {
		return jsonResp(200, map[string]any{}), nil
	}
	if known {
		a.expired++
	}
	resp := jsonResp(401, map[string]any{"error": "invalid_token"})
	resp.Header.Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"`)
	return resp, nil
}

// The refresh schedule on a fake clock: tokens living 10 s are refreshed
// in the background 2 s before they expire (a fifth of their life), by
// the first request that finds them due; a request after a pause longer
// than a token's life waits for a fresh one. No request carries an
// expired token.
func TestOAuthRefreshSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &fakeAS{ttl: 10 * time.Second, start: time.Now(), tokens: map[string]time.Time{}}
		s := &oauthState{cfg: OAuthConfig{ClientID: "c", ClientSecret: "s"}, target: "http://127.0.0.1:1/mcp",
			client: &http.Client{Transport: rtFunc(a.server)}, timeout: 5 * time.Second, hist: hdr.New(1, 600_000_000, 3)}
		send := func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://127.0.0.1:1/mcp", nil)
			resp, err := s.roundTrip(req, rtFunc(a.mcp))
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("at %v: %v %v", time.Since(a.start), resp, err)
			}
			synctest.Wait() // a background refresh it started has ended
		}
		for range 35 { // a request a second
			send()
			time.Sleep(time.Second)
		}
		time.Sleep(30 * time.Second) // past the last token's life: the next request waits for a fetch
		send()
		want := []time.Duration{0, 8 * time.Second, 16 * time.Second, 24 * time.Second, 32 * time.Second, 65 * time.Second}
		if diff := cmp.Diff(want, a.fetches); diff != "" {
			t.Errorf("token fetches (-want +got):\n%s", diff)
		}
		st := s.stats()
		if a.expired != 0 || st.Fetches != 6 || st.Refreshes != 5 || st.Challenges != 1 || st.Rejected != 0 || st.Fetch.TotalCount() != 6 {
			t.Errorf("%d expired tokens sent; stats %+v", a.expired, *st)
		}
	})
}

// A server that revokes a token it issued (a planted fault): the next
// request is answered 401 although the client held the token valid; it
// counts as rejected once, a new token is fetched and the request goes
// through with it.
func TestOAuthRevokedToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &fakeAS{ttl: time.Hour, start: time.Now(), tokens: map[string]time.Time{}}
		s := &oauthState{cfg: OAuthConfig{ClientID: "c", ClientSecret: "s"}, target: "http://127.0.0.1:1/mcp",
			client: &http.Client{Transport: rtFunc(a.server)}, timeout: 5 * time.Second, hist: hdr.New(1, 600_000_000, 3)}
		send := func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1:1/mcp", strings.NewReader("{}"))
			resp, err := s.roundTrip(req, rtFunc(a.mcp))
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("at %v: %v %v", time.Since(a.start), resp, err)
			}
		}
		for i := range 10 {
			if i == 5 {
				a.mu.Lock()
				clear(a.tokens) // revoked
				a.mu.Unlock()
			}
			send()
			time.Sleep(time.Second)
		}
		st := s.stats()
		if st.Fetches != 2 || st.Rejected != 1 || st.Challenges != 2 || st.Failures != 0 || len(a.fetches) != 2 {
			t.Errorf("stats %+v; server issued %d", *st, len(a.fetches))
		}
	})
}

// Discovery's metadata requests carry Options.OAuthHeader (an MCP client's
// Mcp-Protocol-Version); a zero OAuthTimeout bounds fetches at 30 s.
func TestOAuthDiscoveryHeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &fakeAS{ttl: time.Hour, start: time.Now(), tokens: map[string]time.Time{}}
		o := &Options{OAuth: &OAuthConfig{ClientID: "c", ClientSecret: "s"}, Resource: "http://127.0.0.1:1/mcp",
			OAuthHeader: http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}}
		s := newOAuthState(o, newDialer(time.Second, nil, nil))
		if s.timeout != 30*time.Second || s.client.Timeout != 30*time.Second {
			t.Errorf("timeouts %v and %v, want 30 s", s.timeout, s.client.Timeout)
		}
		var mu sync.Mutex
		seen := map[string]string{} // metadata path → Mcp-Protocol-Version
		s.client.Transport = rtFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/.well-known/") {
				mu.Lock()
				seen[r.URL.Path] = r.Header.Get("Mcp-Protocol-Version")
				mu.Unlock()
			}
			return a.server(r)
		})
		o.OAuthHeader.Set("Mcp-Protocol-Version", "changed later") // s holds its own copy
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://127.0.0.1:1/mcp", nil)
		resp, err := s.roundTrip(req, rtFunc(a.mcp))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
		want := map[string]string{"/.well-known/oauth-protected-resource/mcp": "2025-11-25", "/.well-known/oauth-authorization-server": "2025-11-25"}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("metadata requests' Mcp-Protocol-Version (-want +got):\n%s", diff)
		}
	})
}
