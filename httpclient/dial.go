package httpclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/setting"
	"golang.org/x/net/http/httpproxy"
)

// The dialer opens every connection of the transports New builds:
// TCP, through a proxy when one applies (an HTTP CONNECT tunnel,
// RFC 9110 §9.3.6), then TLS with the configured roots, client certificate
// and server name. It counts connections, proxied connections, TLS
// handshakes and resumed sessions, and times handshakes on their own (a
// handshake made during an operation is also part of that operation's
// latency; here it is seen apart).

// ErrProxy: a proxy refused or failed a CONNECT tunnel; the error names
// the proxy (without credentials) and its answer.
var ErrProxy = errors.New("proxy")

// TLSFiles are the TLS settings of Options: PEM files and the name the
// server's certificate is checked against.
type TLSFiles struct {
	// CAFile holds PEM certificates trusted besides the system's roots
	// (--ca).
	CAFile string
	// CertFile and KeyFile are a client certificate and its key, sent
	// when the server asks for one (mutual TLS; --cert, --key).
	CertFile, KeyFile string
	// ServerName is sent in SNI and checked against the server's
	// certificate instead of the URL's host (--tls-server-name).
	ServerName string
}

// tlsConfig builds the client TLS configuration: roots, client
// certificate, server name, verification (insecure), and a session cache
// so later connections resume (TLS 1.3 tickets or 1.2 session ids).
// Errors name the file at fault.
func (f TLSFiles) tlsConfig(insecure bool) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         f.ServerName,
		InsecureSkipVerify: insecure, //nolint:gosec // the user asked for --insecure
		ClientSessionCache: tls.NewLRUClientSessionCache(256),
	}
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca: %s holds no PEM certificate", f.CAFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case f.CertFile != "" && f.KeyFile != "":
		cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("cert/key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case f.CertFile != "":
		return nil, errors.New("cert: needs key (the client certificate's private key)")
	case f.KeyFile != "":
		return nil, errors.New("key: needs cert (the client certificate)")
	}
	return cfg, nil
}

// proxySetting is where requests are sent: directly, through one proxy, or
// as the environment says.
type proxySetting struct {
	fixed  *url.URL // --proxy URL: every request
	env    func(*url.URL) (*url.URL, error)
	source string // the setting (setting.Proxy, as said: the CLI's "--proxy") or "environment"
}

// parseProxy reads Options.Proxy: "" (the environment: HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY, and their lower-case forms), proxyNone, or an
// http:// or https:// URL. The error never shows the URL's credentials.
func parseProxy(s string) (*proxySetting, error) {
	switch s {
	case proxyNone:
		return nil, nil
	case "":
		ec := httpproxy.FromEnvironment()
		if ec.HTTPProxy == "" && ec.HTTPSProxy == "" {
			return nil, nil
		}
		return &proxySetting{env: ec.ProxyFunc(), source: "environment"}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("proxy: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("proxy: %q: want http://HOST:PORT, https://HOST:PORT or none", secret.RedactURL(s))
	}
	return &proxySetting{fixed: u, source: setting.Proxy.String()}, nil
}

// forTarget returns the proxy for a request to scheme://host (nil: go
// direct). The environment never proxies loopback targets (as Go and curl
// do); --proxy proxies everything.
func (p *proxySetting) forTarget(scheme, host string) (*url.URL, error) {
	if p == nil {
		return nil, nil
	}
	if p.fixed != nil {
		return p.fixed, nil
	}
	return p.env(&url.URL{Scheme: scheme, Host: host})
}

// proxyHop is a forward proxy an HTTP/1.1 connection talks to in
// absolute form (http:// targets through a proxy), with the
// Proxy-Authorization value from its URL's userinfo ("" without).
type proxyHop struct {
	auth string
}

// dialer opens connections and counts them. Safe for concurrent use.
type dialer struct {
	timeout time.Duration
	proxy   *proxySetting
	tls     *tls.Config // base config (nil for http-only use is fine)
	nd      net.Dialer
	src     *sourcePicker // local addresses, round robin (nil: the kernel's choice)

	conns, proxied        atomic.Int64
	handshakes, resumed   atomic.Int64
	hsFailed, proxyFailed atomic.Int64
	certAsked             atomic.Bool // a server asked for a client certificate and none was configured
	mu                    sync.Mutex
	hs                    *hdr.Histogram    // handshake times, µs
	protos                map[string]int64  // connections by protocol: h2, h2c, http/1.1
	versions              map[uint16]int64  // TLS versions negotiated
	proxiesUsed           map[string]string // redacted proxy URL → source
}

func newDialer(timeout time.Duration, proxy *proxySetting, tc *tls.Config) *dialer {
	return &dialer{timeout: timeout, proxy: proxy, tls: tc,
		nd: net.Dialer{Timeout: timeout},
		hs: hdr.New(1, 60_000_000, 3), protos: map[string]int64{}, versions: map[uint16]int64{}, proxiesUsed: map[string]string{}}
}

// tcp opens a TCP connection to addr (no proxy).
func (d *dialer) tcp(ctx context.Context, addr string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	nd := d.nd
	nd.LocalAddr = d.src.pick()
	nd.KeepAliveConfig = netutil.KeepAlive() // jittered: see there
	c, err := nd.DialContext(dctx, "tcp", addr)
	if err == nil {
		d.conns.Add(1)
	}
	var ne net.Error
	if err != nil && ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
		return nil, connectTimeout("no TCP connection to "+addr, d.timeout) // the dial's "i/o timeout" says less
	}
	return c, err
}

// to opens a connection that reaches scheme://addr: directly, or through
// a CONNECT tunnel when a proxy applies.
func (d *dialer) to(ctx context.Context, scheme, addr string) (net.Conn, error) {
	pu, err := d.proxy.forTarget(scheme, addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProxy, err)
	}
	if pu == nil {
		return d.tcp(ctx, addr)
	}
	return d.tunnel(ctx, pu, addr)
}

// forward opens a connection for an HTTP/1.1 request to http://addr: to
// the forward proxy that applies (hop non-nil: requests go in absolute
// form), or to addr itself.
func (d *dialer) forward(ctx context.Context, addr string) (net.Conn, *proxyHop, error) {
	pu, err := d.proxy.forTarget("http", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrProxy, err)
	}
	if pu == nil {
		c, err := d.tcp(ctx, addr)
		return c, nil, err
	}
	c, err := d.toProxy(ctx, pu)
	if err != nil {
		return nil, nil, err
	}
	d.noteProxy(pu)
	return c, &proxyHop{auth: proxyAuth(pu)}, nil
}

// toProxy opens a connection to the proxy itself (TLS for an https://
// proxy).
func (d *dialer) toProxy(ctx context.Context, pu *url.URL) (net.Conn, error) {
	c, err := d.tcp(ctx, hostPort(pu.Scheme, pu.Host))
	if err != nil {
		d.proxyFailed.Add(1)
		return nil, fmt.Errorf("%w %s: %w", ErrProxy, secret.RedactURL(pu.String()), err)
	}
	if pu.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: pu.Hostname(), MinVersion: tls.VersionTLS12, RootCAs: d.roots(), InsecureSkipVerify: d.insecure()}) //nolint:gosec // as the user asked
		hctx, cancel := context.WithTimeout(ctx, d.timeout)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			c.Close()
			d.proxyFailed.Add(1)
			return nil, fmt.Errorf("%w %s: TLS: %w", ErrProxy, secret.RedactURL(pu.String()), err)
		}
		return tc, nil
	}
	return c, nil
}

func (d *dialer) roots() *x509.CertPool {
	if d.tls == nil {
		return nil
	}
	return d.tls.RootCAs
}

func (d *dialer) insecure() bool { return d.tls != nil && d.tls.InsecureSkipVerify }

// tunnel opens a CONNECT tunnel to addr through the proxy pu.
func (d *dialer) tunnel(ctx context.Context, pu *url.URL, addr string) (net.Conn, error) {
	c, err := d.toProxy(ctx, pu)
	if err != nil {
		return nil, err
	}
	shown := secret.RedactURL(pu.String())
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(aLongTimeAgo) })
	defer stop()
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: mcpbench\r\n"
	if a := proxyAuth(pu); a != "" {
		req += "Proxy-Authorization: " + a + "\r\n"
	}
	fail := func(err error) (net.Conn, error) {
		c.Close()
		d.proxyFailed.Add(1)
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("%w %s: CONNECT %s: %w", ErrProxy, shown, addr, err)
	}
	if _, err := c.Write([]byte(req + "\r\n")); err != nil {
		return fail(err)
	}
	// A reader of one byte at a time would be slow; bufio may read past
	// the proxy's answer only if the server spoke first, which TLS and
	// HTTP servers never do.
	br := bufio.NewReaderSize(c, 1024)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return fail(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("proxy answered %s", resp.Status))
	}
	if br.Buffered() > 0 {
		return fail(errors.New("proxy sent bytes after its answer"))
	}
	d.noteProxy(pu)
	return c, nil
}

func (d *dialer) noteProxy(pu *url.URL) {
	d.proxied.Add(1)
	d.mu.Lock()
	d.proxiesUsed[secret.RedactURL(pu.String())] = d.proxy.source
	d.mu.Unlock()
}

// proxyAuth is the Proxy-Authorization value of a proxy URL's userinfo
// (Basic), "" without.
func proxyAuth(pu *url.URL) string {
	if pu.User == nil {
		return ""
	}
	pw, _ := pu.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(pu.User.Username()+":"+pw))
}

// tlsConn opens a TLS connection to addr (through a proxy when one
// applies) offering ALPN protos, and times its handshake. raw, when not
// nil, receives the connection under TLS (the chaos layer's connection
// cut closes it).
func (d *dialer) tlsConn(ctx context.Context, addr string, protos []string, raw *net.Conn) (*tls.Conn, error) {
	c, err := d.to(ctx, "https", addr)
	if err != nil {
		return nil, err
	}
	cfg := d.tls.Clone()
	if cfg.ServerName == "" {
		if h, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = h
		}
	}
	cfg.NextProtos = protos
	if len(cfg.Certificates) == 0 {
		// Under TLS 1.3 a server that requires a certificate says so after
		// the client's handshake ended, and the request may fail first
		// with a broken pipe: remember that one was asked for.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			d.certAsked.Store(true)
			return &tls.Certificate{}, nil
		}
	}
	tc := tls.Client(c, cfg)
	hctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	t0 := time.Now()
	if err := tc.HandshakeContext(hctx); err != nil {
		c.Close()
		d.hsFailed.Add(1)
		if ctx.Err() == nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
			return nil, connectTimeout("no TLS handshake with "+addr, d.timeout)
		}
		if alertIs(err, 120) && len(protos) == 1 && protos[0] == "h2" { // no_application_protocol: the server's ALPN has no h2
			return nil, fmt.Errorf("%s: %w", addr, ErrNoHTTP2)
		}
		return nil, explainTLS(fmt.Errorf("TLS handshake with %s: %w", addr, err), len(cfg.Certificates) > 0)
	}
	st := tc.ConnectionState()
	d.handshakes.Add(1)
	if st.DidResume {
		d.resumed.Add(1)
	}
	d.mu.Lock()
	d.hs.RecordValue(max(time.Since(t0).Microseconds(), 1))
	d.versions[st.Version]++
	d.mu.Unlock()
	if raw != nil {
		*raw = c
	}
	return tc, nil
}

// countProto counts a connection by the protocol it speaks.
func (d *dialer) countProto(p string) {
	d.mu.Lock()
	d.protos[p]++
	d.mu.Unlock()
}

// explainTLS adds what the user can do to a failed handshake or a TLS
// alert on a connection's first read (under TLS 1.3 a server checks the
// client certificate after the client's handshake ended): a server that
// wants a client certificate (mutual TLS), a certificate the roots do not
// trust, a name mismatch. Other errors come back as they are.
func explainTLS(err error, certs bool) error {
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var done *tlsHint
	switch {
	case errors.As(err, &done): // explained already (the dialer's, then the transport's): say it once
		return err
	case alertIs(err, 116) || (alertIs(err, 42) && !certs): // certificate_required, bad_certificate
		if !certs {
			return &tlsHint{setting.Say("the server requires a client certificate (mutual TLS: give %s and %s)", setting.CertFile, setting.KeyFile), err}
		}
		return &tlsHint{"the server refused the client certificate", err}
	case alertIs(err, 42), alertIs(err, 43), alertIs(err, 44), alertIs(err, 45), alertIs(err, 48):
		return &tlsHint{"the server refused the client certificate", err}
	case errors.As(err, &ue):
		return &tlsHint{setting.Say("the server's certificate is signed by an authority not trusted here (give its CA with %s, or %s)", setting.CAFile, setting.Insecure), err}
	case errors.As(err, &he):
		return &tlsHint{setting.Say("the server's certificate does not name the host (%s names the one to check)", setting.TLSServerName), err}
	}
	return err
}

// tlsHint is a TLS error with what the user can do about it, said once:
// "TLS: <hint>: <error>". It unwraps to the error.
type tlsHint struct {
	hint string
	err  error
}

func (e *tlsHint) Error() string { return "TLS: " + e.hint + ": " + e.err.Error() }
func (e *tlsHint) Unwrap() error { return e.err }

// hinted reports whether err carries a tlsHint already.
func hinted(err error) bool {
	var h *tlsHint
	return errors.As(err, &h)
}

// alertIs reports whether err is the TLS alert code sent by the peer
// (crypto/tls reports it as a *net.OpError "remote error" around an
// unexported alert type, hence the comparison of texts).
func alertIs(err error, code uint8) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "remote error" && oe.Err != nil && oe.Err.Error() == tls.AlertError(code).Error()
}

// hostPort adds the scheme's default port to host when it has none.
func hostPort(scheme, host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// h1 opens a connection for h1Transport: TLS offering ALPN proto for
// https (through a CONNECT tunnel when a proxy applies), or for http a
// connection to the target or to its forward proxy (hop non-nil).
func (d *dialer) h1(ctx context.Context, scheme, addr, proto string) (net.Conn, *proxyHop, error) {
	if scheme != "https" {
		c, hop, err := d.forward(ctx, addr)
		if err == nil && proto == "http/1.1" {
			d.countProto("http/1.1")
		}
		return c, hop, err
	}
	tc, err := d.tlsConn(ctx, addr, []string{proto}, nil)
	if err != nil {
		return nil, nil, err
	}
	if proto == "http/1.1" {
		d.countProto("http/1.1")
	}
	return tc, nil, nil
}
