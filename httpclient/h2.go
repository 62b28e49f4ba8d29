package httpclient

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// HTTP/2 comes from the standard library (net/http's Transport with
// Protocols, and its ClientConn): one connection per session, which the
// session's POST streams, GET stream and answers share, as one MCP
// client's would. The dialer under it does TLS (ALPN), proxies and counts.

// h2Transport opens HTTP/2 connections: h2 over TLS for https://, h2c with
// prior knowledge for http:// (RFC 9113 §3.3).
type h2Transport struct {
	std    *http.Transport
	d      *dialer
	shared *h2Pool // requests made outside a session

	mu    sync.Mutex
	pools map[*h2Pool]struct{} // open session pools, closed at the end of a run

	h2cWorked atomic.Bool // an h2c connection got HTTP/2 bytes (h2c.go)
}

// newH2Transport returns an HTTP/2 transport over d.
func newH2Transport(d *dialer) *h2Transport {
	t := &h2Transport{d: d, pools: map[*h2Pool]struct{}{}}
	var p http.Protocols
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	t.std = &http.Transport{
		Protocols:          &p,
		DisableCompression: true, // SSE must not be buffered by a decompressor
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			c, err := d.to(ctx, "http", addr)
			if err != nil {
				return nil, err
			}
			setRaw(ctx, c)
			if p := sniffSlot(ctx); p != nil {
				*p = newH1Sniff(c, &t.h2cWorked) // h2c.go: tells an HTTP/1.1-only server apart
				return *p, nil
			}
			return c, nil
		},
		DialTLSContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			if pre, ok := ctx.Value(preConnKey{}).(*tls.Conn); ok {
				return pre, nil
			}
			tc, err := d.tlsConn(ctx, addr, []string{"h2"}, rawSlot(ctx))
			if err != nil {
				return nil, err
			}
			if tc.ConnectionState().NegotiatedProtocol != "h2" {
				tc.Close()
				return nil, fmt.Errorf("%s: %w", addr, ErrNoHTTP2)
			}
			return tc, nil
		},
	}
	t.shared = t.newPool()
	return t
}

type preConnKey struct{}
type rawConnKey struct{}

// rawSlot returns where the dialer puts the connection under TLS for the
// dial of ctx (nil: nobody asked).
func rawSlot(ctx context.Context) *net.Conn {
	p, _ := ctx.Value(rawConnKey{}).(*net.Conn)
	return p
}

func setRaw(ctx context.Context, c net.Conn) {
	if p := rawSlot(ctx); p != nil {
		*p = c
	}
}

func (t *h2Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.shared.RoundTrip(req)
}

func (t *h2Transport) forSession() sessionRT { return t.newPool() }

func (t *h2Transport) newPool() *h2Pool {
	p := &h2Pool{t: t}
	t.mu.Lock()
	t.pools[p] = struct{}{}
	t.mu.Unlock()
	return p
}

// CloseIdleConnections closes every pool's connections.
func (t *h2Transport) CloseIdleConnections() {
	t.mu.Lock()
	pools := make([]*h2Pool, 0, len(t.pools))
	for p := range t.pools {
		pools = append(pools, p)
	}
	t.mu.Unlock()
	for _, p := range pools {
		p.closeConns()
	}
}

// h2Pool is one session's HTTP/2 connections: normally one, another only
// when the server's stream limit (SETTINGS_MAX_CONCURRENT_STREAMS) is
// reached or a connection failed. Safe for concurrent use.
type h2Pool struct {
	t     *h2Transport
	mu    sync.Mutex
	conns []*h2conn
}

type h2conn struct {
	key   string // scheme://host
	cc    *http.ClientConn
	raw   net.Conn // the TCP connection (to the server, or a proxy tunnel)
	sniff *h1Sniff // h2c: whether the server answered in HTTP/1.1 (nil for h2)
}

// RoundTrip sends req on one of the pool's connections, opening one when
// none can take it. A request is never re-sent.
func (p *h2Pool) RoundTrip(req *http.Request) (*http.Response, error) {
	c, err := p.get(req.Context(), req.URL.Scheme, req.URL.Host)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := c.cc.RoundTrip(req)
	if err != nil {
		return nil, explainGoAway(req.URL.Host, c.sniff.explain(req.Context(), req.URL.Host, err))
	}
	resp.Body = &h2body{ReadCloser: resp.Body, c: c}
	return resp, nil
}

// get returns a connection with a stream reserved for one request.
func (p *h2Pool) get(ctx context.Context, scheme, host string) (*h2conn, error) {
	key := scheme + "://" + host
	p.mu.Lock()
	defer p.mu.Unlock() // dials under the lock: a session opens one connection at a time
	live := p.conns[:0]
	var found *h2conn
	for _, c := range p.conns {
		if c.cc.Err() != nil {
			c.cc.Close()
			continue
		}
		live = append(live, c)
		if found == nil && c.key == key && c.cc.Reserve() == nil {
			found = c
		}
	}
	clear(p.conns[len(live):])
	p.conns = live
	if found != nil {
		return found, nil
	}
	c, err := p.dial(ctx, scheme, host, nil)
	if err != nil {
		return nil, err
	}
	if err := c.cc.Reserve(); err != nil {
		// A new h2c connection can be unusable already: a server without
		// h2c answered the preface in HTTP/1.1 and closed. Say so.
		err = explainNewConn(host, c.sniff.explain(ctx, host, err))
		c.cc.Close()
		return nil, err
	}
	p.conns = append(p.conns, c)
	return c, nil
}

// dial opens a connection to scheme://host (pre: a TLS connection already
// made, whose ALPN chose h2). p.mu is held or p is not shared yet.
func (p *h2Pool) dial(ctx context.Context, scheme, host string, pre *tls.Conn) (*h2conn, error) {
	c := &h2conn{key: scheme + "://" + host}
	dctx := context.WithValue(ctx, rawConnKey{}, &c.raw)
	if scheme == "http" {
		dctx = context.WithValue(dctx, sniffKey{}, &c.sniff)
	}
	if pre != nil {
		dctx = context.WithValue(dctx, preConnKey{}, pre)
		c.raw = pre.NetConn()
	}
	cc, err := p.t.std.NewClientConn(dctx, scheme, hostPort(scheme, host))
	if err != nil {
		return nil, err
	}
	c.cc = cc
	if scheme == "https" {
		p.t.d.countProto("h2")
	} else {
		p.t.d.countProto("h2c")
	}
	return c, nil
}

// adopt makes a TLS connection whose ALPN chose h2 the pool's.
func (p *h2Pool) adopt(ctx context.Context, host string, tc *tls.Conn) error {
	c, err := p.dial(ctx, "https", host, tc)
	if err != nil {
		tc.Close()
		return err
	}
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
	return nil
}

func (p *h2Pool) closeConns() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.cc.Close()
	}
}

// closeAll closes the session's connections and forgets the pool.
func (p *h2Pool) closeAll() {
	p.closeConns()
	p.t.mu.Lock()
	delete(p.t.pools, p)
	p.t.mu.Unlock()
}

var (
	_ Multiplexed = (*h2body)(nil)
	_ ConnCutter  = (*h2body)(nil)
)

// h2body is an HTTP/2 response body. Close resets the stream
// (RST_STREAM) when it was not read to its end; CutConnection closes the
// whole connection under it, every stream on it included: the chaos
// layer's two kinds of cut.
type h2body struct {
	io.ReadCloser
	c *h2conn
}

// Read says a GOAWAY that ended the stream in our words (h2c.go).
func (b *h2body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = explainGoAway(b.c.key, err)
	}
	return n, err
}

// CutConnection closes the TCP connection the stream rides on (with a
// reset when rst, SO_LINGER 0), breaking every stream of the connection.
func (b *h2body) CutConnection(rst bool) error {
	raw := b.c.raw
	if raw == nil {
		return b.c.cc.Close()
	}
	if tcp, ok := raw.(*net.TCPConn); ok && rst {
		tcp.SetLinger(0)
	}
	return raw.Close()
}

// Multiplexed reports that closing the body resets one stream of a
// connection that others share (HTTP/2), not the connection.
func (b *h2body) Multiplexed() bool { return true }

// autoTransport is --http auto: h1Transport for http://, and for https://
// the protocol ALPN picks on the first connection to each host (offering
// h2 and http/1.1): h2 goes to an HTTP/2 connection per session, http/1.1
// to h1Transport. The first connection is handed to the protocol chosen,
// not thrown away.
type autoTransport struct {
	h1 *h1Transport
	h2 *h2Transport
	d  *dialer

	mu    sync.Mutex
	hosts map[string]*alpnChoice
}

// alpnChoice is the protocol chosen for a host; done is closed once it is
// known (or the attempt failed: the next request tries again).
type alpnChoice struct {
	done  chan struct{}
	proto string
	err   error
}

func (a *autoTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return a.roundTrip(req, a.h2.shared)
}

func (a *autoTransport) forSession() sessionRT { return &autoSession{a: a, pool: a.h2.newPool()} }

// CloseIdleConnections closes both transports' connections.
func (a *autoTransport) CloseIdleConnections() {
	a.h1.CloseIdleConnections()
	a.h2.CloseIdleConnections()
}

type autoSession struct {
	a    *autoTransport
	pool *h2Pool
}

func (s *autoSession) RoundTrip(req *http.Request) (*http.Response, error) {
	return s.a.roundTrip(req, s.pool)
}

func (s *autoSession) closeAll() { s.pool.closeAll() }

func (a *autoTransport) roundTrip(req *http.Request, pool *h2Pool) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		return a.h1.RoundTrip(req)
	}
	proto, err := a.choose(req.Context(), req.URL.Host, pool)
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if proto == "h2" {
		return pool.RoundTrip(req)
	}
	return a.h1.RoundTrip(req)
}

// choose returns the protocol of host, making the first connection to it
// when no choice was made yet (the connection then goes to pool or to
// h1Transport's idle connections).
func (a *autoTransport) choose(ctx context.Context, host string, pool *h2Pool) (string, error) {
	a.mu.Lock()
	ch := a.hosts[host]
	if ch == nil {
		ch = &alpnChoice{done: make(chan struct{})}
		a.hosts[host] = ch
		a.mu.Unlock()
		a.decide(ctx, host, ch, pool)
		return ch.proto, ch.err
	}
	a.mu.Unlock()
	select {
	case <-ch.done:
		return ch.proto, ch.err // a failed choice was forgotten: the next request tries again
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// decide makes the first TLS connection to host and records the protocol
// ALPN chose; it closes ch.done. A failed attempt is forgotten, so the
// next request tries again.
func (a *autoTransport) decide(ctx context.Context, host string, ch *alpnChoice, pool *h2Pool) {
	defer close(ch.done)
	defer func() {
		if ch.err != nil {
			a.mu.Lock()
			delete(a.hosts, host)
			a.mu.Unlock()
		}
	}()
	tc, err := a.d.tlsConn(ctx, hostPort("https", host), []string{"h2", "http/1.1"}, nil)
	if err != nil {
		ch.err = err
		return
	}
	if tc.ConnectionState().NegotiatedProtocol == "h2" {
		ch.proto = "h2"
		ch.err = pool.adopt(ctx, host, tc)
		return
	}
	ch.proto = "http/1.1"
	a.d.countProto("http/1.1")
	a.h1.adopt("https", host, tc)
}

// newStdTransport is net/http's Transport (Options.StdHTTP) over the
// dialer: HTTP/1.1 and h2 by ALPN (auto), one of them, or h2c for http://
// (2). http:// through a proxy goes in a CONNECT tunnel.
func newStdTransport(d *dialer, mode string) *http.Transport {
	var p http.Protocols
	protos := []string{"h2", "http/1.1"}
	switch mode {
	case HTTP1:
		p.SetHTTP1(true)
		protos = []string{"http/1.1"}
	case HTTP2:
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		protos = []string{"h2"}
	default:
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	}
	return &http.Transport{
		Protocols:           &p,
		MaxIdleConnsPerHost: 100000,
		DisableCompression:  true, // SSE must not be buffered by a decompressor
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			c, err := d.to(ctx, "http", addr)
			if err == nil {
				d.countProto(map[bool]string{true: "h2c", false: "http/1.1"}[mode == HTTP2])
			}
			return c, err
		},
		DialTLSContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			tc, err := d.tlsConn(ctx, addr, protos, nil)
			if err != nil {
				return nil, err
			}
			switch np := tc.ConnectionState().NegotiatedProtocol; {
			case np == "h2":
				d.countProto("h2")
			case mode == HTTP2:
				tc.Close()
				return nil, fmt.Errorf("%s: %w", addr, ErrNoHTTP2)
			default:
				d.countProto("http/1.1")
			}
			return tc, nil
		},
	}
}
