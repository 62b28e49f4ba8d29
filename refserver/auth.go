package refserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// AuthOptions make Start require OAuth bearer tokens on /mcp, as the MCP
// authorization spec (2025-11-25) describes, and serve a small built-in
// authorization server for machine clients beside it:
//
//   - /mcp without a valid token: 401 with WWW-Authenticate: Bearer
//     resource_metadata="<base>/.well-known/oauth-protected-resource/mcp"
//     (the go-sdk's auth.RequireBearerToken);
//   - that document (RFC 9728; the go-sdk's handler), naming <base> as the
//     authorization server;
//   - <base>/.well-known/oauth-authorization-server (RFC 8414);
//   - <base>/token: the client-credentials grant (RFC 6749 §4.4), client
//     authentication by HTTP Basic or form fields, the resource parameter
//     checked (RFC 8707), opaque tokens valid TokenTTL.
//
// <base> is the listen address (scheme://host:port); on a wildcard
// address (0.0.0.0, [::]), which no client can be sent to, it is the
// scheme and Host of each request instead. Every one of these endpoints
// refuses a foreign Origin with 403, as /mcp does (Options.AllowedOrigins;
// origin.go), before any authorization.
//
// It is a test fixture: one client, tokens in memory.
type AuthOptions struct {
	// ClientID and ClientSecret are the one client's credentials; both
	// required.
	ClientID, ClientSecret string
	// TokenTTL is a token's lifetime; 0 means 1 h. expires_in says it in
	// whole seconds (rounded up).
	TokenTTL time.Duration
	// Scopes the server offers (scopes_supported); a token request for
	// another scope is refused (invalid_scope). Nil: any scope.
	Scopes []string
}

func (o *AuthOptions) validate() []error {
	var errs []error
	if o.ClientID == "" || o.ClientSecret == "" {
		errs = append(errs, fmt.Errorf("%w: Auth.ClientID and Auth.ClientSecret: both required", ErrInvalidOptions))
	}
	if o.TokenTTL < 0 {
		errs = append(errs, fmt.Errorf("%w: Auth.TokenTTL: %v is negative (0 means 1h)", ErrInvalidOptions, o.TokenTTL))
	}
	return errs
}

// AuthStats are the built-in authorization server's counters.
type AuthStats struct {
	// TokensIssued counts tokens granted; TokenRefusals token requests
	// refused (bad client credentials, grant, scope or resource).
	TokensIssued, TokenRefusals int64
	// Challenges counts /mcp requests answered 401: without a token,
	// with an unknown one, or with an expired one (Expired counts those).
	Challenges, Expired int64
	// Authorized counts /mcp requests let through with a valid token.
	Authorized int64
}

// authServer is the resource check and the authorization server.
type authServer struct {
	o        AuthOptions
	base     string // scheme://host:port
	wildcard bool   // base is a wildcard address: use the request's Host
	origins  originPolicy
	ttl      time.Duration

	mu     sync.Mutex
	tokens map[string]time.Time // token → expiry

	issued, refused, challenges, expired, authorized atomic.Int64
}

// newAuthServer serves base (scheme://host:port); wildcard: base is a
// wildcard address, and each request's Host is used instead. origins is
// the policy /mcp applies to Origin headers.
func newAuthServer(o AuthOptions, base string, wildcard bool, origins originPolicy) *authServer {
	ttl := o.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	return &authServer{o: o, base: base, wildcard: wildcard, origins: origins, ttl: ttl, tokens: map[string]time.Time{}}
}

// baseOf is the base r reached: the listen address, or on a wildcard one
// the request's scheme and Host (the address the client used).
func (a *authServer) baseOf(r *http.Request) string {
	if !a.wildcard || r.Host == "" {
		return a.base
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// mount serves the authorization server's endpoints on mux and returns
// mcp behind the bearer-token check, each behind the Origin check.
func (a *authServer) mount(mux *http.ServeMux, mcp http.Handler) http.Handler {
	prm := func(base string) http.Handler {
		return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: base + "/mcp", AuthorizationServers: []string{base}, ScopesSupported: a.o.Scopes,
			BearerMethodsSupported: []string{"header"}, ResourceName: "mcpbench reference server",
		})
	}
	check := func(base string) http.Handler {
		return auth.RequireBearerToken(a.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: base + "/.well-known/oauth-protected-resource/mcp"})(mcp)
	}
	// On a wildcard address the handlers are built per request, for its
	// Host (a test fixture: the allocation does not matter).
	fixedPRM, fixedCheck := prm(a.base), check(a.base)
	perBase := func(fixed http.Handler, build func(string) http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a.wildcard {
				build(a.baseOf(r)).ServeHTTP(w, r)
				return
			}
			fixed.ServeHTTP(w, r)
		})
	}
	mux.Handle("/.well-known/oauth-protected-resource/mcp", a.guard(perBase(fixedPRM, prm), false))
	mux.Handle("/.well-known/oauth-protected-resource", a.guard(perBase(fixedPRM, prm), false))
	mux.Handle("/.well-known/oauth-authorization-server", a.guard(http.HandlerFunc(a.serveMetadata), false))
	mux.Handle("/token", a.guard(http.HandlerFunc(a.serveToken), false))
	checked := perBase(fixedCheck, check)
	return a.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &codeWriter{ResponseWriter: w}
		checked.ServeHTTP(cw, r)
		if cw.code == http.StatusUnauthorized {
			a.challenges.Add(1)
		}
	}), true)
}

// guard refuses a request with a foreign Origin (403) before h sees it:
// as a JSON-RPC error for /mcp (jsonrpc), an OAuth error for the others.
func (a *authServer) guard(h http.Handler, jsonrpc bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, o := a.origins.allows(r); !ok {
			msg := "Forbidden: Origin " + strconv.Quote(o) + " is not allowed"
			if jsonrpc {
				writeJSONRPCError(w, http.StatusForbidden, codeInvalidRequest, msg)
			} else {
				tokenError(w, http.StatusForbidden, "access_denied", msg)
			}
			return
		}
		h.ServeHTTP(w, r)
	})
}

// verify is the go-sdk middleware's token check.
func (a *authServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	a.mu.Lock()
	exp, ok := a.tokens[token]
	a.mu.Unlock()
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: unknown token", auth.ErrInvalidToken)
	case !time.Now().Before(exp):
		a.expired.Add(1)
		return nil, fmt.Errorf("%w: token expired", auth.ErrInvalidToken)
	}
	a.authorized.Add(1)
	return &auth.TokenInfo{Expiration: exp}, nil
}

// serveMetadata serves RFC 8414 authorization server metadata.
func (a *authServer) serveMetadata(w http.ResponseWriter, r *http.Request) {
	base := a.baseOf(r)
	m := map[string]any{
		"issuer":                                base,
		"token_endpoint":                        base + "/token",
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"response_types_supported":              []string{},
	}
	if len(a.o.Scopes) > 0 {
		m["scopes_supported"] = a.o.Scopes
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(m)
}

// serveToken is the token endpoint: the client-credentials grant.
func (a *authServer) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		tokenError(w, http.StatusMethodNotAllowed, "invalid_request", "POST only")
		return
	}
	if err := r.ParseForm(); err != nil {
		a.refuse(w, http.StatusBadRequest, "invalid_request", "malformed form")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic { // RFC 6749 §2.3.1: form-urlencoded before Basic encoding
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if subtle.ConstantTimeCompare([]byte(id), []byte(a.o.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(a.o.ClientSecret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="mcpbench"`)
		a.refuse(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "client_credentials" {
		a.refuse(w, http.StatusBadRequest, "unsupported_grant_type", fmt.Sprintf("grant_type %q: only client_credentials", g))
		return
	}
	if res := r.PostForm.Get("resource"); res != "" && strings.TrimSuffix(res, "/") != a.baseOf(r)+"/mcp" {
		a.refuse(w, http.StatusBadRequest, "invalid_target", "unknown resource "+res)
		return
	}
	scope := strings.Fields(r.PostForm.Get("scope"))
	for _, s := range scope {
		if a.o.Scopes != nil && !slices.Contains(a.o.Scopes, s) {
			a.refuse(w, http.StatusBadRequest, "invalid_scope", "unknown scope "+s)
			return
		}
	}
	tok := a.issue()
	a.issued.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": tok, "token_type": "Bearer",
		"expires_in": int64(math.Ceil(a.ttl.Seconds())), "scope": strings.Join(scope, " "),
	})
}

// issue makes a token valid for the TTL and forgets tokens long expired.
func (a *authServer) issue() string {
	var b [24]byte
	rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	now := time.Now()
	a.mu.Lock()
	for t, exp := range a.tokens {
		if now.Sub(exp) > a.ttl+time.Minute {
			delete(a.tokens, t)
		}
	}
	a.tokens[tok] = now.Add(a.ttl)
	a.mu.Unlock()
	return tok
}

func (a *authServer) refuse(w http.ResponseWriter, code int, errCode, desc string) {
	a.refused.Add(1)
	tokenError(w, code, errCode, desc)
}

// tokenError writes an RFC 6749 §5.2 error answer.
func tokenError(w http.ResponseWriter, code int, errCode, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": errCode, "error_description": desc})
}

func (a *authServer) stats() AuthStats {
	return AuthStats{TokensIssued: a.issued.Load(), TokenRefusals: a.refused.Load(),
		Challenges: a.challenges.Load(), Expired: a.expired.Load(), Authorized: a.authorized.Load()}
}

// AuthStats returns the authorization counters (zero without Auth).
func (s *Server) AuthStats() AuthStats {
	if s.auth == nil {
		return AuthStats{}
	}
	return s.auth.stats()
}

// codeWriter records the status a handler wrote. It passes Flush on, for
// SSE answers.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (c *codeWriter) WriteHeader(code int) {
	if c.code == 0 {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	return c.ResponseWriter.Write(b)
}

func (c *codeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (c *codeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
