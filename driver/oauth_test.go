package driver_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/refserver"
)

const clientSecret = "S3CRET-of-the-client"

func startAuthRef(t *testing.T, ttl time.Duration) *refserver.Server {
	t.Helper()
	return startRefWith(t, refserver.Options{Auth: &refserver.AuthOptions{ClientID: "bench", ClientSecret: clientSecret, TokenTTL: ttl}})
}

func oauthConfig(srv *refserver.Server, secret string) *driver.Config {
	cfg := &driver.Config{URL: srv.URL(), OAuth: &httpclient.OAuthConfig{ClientID: "bench", ClientSecret: secret}}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	return cfg
}

// Against the reference server's --auth mode, sessions initialized at
// once all meet the 401 challenge, and one discovery and one token fetch
// serve them all; later requests carry the token and meet no challenge.
func TestOAuthClientCredentialsOneFetch(t *testing.T) {
	srv := startAuthRef(t, time.Hour)
	cfg := oauthConfig(srv, clientSecret)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- sessionOps(t, cfg, 1, 4) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st := httpclient.TransportStats(cfg.HTTPClient).OAuth
	as := srv.AuthStats()
	if st.Fetches != 1 || st.Failures != 0 || st.Refreshes != 0 || st.Rejected != 0 || as.TokensIssued != 1 || as.TokenRefusals != 0 || as.Expired != 0 {
		t.Errorf("client %+v; server %+v", *st, as)
	}
	if st.Challenges < 1 || st.Challenges > n || st.Challenges != as.Challenges {
		t.Errorf("client answered %d challenges, server sent %d", st.Challenges, as.Challenges)
	}
	base := strings.TrimSuffix(srv.URL(), "/mcp")
	if st.Issuer != base || st.TokenEndpoint != base+"/token" || st.Resource != srv.URL() || st.Fetch.TotalCount() != 1 {
		t.Errorf("issuer %q endpoint %q resource %q, %d fetches timed", st.Issuer, st.TokenEndpoint, st.Resource, st.Fetch.TotalCount())
	}
}

// With short-lived tokens, the client refreshes each before it expires:
// every token it fetched was issued by the server (and no other), and the
// server never saw an expired token nor had to challenge again.
func TestOAuthRefreshBeforeExpiry(t *testing.T) {
	t.Parallel()
	srv := startAuthRef(t, time.Second)
	cfg := oauthConfig(srv, clientSecret)
	s, err := driver.NewSession(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatal(err)
	}
	echo := op(t, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, false)
	deadline := time.Now().Add(15 * time.Second)
	calls := 0
	for httpclient.TransportStats(cfg.HTTPClient).OAuth.Fetches < 4 { // three refreshes
		if time.Now().After(deadline) {
			t.Fatalf("after %d calls, %+v", calls, *httpclient.TransportStats(cfg.HTTPClient).OAuth)
		}
		do(t, s, echo)
		calls++
	}
	s.Close(t.Context())
	st := httpclient.TransportStats(cfg.HTTPClient).OAuth
	as := srv.AuthStats()
	if st.Fetches != as.TokensIssued || st.Refreshes != st.Fetches-1 || st.Failures != 0 || st.Rejected != 0 || as.Expired != 0 || st.Challenges != 1 || as.Challenges != 1 {
		t.Errorf("client %+v; server %+v", *st, as)
	}
}

// A wrong secret: the authorization server's answer (invalid_client and
// its description) is in the error, the secret is not; failures are not
// retried at the load's rate.
func TestOAuthWrongSecret(t *testing.T) {
	srv := startAuthRef(t, time.Hour)
	cfg := oauthConfig(srv, "WRONG-secret-value")
	err := sessionOps(t, cfg, 3, 1)
	if !errors.Is(err, httpclient.ErrAuthorization) {
		t.Fatalf("error %v, want ErrAuthorization", err)
	}
	for _, want := range []string{"refused the client-credentials token request", `client "bench"`, "401 Unauthorized: invalid_client (client authentication failed)", strings.TrimSuffix(srv.URL(), "/mcp") + "/token"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "WRONG-secret-value") {
		t.Errorf("the secret is in the error: %v", err)
	}
	if c := driver.Classify(err); c != driver.ClassHTTPStatus {
		t.Errorf("class %v", c)
	}
	st := httpclient.TransportStats(cfg.HTTPClient).OAuth
	if as := srv.AuthStats(); st.Failures != 1 || as.TokenRefusals != 1 || st.Fetches != 0 || as.TokensIssued != 0 {
		t.Errorf("client %+v; server %+v", *st, as)
	}
}

// Discovery refuses metadata that would send the secret elsewhere or does
// not describe this resource, and says which document is at fault.
func TestOAuthDiscoveryFaults(t *testing.T) {
	tests := []struct {
		name  string
		prm   func(base string) map[string]any
		asm   func(base string) map[string]any
		want  string
		extra func(*driver.Config)
	}{
		{"another resource", func(b string) map[string]any {
			return map[string]any{"resource": "https://other.example/mcp", "authorization_servers": []string{b}}
		}, nil, `names resource "https://other.example/mcp", not this endpoint`, nil},
		{"no authorization server", func(b string) map[string]any { return map[string]any{"resource": b + "/mcp"} }, nil, "names no authorization server", nil},
		{"plain http authorization server", func(b string) map[string]any {
			return map[string]any{"resource": b + "/mcp", "authorization_servers": []string{"http://as.example"}}
		}, nil, "authorization server http://as.example is not https://", nil},
		{"issuer mismatch", nil, func(b string) map[string]any {
			return map[string]any{"issuer": "https://evil.example", "token_endpoint": b + "/token"}
		}, `names issuer "https://evil.example"`, nil},
		{"no client credentials", nil, func(b string) map[string]any {
			return map[string]any{"issuer": b, "token_endpoint": b + "/token", "grant_types_supported": []string{"authorization_code"}}
		}, "does not offer the client_credentials grant", nil},
		{"pinned issuer", nil, nil, "not the issuer given (https://as.example)", func(c *driver.Config) { c.OAuth.Issuer = "https://as.example" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var base string
			mux := http.NewServeMux()
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
				http.Error(w, "no token", http.StatusUnauthorized)
			})
			serveJSON := func(path string, f func(string) map[string]any, def map[string]any) {
				mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
					v := def
					if f != nil {
						v = f(base)
					}
					json.NewEncoder(w).Encode(v)
				})
			}
			ts := httptest.NewServer(mux)
			defer ts.Close()
			base = ts.URL
			serveJSON("/.well-known/oauth-protected-resource/mcp", tt.prm, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
			serveJSON("/.well-known/oauth-authorization-server", tt.asm, map[string]any{"issuer": base, "token_endpoint": base + "/token"})
			cfg := &driver.Config{URL: base + "/mcp", OAuth: &httpclient.OAuthConfig{ClientID: "c", ClientSecret: "s"}}
			if tt.extra != nil {
				tt.extra(cfg)
			}
			err := sessionOps(t, cfg, 1, 1)
			if !errors.Is(err, httpclient.ErrAuthorization) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}
