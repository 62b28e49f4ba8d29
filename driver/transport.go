package driver

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// HTTP versions (Config.HTTP, --http).
const (
	// HTTPAuto: H1Transport for http://; for https:// ALPN decides, per
	// host, on the first connection: h2 when the server offers it (each
	// session then has an HTTP/2 connection of its own), else H1Transport.
	HTTPAuto = "auto"
	// HTTP1: HTTP/1.1 only (H1Transport, ALPN "http/1.1").
	HTTP1 = "1.1"
	// HTTP2: HTTP/2 only: h2 over TLS (ALPN "h2"), h2c with prior
	// knowledge for http:// (RFC 9113 §3.3).
	HTTP2 = "2"
)

// ProxyNone (Config.Proxy, --proxy none) sends every request directly,
// whatever the environment says.
const ProxyNone = "none"

// ErrNoHTTP2: --http 2 and the server does not offer h2 in its TLS
// handshake (ALPN).
var ErrNoHTTP2 = errors.New("server does not offer HTTP/2 (ALPN h2): use --http auto or 1.1")

// ValidateNet checks the HTTP version, the proxy, the TLS files (they are
// read) and the OAuth settings of c, each error naming its field; Validate
// includes it.
func (c *Config) ValidateNet() []error {
	var errs []error
	switch c.HTTP {
	case "", HTTPAuto, HTTP1, HTTP2:
	default:
		errs = append(errs, fmt.Errorf("http: %q, want auto, 1.1 or 2", c.HTTP))
	}
	if _, err := parseProxy(c.Proxy); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.TLS.tlsConfig(c.Insecure); err != nil {
		errs = append(errs, fmt.Errorf("tls.%w", err))
	}
	if o := c.OAuth; o != nil {
		if o.ClientID == "" {
			errs = append(errs, errors.New("oauth.client_id: empty"))
		}
		if o.ClientSecret == "" {
			errs = append(errs, errors.New("oauth.client_secret: empty"))
		}
	}
	return errs
}

// netTransport is the RoundTripper of the clients NewHTTPClient builds:
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

// sessioner is a transport that gives each session connections of its
// own (HTTP/2: a session's POST streams and GET stream share one
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
func newTransport(cfg *Config) (*netTransport, error) {
	proxy, err := parseProxy(cfg.Proxy)
	if err != nil {
		return nil, err
	}
	tc, err := cfg.TLS.tlsConfig(cfg.Insecure)
	if err != nil {
		return nil, fmt.Errorf("tls.%w", err)
	}
	d := newDialer(durOr(cfg.ConnectTimeout, 5*time.Second), proxy, tc)
	d.src = newSourcePicker(cfg.SourceAddrs)
	t := &netTransport{mode: cmp.Or(cfg.HTTP, HTTPAuto), d: d, certs: len(tc.Certificates) > 0}
	h1 := func() *H1Transport { return &H1Transport{DialTimeout: d.timeout, UserAgent: "mcpbench", d: d} }
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
	if !t.certs && t.d.certAsked.Load() && Classify(err) == ClassTransport && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("TLS: the server asked for a client certificate and none was given (mutual TLS: give --cert and --key): %w", err)
	}
	return err
}

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
// from being built (Config.Validate reports it before a run).
type errTransport struct{ err error }

func (e errTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, e.err
}

// NetStats describes the connections of a client NewHTTPClient built,
// over its whole life (set-up included): the HTTP version, the proxy,
// TLS handshakes and OAuth token fetches, each apart from operations'
// latency. Times are in microseconds in the histograms.
type NetStats struct {
	// HTTP is the version asked for: auto, 1.1 or 2.
	HTTP string
	// Transport names the transport(s) in use.
	Transport string
	// Protocols counts connections by the protocol they speak: "h2",
	// "h2c", "http/1.1".
	Protocols map[string]int64
	// Connections counts TCP connections opened (to the target or to a
	// proxy); Proxied those through a proxy; ProxyFailures the proxy
	// connections or CONNECTs that failed.
	Connections, Proxied, ProxyFailures int64
	// Proxies maps each proxy used (URL without credentials) to where it
	// came from: "--proxy" or "environment".
	Proxies map[string]string
	// TLS handshakes made, of which resumed (session tickets or ids), and
	// failed; TLSVersions counts the versions negotiated ("TLS 1.3").
	TLSHandshakes, TLSResumed, TLSFailed int64
	TLSVersions                          map[string]int64
	// Handshake holds the successful handshakes' times in µs.
	Handshake *hdr.Histogram
	// OAuth describes authorization (nil without OAuth).
	OAuth *OAuthStats
}

// Protocol names the protocol most connections speak ("h2", "h2c",
// "http/1.1"; "" before any connection), with the others after it:
// "h2 (+ http/1.1)".
func (n *NetStats) Protocol() string {
	if n == nil || len(n.Protocols) == 0 {
		return ""
	}
	ps := slices.SortedFunc(maps.Keys(n.Protocols), func(a, b string) int {
		return cmp.Or(cmp.Compare(n.Protocols[b], n.Protocols[a]), strings.Compare(a, b))
	})
	if len(ps) == 1 {
		return ps[0]
	}
	return ps[0] + " (+ " + strings.Join(ps[1:], ", ") + ")"
}

// TransportStats returns the stats of hc's transport when NewHTTPClient
// built it, nil otherwise. Safe for concurrent use.
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

// perSession returns the transport a new session uses: rt's ForSession
// when it has one (own reports a transport of the session's own, whose
// connections the session closes), else rt.
func perSession(rt http.RoundTripper) (_ http.RoundTripper, own bool) {
	fs, ok := rt.(interface{ ForSession() http.RoundTripper })
	if !ok {
		return rt, false
	}
	srt := fs.ForSession()
	return srt, srt != rt
}

// releaseConns closes the session's own connections (Close).
func (s *Session) releaseConns() {
	if c, ok := s.rt.(interface{ CloseIdleConnections() }); ok && s.ownRT {
		c.CloseIdleConnections()
	}
}
