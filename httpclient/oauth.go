package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// MCP authorization for machine clients (2025-11-25 basic/authorization):
// a request answered 401 with a Bearer challenge starts discovery — the
// protected resource metadata (RFC 9728) named by the challenge's
// resource_metadata (or found at its well-known URIs), then the
// authorization server's metadata (RFC 8414, or OpenID discovery) — and a
// token is obtained with the client-credentials grant (RFC 6749 §4.4,
// golang.org/x/oauth2/clientcredentials), with the resource parameter of
// RFC 8707. The token goes on every request as Authorization: Bearer; it
// is refreshed before it expires, in the background, by the first request
// that finds it due, so operations do not wait for it (only a request
// that finds it expired does). Fetches are counted and timed apart from
// operations (OAuthStats).

// ErrAuthorization: the authorization flow failed: discovery (a metadata
// document missing or wrong), or the authorization server refused the
// token request. The error names the document or the server and its
// answer (the OAuth error code and description), never a secret.
var ErrAuthorization = errors.New("authorization")

// OAuthConfig is the client-credentials client of Options.OAuth.
type OAuthConfig struct {
	// ClientID and ClientSecret authenticate the client to the
	// authorization server (HTTP Basic or form fields, as its metadata
	// says). The secret is never shown.
	ClientID, ClientSecret string
	// Scopes asked for; nil: the scope of the 401 challenge, else the
	// protected resource's scopes_supported, else none.
	Scopes []string
	// Issuer, when set, is the only authorization server the client
	// secret may be sent to: discovery naming another fails.
	Issuer string
}

// oauthState is the token a client's sessions share. Safe for concurrent
// use.
type oauthState struct {
	cfg     OAuthConfig
	target  string      // the MCP endpoint (the resource)
	header  http.Header // added to metadata requests
	client  *http.Client
	timeout time.Duration

	mu        sync.Mutex
	cc        *clientcredentials.Config // nil until discovery
	meta      OAuthStats                // issuer, endpoint, resource, scopes
	tok       *oauth2.Token
	useUntil  time.Time // the token is sent until then (its expiry less a margin)
	refreshAt time.Time // a request after it starts a background refresh
	op        *fetchOp  // the fetch under way
	lastErr   error
	failedAt  time.Time
	hist      *hdr.Histogram

	challenges, rejected, fetches, failures atomic.Int64
}

// fetchOp is one discovery-and-fetch; done closes when it ends.
type fetchOp struct {
	done chan struct{}
	tok  string
	err  error
}

// failPause is how long a failed fetch's error is returned before another
// fetch is tried: a wrong secret must not flood the authorization server
// at the load's rate.
const failPause = time.Second

func newOAuthState(o *Options, d *dialer) *oauthState {
	// Metadata and token requests go through the same proxy and TLS
	// settings, on connections counted apart from the load's.
	ad := newDialer(d.timeout, d.proxy, d.tls)
	timeout := o.OAuthTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &oauthState{cfg: *o.OAuth, target: o.Resource, header: o.OAuthHeader.Clone(), timeout: timeout,
		client: &http.Client{Transport: newStdTransport(ad, HTTPAuto), Timeout: timeout},
		hist:   hdr.New(1, 600_000_000, 3)}
}

// roundTrip sends req with the current token (none before the first
// challenge); a 401 with a Bearer challenge gets a token (discovery
// first) and the request is sent once more with it.
func (s *oauthState) roundTrip(req *http.Request, next http.RoundTripper) (*http.Response, error) {
	ctx := req.Context()
	tok, err := s.token(ctx)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := next.RoundTrip(withBearer(req, tok, nil))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	ch, ok := bearerChallenge(resp.Header.Values("Www-Authenticate"))
	if !ok || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
		return resp, nil // not an OAuth challenge, or not re-sendable: the caller reports the 401
	}
	s.challenges.Add(1)
	if tok != "" {
		s.rejected.Add(1)
	}
	netutil.Drain(resp)
	tok, err = s.authorize(ctx, ch, tok)
	if err != nil {
		return nil, err
	}
	var body io.ReadCloser
	if req.GetBody != nil {
		if body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	resp, err = next.RoundTrip(withBearer(req, tok, body))
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		s.rejected.Add(1)
	}
	return resp, err
}

// withBearer returns req with Authorization: Bearer tok (req itself when
// tok is ""), and body instead of its own when given (a re-send).
func withBearer(req *http.Request, tok string, body io.ReadCloser) *http.Request {
	if tok == "" && body == nil {
		return req
	}
	r := new(http.Request)
	*r = *req
	r.Header = make(http.Header, len(req.Header)+1)
	for k, v := range req.Header {
		r.Header[k] = v
	}
	if tok != "" {
		r.Header["Authorization"] = []string{"Bearer " + tok}
	}
	if body != nil {
		r.Body = body
	}
	return r
}

// token returns the token to send: "" before discovery; the current one,
// starting a background refresh when it is due; or, when it expired (or
// none could be had yet), the result of a fetch it waits for.
func (s *oauthState) token(ctx context.Context) (string, error) {
	s.mu.Lock()
	if s.cc == nil && s.op == nil {
		s.mu.Unlock()
		return "", nil
	}
	now := time.Now()
	if s.tok != nil && (s.useUntil.IsZero() || now.Before(s.useUntil)) {
		if !s.refreshAt.IsZero() && !now.Before(s.refreshAt) && s.op == nil {
			s.start(bearerChall{}) // due: refresh in the background
		}
		t := s.tok.AccessToken
		s.mu.Unlock()
		return t, nil
	}
	if s.op == nil && s.lastErr != nil && now.Sub(s.failedAt) < failPause {
		err := s.lastErr
		s.mu.Unlock()
		return "", err
	}
	op := s.op
	if op == nil {
		op = s.start(bearerChall{})
	}
	s.mu.Unlock()
	return op.wait(ctx)
}

// authorize answers a challenge to a request that carried rejected: a
// token fetched since is returned at once; else a fetch (with discovery
// the first time) is waited for.
func (s *oauthState) authorize(ctx context.Context, ch bearerChall, rejected string) (string, error) {
	s.mu.Lock()
	if s.tok != nil && s.tok.AccessToken != rejected && (s.useUntil.IsZero() || time.Now().Before(s.useUntil)) {
		t := s.tok.AccessToken
		s.mu.Unlock()
		return t, nil
	}
	op := s.op
	if op == nil {
		if rejected == "" && s.lastErr != nil && time.Since(s.failedAt) < failPause {
			err := s.lastErr
			s.mu.Unlock()
			return "", err
		}
		op = s.start(ch)
	}
	s.mu.Unlock()
	return op.wait(ctx)
}

func (op *fetchOp) wait(ctx context.Context) (string, error) {
	select {
	case <-op.done:
		return op.tok, op.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// start begins a fetch (s.mu held). It runs detached from the request
// that started it, bounded by the request timeout, so one cancelled
// operation does not fail the others waiting for the token.
func (s *oauthState) start(ch bearerChall) *fetchOp {
	op := &fetchOp{done: make(chan struct{})}
	s.op = op
	cc := s.cc
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		ctx = context.WithValue(ctx, oauth2.HTTPClient, s.client)
		var err error
		if cc == nil {
			cc, err = s.discover(ctx, ch)
		}
		var tok *oauth2.Token
		var took time.Duration
		if err == nil {
			t0 := time.Now()
			tok, err = cc.Token(ctx)
			took = time.Since(t0)
			if err != nil {
				err = s.tokenError(cc, err)
			}
		}
		s.finish(op, cc, tok, took, err)
	}()
	return op
}

// finish records a fetch's outcome and wakes its waiters.
func (s *oauthState) finish(op *fetchOp, cc *clientcredentials.Config, tok *oauth2.Token, took time.Duration, err error) {
	s.mu.Lock()
	defer close(op.done)
	defer s.mu.Unlock()
	s.op = nil
	if cc != nil {
		s.cc = cc
	}
	if err != nil {
		s.failures.Add(1)
		s.lastErr, s.failedAt = err, time.Now()
		s.meta.LastError = err.Error()
		op.err = err
		return
	}
	s.fetches.Add(1)
	s.hist.RecordValue(max(took.Microseconds(), 1))
	s.lastErr = nil
	s.tok = tok
	s.useUntil, s.refreshAt = time.Time{}, time.Time{}
	if !tok.Expiry.IsZero() {
		life := time.Until(tok.Expiry)
		s.useUntil = tok.Expiry.Add(-min(life/20, 5*time.Second))
		s.refreshAt = tok.Expiry.Add(-min(life/5, time.Minute))
	}
	op.tok = tok.AccessToken
}

// tokenError words a failed token request: the authorization server's
// answer (status, OAuth error code and description) or the transport
// error, never the secret.
func (s *oauthState) tokenError(cc *clientcredentials.Config, err error) error {
	var re *oauth2.RetrieveError
	msg := err.Error()
	if errors.As(err, &re) {
		msg = "no answer"
		if re.Response != nil {
			msg = "HTTP " + re.Response.Status
		}
		switch {
		case re.ErrorCode != "":
			msg += ": " + re.ErrorCode
			if d := netutil.FirstLine([]byte(re.ErrorDescription)); d != "" {
				msg += " (" + d + ")"
			}
		case netutil.FirstLine(re.Body) != "":
			msg += ": " + netutil.FirstLine(re.Body)
		}
	}
	if s.cfg.ClientSecret != "" {
		msg = strings.ReplaceAll(msg, s.cfg.ClientSecret, "[redacted]")
	}
	s.mu.Lock()
	issuer := s.meta.Issuer
	s.mu.Unlock()
	return fmt.Errorf("%w: the authorization server %s refused the client-credentials token request of client %q at %s: %s",
		ErrAuthorization, issuer, s.cfg.ClientID, cc.TokenURL, msg)
}

// stats returns the counters so far.
func (s *oauthState) stats() *OAuthStats {
	s.mu.Lock()
	st := s.meta
	st.Scopes = append([]string(nil), s.meta.Scopes...)
	st.Fetch = hdr.Import(s.hist.Export())
	s.mu.Unlock()
	st.Challenges, st.Rejected = s.challenges.Load(), s.rejected.Load()
	st.Fetches, st.Failures = s.fetches.Load(), s.failures.Load()
	st.Refreshes = max(st.Fetches-1, 0)
	return &st
}

// canonical renders a URL for comparison: scheme and host in lower case,
// no trailing slash, no fragment (RFC 8707 §2's canonical resource URI).
func canonical(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme, u.Host, u.Fragment = strings.ToLower(u.Scheme), strings.ToLower(u.Host), ""
	u.RawQuery = ""
	return strings.TrimSuffix(u.String(), "/")
}
