package driver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/refserver"
)

// Transport errors name what happened, once: not the HTTP/2 client's
// "frame too large" or "broken pipe", not a cause repeated by its
// wrapper.

// initErr initializes one session of cfg and returns the error.
func initErr(t *testing.T, cfg *driver.Config) error {
	t.Helper()
	s, err := driver.NewSession(cfg, 0)
	if err != nil {
		return err
	}
	var res driver.Result
	err = s.Initialize(t.Context(), &res)
	s.Close(t.Context())
	return err
}

// onceIn fails unless err's text holds want exactly once.
func onceIn(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	if n := strings.Count(err.Error(), want); n != 1 {
		t.Errorf("%q says %q %d times, want once", err, want, n)
	}
}

// --http 2 (h2c with prior knowledge) against an HTTP/1.1-only http://
// server: ErrNoH2C, whichever way net/http's HTTP/2 client saw it (a
// frame too large, a broken pipe or a reset, depending on timing), so
// several sessions are tried.
func TestH2CAgainstHTTP1ServerSaysSo(t *testing.T) {
	plain := startRefWith(t, refserver.Options{})
	cfg := &driver.Config{URL: plain.URL(), HTTP: httpclient.HTTP2, RequestTimeout: 5 * time.Second}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	for range 5 {
		err := initErr(t, cfg)
		if !errors.Is(err, httpclient.ErrNoH2C) {
			t.Fatalf("err = %v, want ErrNoH2C", err)
		}
		onceIn(t, err, "does not speak h2c")
		if strings.Contains(err.Error(), "frame too large") || strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("%q repeats the HTTP/2 client's misleading cause", err)
		}
		if c := driver.Classify(err); c != driver.ClassTransport {
			t.Errorf("class %v, want transport", c)
		}
	}
}

// --http 2 against a TLS server that offers only http/1.1 by ALPN.
func TestHTTP2AgainstHTTP1OnlyTLSSaysSo(t *testing.T) {
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{HTTP1Only: true}})
	cfg := &driver.Config{URL: srv.URL(), HTTP: httpclient.HTTP2, TLS: httpclient.TLSFiles{CAFile: caFile(t, srv)}}
	err := initErr(t, cfg)
	if !errors.Is(err, httpclient.ErrNoHTTP2) {
		t.Fatalf("err = %v, want ErrNoHTTP2", err)
	}
	onceIn(t, err, "does not offer HTTP/2")
}

// A request timeout names itself and its limit, and is still a deadline
// (ClassTimeout, errors.Is context.DeadlineExceeded) without saying
// "context deadline exceeded".
func TestRequestTimeoutNamesLimit(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers; bounded
		case <-done:
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first
	cfg := &driver.Config{URL: srv.URL + "/mcp", RequestTimeout: 100 * time.Millisecond}
	err := initErr(t, cfg)
	onceIn(t, err, "request timeout: no answer within 100ms (driver.Config.RequestTimeout)")
	if !errors.Is(err, driver.ErrRequestTimeout) || !errors.Is(err, context.DeadlineExceeded) || driver.Classify(err) != driver.ClassTimeout {
		t.Errorf("%v: want ErrRequestTimeout, a deadline, ClassTimeout (got %v)", err, driver.Classify(err))
	}
	if strings.Contains(err.Error(), "deadline exceeded") || strings.Count(strings.ToLower(err.Error()), "timeout") != 2 { // "request timeout", "Config.RequestTimeout"
		t.Errorf("%q repeats the timeout", err)
	}
}

// A stream silent past the idle timeout names it and its limit.
func TestStreamIdleNamesLimit(t *testing.T) {
	srv := startRef(t, refserver.ModeStateful)
	cfg := &driver.Config{URL: srv.URL(), StreamIdleTimeout: 100 * time.Millisecond, MaxResumes: -1}
	s, err := driver.NewSession(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatal(err)
	}
	var r driver.Result
	s.Do(t.Context(), op(t, "tools/call", `{"name":"progress","arguments":{"count":2,"interval_ms":1000}}`, true), &r)
	onceIn(t, r.Err, "stream idle timeout: no complete event or keep-alive for 100ms (driver.Config.StreamIdleTimeout)")
}

// A 401 whose Bearer challenge names resource_metadata (MCP
// authorization) tells a client without OAuth how to get a token; a 401
// without it, or a client with OAuth, gets no such hint.
func TestUnauthorizedSuggestsOAuth(t *testing.T) {
	challenge := `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", r.URL.Query().Get("c"))
		http.Error(w, "no bearer token", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	err := initErr(t, &driver.Config{URL: srv.URL + "/mcp?c=" + strings.ReplaceAll(challenge, " ", "%20")})
	var se *driver.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusUnauthorized {
		t.Fatalf("err = %v, want a 401 StatusError", err)
	}
	onceIn(t, err, "give httpclient.OAuthConfig.ClientID (and httpclient.OAuthConfig.ClientSecret)")
	if err := initErr(t, &driver.Config{URL: srv.URL + "/mcp?c=Basic"}); err == nil || strings.Contains(err.Error(), "oauth") {
		t.Errorf("a Basic challenge: %v, want a 401 without the OAuth hint", err)
	}
}

// A URL without a scheme says to add http://, quoting it only when it
// cannot hold credentials.
func TestValidateURLWithoutScheme(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"localhost:8080", `url: "localhost:8080" has no scheme: add http:// (http://localhost:8080)`},
		{"127.0.0.1:8080/mcp", `url: "127.0.0.1:8080/mcp" has no scheme: add http:// (http://127.0.0.1:8080/mcp)`},
		{"user:pw@localhost:8080", "url: no scheme: add http:// (or https:// for TLS) before the host"},
	} {
		errs := (&driver.Config{URL: tc.url}).Validate()
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
			t.Errorf("Validate(%q) = %v, want [%s…]", tc.url, errs, tc.want)
		}
	}
	if errs := (&driver.Config{URL: "ftp://h/x"}).Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), `scheme "ftp"`) {
		t.Errorf("ftp://: %v", errs)
	}
}
