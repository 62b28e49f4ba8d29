package driver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// H1Transport is an HTTP/1.1 client transport made for load generation
// (RFC 9112). The goroutine that calls RoundTrip writes the request and
// reads the response on the connection itself: no reader or writer
// goroutines per connection and no channel handoffs, which is where
// net/http's Transport spends most of its CPU at a few thousand requests
// per second. Connections are kept alive and reused (LIFO).
//
// A request is never sent twice once any byte of it was accepted by the
// connection: the server may have executed it (a tools/call run twice; RFC
// 9112 §9.3.1 forbids retrying a non-idempotent request automatically).
// Such a request whose connection closes before the response head fails
// with ErrConnClosedAfterWrite. To keep that rare on kept-alive
// connections, an idle TCP connection (plain or under TLS) is checked
// before reuse with a non-blocking peek at its socket (one recvfrom(2)
// with MSG_PEEK, under a microsecond): one the server closed (FIN or RST
// pending) or sent unsolicited bytes on (a 408, a TLS alert) is dropped. Only a request the
// connection failed to take any byte of is re-sent, once, on a fresh
// connection, and counted (Retries).
//
// It speaks HTTP/1.1 only (over TLS for https), without proxies, redirects
// or compression: what an MCP endpoint needs. A server that speaks only
// HTTP/2 is reported as ErrHTTP2Only. Safe for concurrent use.
type H1Transport struct {
	// Dial opens connections; nil means a net.Dialer with DialTimeout.
	// A chaos layer may wrap the net.Conn it returns (a connection that is
	// not a *net.TCPConn, or TLS over one, is reused without the check).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// DialTimeout bounds dialing and the TLS handshake; 0 means 5 s.
	DialTimeout time.Duration
	// TLSConfig for https (nil: defaults; ServerName is set per host).
	// NextProtos is replaced by ["http/1.1"].
	TLSConfig *tls.Config
	// IdleTimeout closes connections idle for longer; 0 means 60 s.
	IdleTimeout time.Duration
	// UserAgent is sent when the request has none; "" means "mcpbench".
	UserAgent string

	mu      sync.Mutex
	idle    map[string][]*h1conn
	retries atomic.Int64
}

var _ http.RoundTripper = (*H1Transport)(nil)

// ErrConnClosedAfterWrite: the connection closed (EOF or reset) after the
// request, or part of it, was written and before the response head was
// complete. The request is not re-sent: the server may have executed it.
var ErrConnClosedAfterWrite = errors.New("connection closed after the request was sent (not re-sent: the server may have executed it)")

// ErrHTTP2Only: the server speaks only HTTP/2. Either its TLS handshake
// refuses ALPN "http/1.1" (or negotiates no protocol and drops the first
// request) while it accepts "h2", or it answers an HTTP/1.1 request with
// HTTP/2 frames (RFC 9113 §3.4, §4.1).
var ErrHTTP2Only = errors.New("server offers only HTTP/2 (ALPN h2); this transport speaks HTTP/1.1")

// Retries returns the number of requests re-sent because the connection
// failed before any byte of them was written (the server cannot have seen
// them). A request of which a byte was written is never re-sent. Safe for
// concurrent use.
func (t *H1Transport) Retries() int64 { return t.retries.Load() }

type h1conn struct {
	t      *H1Transport
	key    string // scheme://host, the pool key
	addr   string // host:port dialed
	c      net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	cw     connWriter // under bw: counts the bytes the connection accepted
	long   []byte     // a line longer than br's buffer, gathered
	idleAt time.Time
	reused bool

	// Liveness check of an idle connection (see alive); rc is nil where
	// there is no socket to peek at.
	rc       syscall.RawConn
	peekFn   func(fd uintptr) bool
	peekBuf  [1]byte
	peekLive bool
}

// connWriter writes to the connection and counts what it accepted, so that
// a failed request is known to be unsent (n == 0) or possibly seen.
type connWriter struct {
	c   net.Conn
	n   int64 // bytes of the current request accepted
	err error // the write error, once a write failed
}

func (w *connWriter) Write(p []byte) (int, error) {
	n, err := w.c.Write(p)
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
	return n, err
}

// errH1 describes a malformed response.
var errH1 = errors.New("malformed HTTP/1.1 response")

// aLongTimeAgo is a deadline in the past, set to abort blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// RoundTrip implements http.RoundTripper. The request body is closed, as
// the interface requires. Cancelling the request's context aborts the
// exchange, the body read included.
//
// Errors: a request written (in part or whole) whose connection closed
// before the response head wraps ErrConnClosedAfterWrite (and the I/O
// error); an HTTP/2-only server gives ErrHTTP2Only; a malformed response
// head names the part at fault (status line, the header, chunk size,
// trailer) with a quoted excerpt of at most 64 bytes.
func (t *H1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := requestBody(req)
	if err != nil {
		return nil, err
	}
	u := req.URL
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("h1: unsupported URL %v", u)
	}
	ctx := req.Context()
	fresh := false
	for attempt := 0; ; attempt++ { // at most two attempts
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pc, err := t.getConn(ctx, u.Scheme, u.Host, fresh)
		if err != nil {
			return nil, err
		}
		stop := context.AfterFunc(ctx, func() { pc.c.SetDeadline(aLongTimeAgo) })
		resp, got, err := pc.exchange(req, body)
		if err == nil {
			b := resp.Body.(*h1body)
			b.stop, b.ctx = stop, ctx
			if b.mode == modeNone {
				b.finish()
			}
			return resp, nil
		}
		fired := !stop()
		pc.c.Close()
		if fired {
			if ctxErr := context.Cause(ctx); ctxErr != nil {
				return nil, ctxErr
			}
		}
		// The connection failed to take the first byte of the request:
		// nothing reached the server, so it may go once more on a new one.
		if pc.cw.err != nil && pc.cw.n == 0 && attempt == 0 {
			t.retries.Add(1)
			fresh = true
			continue
		}
		return nil, t.explain(ctx, pc, got, err)
	}
}

// explain turns the failure of a request on pc into the error RoundTrip
// returns; got says whether any response byte arrived.
func (t *H1Transport) explain(ctx context.Context, pc *h1conn, got bool, err error) error {
	if !connClosed(err) {
		return err
	}
	// A TLS connection that negotiated no protocol and was dropped at its
	// first request: a server that speaks only HTTP/2 and lets HTTP/1.1
	// clients finish the handshake (Go's, go.dev/issue/46310) does that.
	if tc, ok := pc.c.(*tls.Conn); ok && !pc.reused && !got && tc.ConnectionState().NegotiatedProtocol == "" &&
		t.acceptsH2(ctx, pc.addr) {
		return fmt.Errorf("%s: %w", pc.addr, ErrHTTP2Only)
	}
	switch {
	case pc.cw.n > 0 && pc.cw.err != nil:
		return fmt.Errorf("%w (%d bytes of the request written): %w", ErrConnClosedAfterWrite, pc.cw.n, err)
	case pc.cw.n > 0:
		return fmt.Errorf("%w: %w", ErrConnClosedAfterWrite, err)
	}
	return err
}

// connClosed reports whether err says the peer closed or reset the
// connection (as opposed to a malformed response or a timeout).
func connClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}

// requestBody reads and closes the request body.
func requestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	if br, ok := req.Body.(interface{ Bytes() []byte }); ok {
		return br.Bytes(), nil
	}
	return io.ReadAll(req.Body)
}

// getConn returns an idle connection to scheme://host that passes the
// liveness check or, with none (or fresh), a new one.
func (t *H1Transport) getConn(ctx context.Context, scheme, host string, fresh bool) (*h1conn, error) {
	key := scheme + "://" + host
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
		if time.Since(pc.idleAt) > durOr(t.IdleTimeout, 60*time.Second) || !pc.alive() {
			pc.c.Close()
			continue
		}
		pc.reused = true
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
	c, err := t.dial(ctx, scheme, addr, "http/1.1")
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
	return newH1conn(t, key, addr, c), nil
}

// dial connects to addr, with a TLS handshake offering ALPN proto for
// https.
func (t *H1Transport) dial(ctx context.Context, scheme, addr, proto string) (net.Conn, error) {
	timeout := durOr(t.DialTimeout, 5*time.Second)
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var c net.Conn
	var err error
	if t.Dial != nil {
		c, err = t.Dial(dctx, "tcp", addr)
	} else {
		d := net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
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
func (t *H1Transport) acceptsH2(ctx context.Context, addr string) bool {
	c, err := t.dial(ctx, "https", addr, "h2")
	if err != nil {
		return false
	}
	defer c.Close()
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}

func newH1conn(t *H1Transport, key, addr string, c net.Conn) *h1conn {
	pc := &h1conn{t: t, key: key, addr: addr, c: c, br: bufio.NewReaderSize(c, 8192)}
	pc.cw.c = c
	pc.bw = bufio.NewWriterSize(&pc.cw, 4096)
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
	n, err := peekSocket(syscall.Recvfrom, fd, pc.peekBuf[:])
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

func (t *H1Transport) putIdle(pc *h1conn) {
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
func (t *H1Transport) CloseIdleConnections() {
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

// exchange writes the request and reads the response head. got reports
// whether any response byte arrived.
func (pc *h1conn) exchange(req *http.Request, body []byte) (*http.Response, bool, error) {
	if err := pc.writeRequest(req, body); err != nil {
		return nil, false, err
	}
	return pc.readResponse(req)
}

func (pc *h1conn) writeRequest(req *http.Request, body []byte) error {
	w := pc.bw
	pc.cw.n, pc.cw.err = 0, nil
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w.WriteString(host)
	w.WriteString("\r\n")
	ua := false
	for k, vs := range req.Header {
		if k == "Host" || k == "Content-Length" || k == "Connection" || k == "Transfer-Encoding" {
			continue
		}
		if k == "User-Agent" {
			ua = true
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n") {
				return fmt.Errorf("h1: header %s has a line break", k)
			}
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if !ua {
		w.WriteString("User-Agent: ")
		w.WriteString(cmpOr(pc.t.UserAgent, "mcpbench"))
		w.WriteString("\r\n")
	}
	if req.Close {
		w.WriteString("Connection: close\r\n")
	}
	if body != nil || method == http.MethodPost || method == http.MethodPut {
		var nb [20]byte
		w.WriteString("Content-Length: ")
		w.Write(strconv.AppendInt(nb[:0], int64(len(body)), 10))
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
	return w.Flush()
}

// errLineTooLong: a line is longer than readLine's limit.
var errLineTooLong = errors.New("line too long")

// readLine returns one line without its CR LF (or LF) and the bytes it took
// on the wire. A line within the reader's buffer is a slice of it, valid
// until the next read; a longer one is gathered in pc.long. A line of more
// than limit bytes (line end included) is errLineTooLong, returned with
// the line's first bytes; at a read error the partial line comes back.
func (pc *h1conn) readLine(limit int) ([]byte, int, error) {
	line, err := pc.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		pc.long = append(pc.long[:0], line...)
		for err == bufio.ErrBufferFull && len(pc.long) <= limit { // bounded by limit
			line, err = pc.br.ReadSlice('\n')
			pc.long = append(pc.long, line...)
		}
		line = pc.long
		if err == bufio.ErrBufferFull {
			err = errLineTooLong
		}
	}
	n := len(line)
	if n > limit {
		return line[:min(n, limit)], n, errLineTooLong
	}
	if err != nil {
		return line, n, err
	}
	line = line[:n-1]
	if m := len(line); m > 0 && line[m-1] == '\r' {
		line = line[:m-1]
	}
	return line, n, nil
}

// excerpt quotes at most 64 bytes of b in ASCII, other bytes escaped, with
// "..." after it when b is longer: for error messages.
func excerpt(b []byte) string {
	if len(b) > 64 {
		return strconv.QuoteToASCII(string(b[:64])) + "..."
	}
	return strconv.QuoteToASCII(string(b))
}

// fieldName quotes the name of a header or trailer line (up to its colon)
// for an error message, never its value.
func fieldName(line []byte) string {
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		return excerpt(bytes.TrimSpace(line[:i]))
	}
	return "line starting " + excerpt(line)
}

// maxHeaderBytes bounds a response head (status line, header lines, line
// ends and any 1xx heads before it) and, separately, a chunked body's
// trailers.
const maxHeaderBytes = 1 << 20

// maxChunkLine bounds a chunk-size line (chunk extensions included).
const maxChunkLine = 4096

// http1Prefix starts every HTTP/1.x status line.
const http1Prefix = "HTTP/1."

func (pc *h1conn) readResponse(req *http.Request) (*http.Response, bool, error) {
	got := false
	budget := maxHeaderBytes
	for { // 1xx heads and the final one; bounded by budget
		if _, err := pc.br.Peek(1); err != nil {
			if got {
				err = eofIsUnexpected(err)
			}
			return nil, got, err
		}
		got = true
		if err := pc.checkStart(); err != nil {
			return nil, true, err
		}
		line, n, err := pc.readLine(budget)
		switch {
		case err == errLineTooLong:
			return nil, true, fmt.Errorf("%w: status line %s makes the response head larger than 1 MiB", errH1, excerpt(line))
		case err != nil:
			return nil, true, fmt.Errorf("h1: status line %s cut short: %w", excerpt(line), eofIsUnexpected(err))
		}
		budget -= n
		// HTTP/1.x SP 3DIGIT [SP reason]
		if len(line) < 12 || !bytes.HasPrefix(line, []byte(http1Prefix)) || line[8] != ' ' {
			return nil, true, fmt.Errorf("%w: status line %s", errH1, excerpt(line))
		}
		code := 0
		for _, c := range line[9:12] {
			if c < '0' || c > '9' {
				code = -1
				break
			}
			code = code*10 + int(c-'0')
		}
		if code < 100 {
			return nil, true, fmt.Errorf("%w: status line %s: no status code", errH1, excerpt(line))
		}
		resp := &http.Response{
			StatusCode: code,
			Status:     string(line[9:]),
			Proto:      "HTTP/1.1",
			ProtoMajor: 1,
			ProtoMinor: 1,
			Header:     make(http.Header, 6),
			Request:    req,
		}
		if line[7] == '0' {
			resp.Proto, resp.ProtoMinor = "HTTP/1.0", 0
		}
		err = pc.readHeader(resp.Header, &budget)
		if cap(pc.long) > 64<<10 {
			pc.long = nil // do not keep a huge line's buffer
		}
		if err != nil {
			return nil, true, err
		}
		if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
			continue // 1xx informational: the real response follows
		}
		b := &h1body{pc: pc, keep: resp.ProtoMinor == 1}
		for _, v := range resp.Header["Connection"] {
			if strings.EqualFold(strings.TrimSpace(v), "close") {
				b.keep = false
			}
		}
		if req.Close {
			b.keep = false
		}
		te := resp.Header.Get("Transfer-Encoding")
		cl := resp.Header.Get("Content-Length")
		switch {
		case req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified:
			b.mode = modeNone
		case te != "":
			if !strings.EqualFold(strings.TrimSpace(te), "chunked") {
				return nil, true, fmt.Errorf("%w: transfer encoding %s", errH1, excerpt([]byte(te)))
			}
			b.mode = modeChunked
			resp.TransferEncoding = []string{"chunked"}
			resp.ContentLength = -1
		case cl != "":
			n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
			if err != nil || n < 0 {
				return nil, true, fmt.Errorf("%w: content length %s", errH1, excerpt([]byte(cl)))
			}
			b.mode, b.left, resp.ContentLength = modeLength, n, n
			if n == 0 {
				b.mode = modeNone
			}
		default:
			b.mode, b.keep, resp.ContentLength = modeClose, false, -1
		}
		resp.Body = b
		return resp, true, nil
	}
}

// checkStart looks at the first buffered bytes of a response head (at
// least one): anything but the start of "HTTP/1." fails at once, without
// waiting for a line end that may never come. HTTP/2 is ErrHTTP2Only.
func (pc *h1conn) checkStart() error {
	b, _ := pc.br.Peek(pc.br.Buffered())
	if m := min(len(b), len(http1Prefix)); string(b[:m]) == http1Prefix[:m] {
		return nil
	}
	if what := pc.http2Start(b); what != "" {
		return fmt.Errorf("%w: the server answered with %s", ErrHTTP2Only, what)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return fmt.Errorf("%w: status line %s: not HTTP/1.x", errH1, excerpt(bytes.TrimSuffix(b, []byte("\r"))))
}

// h2Preface is the HTTP/2 connection preface (RFC 9113 §3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// http2Start says what HTTP/2 the bytes b (buffered, at least one) start
// with, or "". A frame header (RFC 9113 §4.1) has a 24-bit length, so its
// first byte is 0 for any frame a server starts with: only then does it
// wait for the 9 bytes.
func (pc *h1conn) http2Start(b []byte) string {
	switch b[0] {
	case 0:
		h, err := pc.br.Peek(9)
		if err != nil {
			return ""
		}
		length := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags := h[3], h[4]
		stream := (uint32(h[5])<<24 | uint32(h[6])<<16 | uint32(h[7])<<8 | uint32(h[8])) &^ (1 << 31)
		switch {
		case stream != 0:
		case typ == 0x4 && flags&^1 == 0 && length%6 == 0:
			return "an HTTP/2 SETTINGS frame"
		case typ == 0x7 && length >= 8:
			return "an HTTP/2 GOAWAY frame"
		}
	case 'P':
		if m := min(len(b), len(h2Preface)); string(b[:m]) != h2Preface[:m] {
			return ""
		}
		if h, err := pc.br.Peek(len(h2Preface)); err == nil && string(h) == h2Preface {
			return "the HTTP/2 connection preface"
		}
	}
	return ""
}

// readHeader reads header lines up to the blank line into h, within budget
// bytes (decreased by what it reads).
func (pc *h1conn) readHeader(h http.Header, budget *int) error {
	for { // bounded by budget
		line, n, err := pc.readLine(*budget)
		switch {
		case err == errLineTooLong:
			return fmt.Errorf("%w: response header %s makes the response head larger than 1 MiB", errH1, fieldName(line))
		case err != nil:
			return fmt.Errorf("h1: response head cut short: %w", eofIsUnexpected(err))
		}
		*budget -= n
		if len(line) == 0 {
			return nil
		}
		i := bytes.IndexByte(line, ':')
		if i <= 0 {
			return fmt.Errorf("%w: header line %s", errH1, excerpt(line))
		}
		key := canonicalKey(line[:i])
		v := bytes.TrimSpace(line[i+1:])
		h[key] = append(h[key], string(v))
	}
}

// canonicalKey returns the canonical header key, without allocating for
// the keys MCP servers send.
func canonicalKey(k []byte) string {
	switch string(k) {
	case "Content-Type", "content-type":
		return "Content-Type"
	case "Content-Length", "content-length":
		return "Content-Length"
	case "Transfer-Encoding", "transfer-encoding":
		return "Transfer-Encoding"
	case "Connection", "connection":
		return "Connection"
	case "Date", "date":
		return "Date"
	case "Cache-Control", "cache-control":
		return "Cache-Control"
	case "Mcp-Session-Id", "mcp-session-id", "MCP-Session-Id":
		return HeaderSessionID
	case "Keep-Alive", "keep-alive":
		return "Keep-Alive"
	case "Vary", "vary":
		return "Vary"
	case "X-Accel-Buffering", "x-accel-buffering":
		return "X-Accel-Buffering"
	}
	return http.CanonicalHeaderKey(string(k))
}

const (
	modeNone = iota
	modeLength
	modeChunked
	modeClose
)

// h1body reads a response body from the connection. At its end the
// connection goes back to the idle pool; closed early, it is closed. Close
// may be called from another goroutine to abort a blocked Read.
type h1body struct {
	pc   *h1conn
	mode int
	left int64 // bytes left in the body (length) or the chunk (chunked)
	keep bool  // the connection may be reused after the body
	crlf bool  // a chunk's trailing CRLF is still to be read
	stop func() bool
	ctx  context.Context
	err  error

	state atomic.Int32 // 0 open, 1 finished, 2 closed
}

func (b *h1body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.state.Load() != 0 {
		if b.state.Load() == 1 {
			return 0, io.EOF
		}
		return 0, errBodyClosed
	}
	n, err := b.read(p)
	if err != nil {
		if err == io.EOF {
			b.finish()
		} else {
			if b.state.Load() == 2 {
				err = errBodyClosed
			} else if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() && b.ctx != nil {
				if cause := context.Cause(b.ctx); cause != nil {
					err = cause // the context aborted the read
				}
			}
			b.err = err
			b.abort()
		}
	}
	return n, err
}

var errBodyClosed = errors.New("h1: body closed")

func (b *h1body) read(p []byte) (int, error) {
	br := b.pc.br
	switch b.mode {
	case modeNone:
		return 0, io.EOF
	case modeLength:
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
		n, err := br.Read(p)
		b.left -= int64(n)
		if b.left == 0 {
			return n, io.EOF
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	case modeClose:
		return br.Read(p)
	}
	// chunked (RFC 9112 §7.1)
	if b.left == 0 {
		size, err := b.nextChunk()
		if err != nil {
			return 0, err
		}
		if size == 0 {
			return 0, b.trailers()
		}
		b.left = size
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := br.Read(p)
	b.left -= int64(n)
	if b.left == 0 {
		b.crlf = true
		// Finish the stream in this call when its end is already buffered,
		// so the caller sees EOF without one more read.
		if br.Buffered() >= 5 {
			if peek, _ := br.Peek(5); string(peek) == "\r\n0\r\n" {
				if peek, _ := br.Peek(7); string(peek) == "\r\n0\r\n\r\n" {
					br.Discard(7)
					return n, io.EOF
				}
			}
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// nextChunk reads the CRLF that ends the previous chunk's data, if due,
// and the next chunk-size line; it returns the size.
func (b *h1body) nextChunk() (int64, error) {
	if b.crlf {
		line, _, err := b.pc.readLine(maxChunkLine)
		switch {
		case err == errLineTooLong || err == nil && len(line) != 0:
			return 0, fmt.Errorf("%w: chunk data not followed by CRLF but %s", errH1, excerpt(line))
		case err != nil:
			return 0, fmt.Errorf("h1: reading the CRLF after chunk data: %w", eofIsUnexpected(err))
		}
		b.crlf = false
	}
	line, _, err := b.pc.readLine(maxChunkLine)
	switch {
	case err == errLineTooLong:
		return 0, fmt.Errorf("%w: chunk size line %s longer than %d bytes", errH1, excerpt(line), maxChunkLine)
	case err != nil && len(line) > 0:
		return 0, fmt.Errorf("h1: reading chunk size: line %s cut short: %w", excerpt(line), eofIsUnexpected(err))
	case err != nil:
		return 0, fmt.Errorf("h1: reading chunk size: %w", eofIsUnexpected(err))
	}
	size, why := parseChunkSize(line)
	if why != "" {
		return 0, fmt.Errorf("%w: chunk size %s: %s", errH1, excerpt(line), why)
	}
	return size, nil
}

// parseChunkSize parses a chunk-size line: hex digits, then optional
// whitespace and chunk extensions (RFC 9112 §7.1.1, ignored). why says
// what is wrong, or is "".
func parseChunkSize(line []byte) (size int64, why string) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t")
	if len(line) == 0 {
		return 0, "empty"
	}
	if line[0] == '-' {
		return 0, "negative"
	}
	for _, c := range line {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, "not hexadecimal"
		}
		if size > math.MaxInt64>>4 {
			return 0, "larger than 2^63-1"
		}
		size = size<<4 | int64(d)
	}
	return size, ""
}

// trailers reads the trailer section after the last chunk, up to the blank
// line, within maxHeaderBytes, and discards it; io.EOF means the body
// ended well.
func (b *h1body) trailers() error {
	budget := maxHeaderBytes
	for { // bounded by budget
		line, n, err := b.pc.readLine(budget)
		switch {
		case err == errLineTooLong:
			return fmt.Errorf("%w: trailer %s makes the trailers larger than 1 MiB", errH1, fieldName(line))
		case err != nil:
			return fmt.Errorf("h1: reading trailer: %w", eofIsUnexpected(err))
		}
		budget -= n
		if len(line) == 0 {
			return io.EOF
		}
		if bytes.IndexByte(line, ':') <= 0 {
			return fmt.Errorf("%w: trailer line %s", errH1, excerpt(line))
		}
	}
}

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// finish ends a fully read body: the connection is reused if it can be.
func (b *h1body) finish() {
	if !b.state.CompareAndSwap(0, 1) {
		return
	}
	// Bytes after the response were never asked for: do not reuse.
	reuse := b.keep && b.pc.br.Buffered() == 0
	if b.stop != nil && !b.stop() {
		reuse = false // the context fired: the deadline is poisoned
	}
	if reuse {
		b.pc.t.putIdle(b.pc)
	} else {
		b.pc.c.Close()
	}
}

// abort drops the connection after a failed read.
func (b *h1body) abort() {
	if b.state.CompareAndSwap(0, 2) {
		if b.stop != nil {
			b.stop()
		}
		b.pc.c.Close()
	}
}

// Reset drops the connection with a TCP reset (SO_LINGER 0) instead of an
// orderly close: the chaos layer's RST cut. A blocked Read returns an error.
func (b *h1body) Reset() error {
	if b.state.CompareAndSwap(0, 2) {
		if b.stop != nil {
			b.stop()
		}
		if tc, ok := b.pc.c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		b.pc.c.Close()
	}
	return nil
}

// Close ends the body; unless it was read to its end, the connection is
// closed (a blocked Read returns an error).
func (b *h1body) Close() error {
	b.abort()
	return nil
}
