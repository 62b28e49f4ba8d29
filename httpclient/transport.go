package httpclient

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/setting"
)

// HTTP versions (Options.HTTP, --http).
const (
	// HTTPAuto: our HTTP/1.1 transport for http://; for https:// ALPN
	// decides, per host, on the first connection: h2 when the server
	// offers it (each session then has an HTTP/2 connection of its own),
	// else our HTTP/1.1 transport.
	HTTPAuto = "auto"
	// HTTP1: HTTP/1.1 only (our transport, ALPN "http/1.1").
	HTTP1 = "1.1"
	// HTTP2: HTTP/2 only: h2 over TLS (ALPN "h2"), h2c with prior
	// knowledge for http:// (RFC 9113 §3.3).
	HTTP2 = "2"
)

// proxyNone (Options.Proxy, --proxy none) sends every request directly,
// whatever the environment says.
const proxyNone = "none"

// ErrNoHTTP2: --http 2 and the server does not offer h2 in its TLS
// handshake (ALPN).
var ErrNoHTTP2 error = &setting.Error{Format: "server does not offer HTTP/2 (ALPN h2): use %s auto or 1.1", Names: []setting.Name{setting.HTTPVersion}}

// Options configures the client New builds. The zero value is HTTPAuto
// with the environment's proxy, the system's roots and no OAuth.
type Options struct {
	// HTTP is the HTTP version: HTTPAuto ("": our HTTP/1.1 transport for
	// http://, ALPN for https://), HTTP1 or HTTP2 (h2, or h2c with prior
	// knowledge for http://).
	HTTP string
	// StdHTTP uses net/http's Transport instead of our HTTP/1.1 one
	// (slower per request; speaks HTTP/2 over TLS).
	StdHTTP bool
	// Proxy: "" honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY (never for
	// loopback targets); "none" goes direct; an http:// or https:// URL
	// sends every request through that proxy (CONNECT tunnels for
	// https://, absolute-form requests for http://). Its userinfo becomes
	// Proxy-Authorization and is never shown.
	Proxy string
	// TLS holds the roots, client certificate and server name; files are
	// read when the client is built.
	TLS TLSFiles
	// Insecure skips TLS certificate verification.
	Insecure bool
	// ConnectTimeout bounds dialing, the TLS handshake and a proxy's
	// CONNECT; 0 means 5 s.
	ConnectTimeout time.Duration
	// SourceAddrs are the local addresses connections are made from,
	// round robin (ParseSourceAddrs); nil: the kernel chooses.
	SourceAddrs []net.IP
	// OAuth, when set, authorizes requests with the client-credentials
	// grant after a 401 Bearer challenge (see OAuthConfig). Never shown.
	OAuth *OAuthConfig
	// Resource is the URL requests go to (the protected resource): OAuth
	// tokens are asked for it (RFC 8707) and its protected resource
	// metadata is looked for under it (RFC 9728 §3.1). Used with OAuth.
	Resource string
	// OAuthTimeout bounds each OAuth discovery and token fetch, and each
	// of their requests; 0 (or negative) means 30 s.
	OAuthTimeout time.Duration
	// OAuthHeader is added to the metadata requests of OAuth discovery
	// (an MCP client sends its Mcp-Protocol-Version there).
	OAuthHeader http.Header
}

// Validate checks the HTTP version, the proxy, the TLS files (they are
// read) and the OAuth settings of o, each error naming its field ("http:
// ...", "proxy: ...", "tls.ca: ...", "oauth.client_id: empty"); nil when
// New can build the client.
func (o *Options) Validate() []error {
	var errs []error
	switch o.HTTP {
	case "", HTTPAuto, HTTP1, HTTP2:
	default:
		errs = append(errs, fmt.Errorf("http: %q, want auto, 1.1 or 2", o.HTTP))
	}
	if _, err := parseProxy(o.Proxy); err != nil {
		errs = append(errs, err)
	}
	if _, err := o.TLS.tlsConfig(o.Insecure); err != nil {
		errs = append(errs, fmt.Errorf("tls.%w", err))
	}
	if a := o.OAuth; a != nil {
		if a.ClientID == "" {
			errs = append(errs, errors.New("oauth.client_id: empty"))
		}
		if a.ClientSecret == "" {
			errs = append(errs, errors.New("oauth.client_secret: empty"))
		}
	}
	return errs
}

// New returns an HTTP client tuned for load generation, for the HTTP
// version o asks for (see HTTPAuto, HTTP1, HTTP2; or net/http's Transport
// with o.StdHTTP): our HTTP/1.1 transport, keep-alive connections without
// a per-host cap, HTTP/2 with a connection per session (PerSession); the
// proxy, TLS files, OAuth and connect timeout of o. It sets no request
// timeout: the caller bounds its requests. TransportStats reads what its
// connections did. A setting that cannot be used (a TLS file that does
// not load; Validate reports it first) makes every request fail with the
// error naming it. The client is safe for concurrent use.
func New(o Options) *http.Client {
	t, err := newTransport(&o)
	if err != nil {
		return &http.Client{Transport: errTransport{err}}
	}
	return &http.Client{Transport: t}
}

// netTransport is the RoundTripper of the clients New builds:
// the transport of the HTTP version asked for, the dialer under it (proxy,
// TLS, counts), and OAuth above it. Safe for concurrent use.
type netTransport struct {
	mode  string
	name  string // the transport, for the report
	base  http.RoundTripper
	d     *dialer
	oauth *oauthState // nil without OAuth
	certs bool        // a client certificate is configured
}

// sessioner is a base transport that gives each session connections of
// its own (HTTP/2: a session's POST streams and GET stream share one
// connection, as one client's would).
type sessioner interface {
	forSession() sessionRT
}

// sessionRT is one session's transport; closeAll closes its connections.
type sessionRT interface {
	http.RoundTripper
	closeAll()
}

// newTransport builds the transport cfg asks for. Errors name the
// setting at fault (proxy, tls.ca, tls.cert ...).
func newTransport(cfg *Options) (*netTransport, error) {
	proxy, err := parseProxy(cfg.Proxy)
	if err != nil {
		return nil, err
	}
	tc, err := cfg.TLS.tlsConfig(cfg.Insecure)
	if err != nil {
		return nil, fmt.Errorf("tls.%w", err)
	}
	d := newDialer(netutil.DurOr(cfg.ConnectTimeout, 5*time.Second), proxy, tc)
	d.src = newSourcePicker(cfg.SourceAddrs)
	t := &netTransport{mode: cmp.Or(cfg.HTTP, HTTPAuto), d: d, certs: len(tc.Certificates) > 0}
	h1 := func() *h1Transport { return &h1Transport{DialTimeout: d.timeout, UserAgent: "mcpbench", d: d} }
	switch {
	case cfg.StdHTTP:
		t.base, t.name = newStdTransport(d, t.mode), "net/http"
	case t.mode == HTTP1:
		t.base, t.name = h1(), "mcpbench HTTP/1.1"
	case t.mode == HTTP2:
		t.base, t.name = newH2Transport(d), "net/http HTTP/2, a connection per session"
	default:
		t.base = &autoTransport{h1: h1(), h2: newH2Transport(d), d: d, hosts: map[string]*alpnChoice{}}
		t.name = "mcpbench HTTP/1.1, or net/http HTTP/2 (a connection per session) where ALPN picks h2"
	}
	if cfg.OAuth != nil {
		t.oauth = newOAuthState(cfg, d)
	}
	return t, nil
}

// RoundTrip implements http.RoundTripper.
func (t *netTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.roundTrip(req, t.base)
}

func (t *netTransport) roundTrip(req *http.Request, next http.RoundTripper) (*http.Response, error) {
	var resp *http.Response
	var err error
	if t.oauth != nil {
		resp, err = t.oauth.roundTrip(req, next)
	} else {
		resp, err = next.RoundTrip(req)
	}
	if err != nil {
		err = t.explain(err)
	}
	return resp, err
}

// explain adds the likely cause to a failed request: a TLS alert's
// meaning, or a connection broken after a server asked for a client
// certificate that was not configured.
func (t *netTransport) explain(err error) error {
	if e := explainTLS(err, t.certs); e != err {
		return e
	}
	if !t.certs && !hinted(err) && t.d.certAsked.Load() && connFailure(err) {
		return &tlsHint{setting.Say("the server asked for a client certificate and none was given (mutual TLS: give %s and %s)", setting.CertFile, setting.KeyFile), err}
	}
	return err
}

// connFailure reports whether err is a failed connection rather than a
// timeout, a cancellation or a refused authorization.
func connFailure(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.Canceled),
		errors.Is(err, ErrAuthorization), errors.As(err, &ne) && ne.Timeout():
		return false
	}
	return true
}

var _ PerSession = (*netTransport)(nil)

// ForSession returns the transport one session uses: connections of its
// own where the HTTP version multiplexes (HTTP/2), else t itself. The
// session calls CloseIdleConnections on it when it closes.
func (t *netTransport) ForSession() http.RoundTripper {
	s, ok := t.base.(sessioner)
	if !ok {
		return t
	}
	return &sessionTransport{t: t, rt: s.forSession()}
}

// CloseIdleConnections closes the kept-alive connections, and every
// session's connections (the end of a run).
func (t *netTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	if t.oauth != nil {
		t.oauth.client.CloseIdleConnections()
	}
}

// sessionTransport is one session's transport over a netTransport.
type sessionTransport struct {
	t  *netTransport
	rt sessionRT
}

func (s *sessionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return s.t.roundTrip(req, s.rt)
}

// CloseIdleConnections closes the session's connections.
func (s *sessionTransport) CloseIdleConnections() { s.rt.closeAll() }

// errTransport fails every request with the error that kept the transport
// from being built (Options.Validate reports it before a run).
type errTransport struct{ err error }

func (e errTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, e.err
}

// TransportStats returns the stats of hc's transport when New built it,
// nil otherwise. Safe for concurrent use.
func TransportStats(hc *http.Client) *NetStats {
	if hc == nil {
		return nil
	}
	t, ok := hc.Transport.(*netTransport)
	if !ok {
		return nil
	}
	d := t.d
	n := &NetStats{HTTP: t.mode, Transport: t.name,
		Connections: d.conns.Load(), Proxied: d.proxied.Load(), ProxyFailures: d.proxyFailed.Load(),
		TLSHandshakes: d.handshakes.Load(), TLSResumed: d.resumed.Load(), TLSFailed: d.hsFailed.Load()}
	d.mu.Lock()
	n.Protocols = maps.Clone(d.protos)
	n.Proxies = maps.Clone(d.proxiesUsed)
	n.TLSVersions = map[string]int64{}
	for v, c := range d.versions {
		n.TLSVersions[tls.VersionName(v)] += c
	}
	n.Handshake = hdr.Import(d.hs.Export())
	d.mu.Unlock()
	if t.oauth != nil {
		n.OAuth = t.oauth.stats()
	}
	return n
}
