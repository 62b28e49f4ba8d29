package httpclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
)

// getConn returns an idle connection to scheme://host that passes the
// liveness check or, with none (or fresh), a new one.
func (t *h1Transport) getConn(ctx context.Context, scheme, host string, fresh bool) (*h1conn, error) {
	key := t.poolKey(scheme, host)
	for !fresh { // bounded by the pool, which only shrinks here
		t.mu.Lock()
		conns := t.idle[key]
		if len(conns) == 0 {
			t.mu.Unlock()
			break
		}
		pc := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		t.idle[key] = conns[:len(conns)-1]
		t.mu.Unlock()
		if time.Since(pc.idleAt) > netutil.DurOr(t.IdleTimeout, 60*time.Second) || !pc.alive() {
			pc.c.Close()
			continue
		}
		pc.reused = true
		pc.br = getReader(pc.rw)
		return pc, nil
	}
	addr := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	c, hop, err := t.dial(ctx, scheme, addr, "http/1.1")
	if err != nil {
		// RFC 7301 §3.2: no_application_protocol, the server supports none
		// of the protocols offered. Say so if it is an HTTP/2-only server.
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "remote error" && oe.Err != nil &&
			oe.Err.Error() == tls.AlertError(120).Error() && t.acceptsH2(ctx, addr) {
			return nil, fmt.Errorf("%s: %w", addr, ErrHTTP2Only)
		}
		return nil, err
	}
	pc := newH1conn(t, key, addr, c)
	pc.hop = hop
	return pc, nil
}

// poolKey returns scheme://host, the idle pool's key; the last one made is
// kept, so a transport that talks to one endpoint makes it once.
func (t *h1Transport) poolKey(scheme, host string) string {
	if k := t.lastKey.Load(); k != nil && k.scheme == scheme && k.host == host {
		return k.key
	}
	k := &poolKey{scheme: scheme, host: host, key: scheme + "://" + host}
	t.lastKey.Store(k)
	return k.key
}

type poolKey struct{ scheme, host, key string }

// dial connects to addr, with a TLS handshake offering ALPN proto for
// https; hop is the forward proxy an http:// connection goes to (nil:
// direct).
func (t *h1Transport) dial(ctx context.Context, scheme, addr, proto string) (net.Conn, *proxyHop, error) {
	if t.d != nil {
		return t.d.h1(ctx, scheme, addr, proto)
	}
	c, err := t.dialDirect(ctx, scheme, addr, proto)
	return c, nil, err
}

// dialDirect is dial without New's dialer: Dial (or a
// net.Dialer) and TLSConfig.
func (t *h1Transport) dialDirect(ctx context.Context, scheme, addr, proto string) (net.Conn, error) {
	timeout := netutil.DurOr(t.DialTimeout, 5*time.Second)
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var c net.Conn
	var err error
	if t.Dial != nil {
		c, err = t.Dial(dctx, "tcp", addr)
	} else {
		t.srcOnce.Do(func() { t.src = newSourcePicker(t.SourceAddrs) })
		d := net.Dialer{Timeout: timeout, KeepAliveConfig: netutil.KeepAlive(), LocalAddr: t.src.pick()}
		c, err = d.DialContext(dctx, "tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	if scheme != "https" {
		return c, nil
	}
	cfg := &tls.Config{}
	if t.TLSConfig != nil {
		cfg = t.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		h, _, err := net.SplitHostPort(addr)
		if err == nil {
			cfg.ServerName = h
		}
	}
	cfg.NextProtos = []string{proto}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(dctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

// acceptsH2 probes addr once with a TLS handshake offering only ALPN "h2"
// and reports whether the server chose it.
func (t *h1Transport) acceptsH2(ctx context.Context, addr string) bool {
	c, _, err := t.dial(ctx, "https", addr, "h2")
	if err != nil {
		return false
	}
	defer c.Close()
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}

func newH1conn(t *h1Transport, key, addr string, c net.Conn) *h1conn {
	pc := &h1conn{t: t, key: key, addr: addr, c: c, rw: c}
	if r := newRawIO(c); r != nil {
		pc.rw = r
	}
	pc.br = getReader(pc.rw)
	pc.cw.c = pc.rw
	nc := c
	if tc, ok := c.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	if tcp, ok := nc.(*net.TCPConn); ok && runtime.GOOS != "windows" {
		if rc, err := tcp.SyscallConn(); err == nil {
			pc.rc = rc
			pc.peekFn = pc.peek
		}
	}
	return pc
}

// alive reports whether an idle connection can take a request: its socket
// holds no FIN, RST or unsolicited bytes. Without a socket to peek at (a
// wrapped or in-memory connection) it says yes.
func (pc *h1conn) alive() bool {
	if pc.rc == nil {
		return true
	}
	pc.peekLive = false
	if err := pc.rc.Read(pc.peekFn); err != nil {
		return false
	}
	return pc.peekLive
}

// peek is alive's look at the socket: recvfrom(2) with MSG_PEEK, which
// does not block as Go's sockets are non-blocking. It always returns true:
// RawConn.Read must not wait for the socket to become readable.
func (pc *h1conn) peek(fd uintptr) bool {
	n, err := peekFD(fd, pc.peekBuf[:])
	// Nothing to read is the healthy state; a byte (n > 0), the end of the
	// stream (n == 0) or an error (ECONNRESET) means drop the connection.
	pc.peekLive = n <= 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == syscall.EINTR)
	return true
}

// msgPeek is MSG_PEEK, 0x2 on Linux, Darwin, the BSDs, Solaris and AIX
// (not defined by package syscall on Windows, where peek is not used).
const msgPeek = 0x2

// peekSocket calls recvfrom with msgPeek. recvfrom is syscall.Recvfrom,
// whose descriptor is an int on Unix and a Handle on Windows, hence the
// type parameter: the file builds everywhere.
func peekSocket[FD ~int | ~uintptr](recvfrom func(FD, []byte, int) (int, syscall.Sockaddr, error), fd uintptr, p []byte) (int, error) {
	n, _, err := recvfrom(FD(fd), p, msgPeek)
	return n, err
}

// adopt puts a connection made elsewhere (autoTransport's first TLS
// connection to a host, whose ALPN chose http/1.1) among the idle ones.
func (t *h1Transport) adopt(scheme, host string, c net.Conn) {
	t.putIdle(newH1conn(t, scheme+"://"+host, hostPort(scheme, host), c))
}

// putIdle keeps pc for reuse. Its read buffer (empty: finish checked)
// goes back to the pool while it waits: an idle session's connection holds
// no buffer.
func (t *h1Transport) putIdle(pc *h1conn) {
	putReader(pc.br)
	pc.br = nil
	pc.idleAt = time.Now()
	pc.c.SetDeadline(time.Time{})
	t.mu.Lock()
	if t.idle == nil {
		t.idle = map[string][]*h1conn{}
	}
	t.idle[pc.key] = append(t.idle[pc.key], pc)
	t.mu.Unlock()
}

// CloseIdleConnections closes kept-alive connections (http.Client calls it).
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, conns := range idle {
		for _, pc := range conns {
			pc.c.Close()
		}
	}
}

// Connection buffers are pooled: a read buffer is held while a request's
// response is read (a GET stream's for the stream's life) and a write
// buffer only while a request is written, so idle connections hold none.
const (
	readBufSize  = 4 << 10
	writeBufSize = 4 << 10
)

var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufSize) }}
	writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, writeBufSize) }}
)

func getReader(r io.Reader) *bufio.Reader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(br *bufio.Reader) {
	if br == nil {
		return
	}
	br.Reset(nil)
	switch br.Size() {
	case readBufSize:
		readerPool.Put(br)
	case streamBufSize: // a GET stream's small one
		streamReaderPool.Put(br)
	}
}

func getWriter(w io.Writer) *bufio.Writer {
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(w)
	return bw
}

func putWriter(bw *bufio.Writer) {
	bw.Reset(nil)
	writerPool.Put(bw)
}
