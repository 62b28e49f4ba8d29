package driver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// H1Transport is an HTTP/1.1 client transport made for load generation
// (RFC 9112). The goroutine that calls RoundTrip writes the request and
// reads the response on the connection itself: no reader or writer
// goroutines per connection and no channel handoffs, which is where
// net/http's Transport spends most of its CPU at a few thousand requests
// per second. Connections are kept alive and reused (LIFO); a reused
// connection the server had closed is retried once on a fresh one.
//
// It speaks HTTP/1.1 only (over TLS for https), without proxies, redirects
// or compression: what an MCP endpoint needs. Safe for concurrent use.
type H1Transport struct {
	// Dial opens connections; nil means a net.Dialer with DialTimeout.
	// A chaos layer may wrap the net.Conn it returns.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// DialTimeout bounds dialing and the TLS handshake; 0 means 5 s.
	DialTimeout time.Duration
	// TLSConfig for https (nil: defaults; ServerName is set per host).
	TLSConfig *tls.Config
	// IdleTimeout closes connections idle for longer; 0 means 60 s.
	IdleTimeout time.Duration
	// UserAgent is sent when the request has none; "" means "mcpbench".
	UserAgent string

	mu   sync.Mutex
	idle map[string][]*h1conn
}

var _ http.RoundTripper = (*H1Transport)(nil)

type h1conn struct {
	t      *H1Transport
	key    string
	c      net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	idleAt time.Time
	reused bool
}

// errH1 describes a malformed response.
var errH1 = errors.New("malformed HTTP/1.1 response")

// aLongTimeAgo is a deadline in the past, set to abort blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// RoundTrip implements http.RoundTripper. The request body is closed, as
// the interface requires. Cancelling the request's context aborts the
// exchange, the body read included.
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
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pc, err := t.getConn(ctx, u.Scheme, u.Host)
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
		// A kept-alive connection the server closed meanwhile fails before
		// any response byte: try once more on a fresh connection.
		if pc.reused && !got && attempt == 0 {
			continue
		}
		return nil, err
	}
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

func (t *H1Transport) getConn(ctx context.Context, scheme, host string) (*h1conn, error) {
	key := scheme + "://" + host
	t.mu.Lock()
	for {
		conns := t.idle[key]
		if len(conns) == 0 {
			break
		}
		pc := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		t.idle[key] = conns[:len(conns)-1]
		if time.Since(pc.idleAt) > durOr(t.IdleTimeout, 60*time.Second) {
			pc.c.Close()
			continue
		}
		t.mu.Unlock()
		pc.reused = true
		return pc, nil
	}
	t.mu.Unlock()
	addr := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
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
	if scheme == "https" {
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
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(dctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	return &h1conn{t: t, key: key, c: c, br: bufio.NewReaderSize(c, 8192), bw: bufio.NewWriterSize(c, 4096)}, nil
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
// whether any response byte arrived (a failure before that on a reused
// connection may be retried).
func (pc *h1conn) exchange(req *http.Request, body []byte) (*http.Response, bool, error) {
	if err := pc.writeRequest(req, body); err != nil {
		return nil, false, err
	}
	return pc.readResponse(req)
}

func (pc *h1conn) writeRequest(req *http.Request, body []byte) error {
	w := pc.bw
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

// readLine returns one header line without CRLF; the slice aliases the
// reader's buffer. Lines over the buffer size are an error.
func (pc *h1conn) readLine() ([]byte, error) {
	line, err := pc.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: header line too long", errH1)
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func (pc *h1conn) readResponse(req *http.Request) (*http.Response, bool, error) {
	got := false
	for {
		line, err := pc.readLine()
		if err != nil {
			if got || len(line) > 0 {
				return nil, true, err
			}
			return nil, false, err
		}
		got = true
		// HTTP/1.x SP 3DIGIT SP reason
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return nil, true, fmt.Errorf("%w: status line %q", errH1, truncate(line))
		}
		code, err := strconv.Atoi(string(line[9:12]))
		if err != nil || code < 100 {
			return nil, true, fmt.Errorf("%w: status %q", errH1, truncate(line))
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
		if err := pc.readHeader(resp.Header); err != nil {
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
				return nil, true, fmt.Errorf("%w: transfer encoding %q", errH1, te)
			}
			b.mode = modeChunked
			resp.TransferEncoding = []string{"chunked"}
			resp.ContentLength = -1
		case cl != "":
			n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
			if err != nil || n < 0 {
				return nil, true, fmt.Errorf("%w: content length %q", errH1, cl)
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

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// maxHeaderBytes bounds a response head.
const maxHeaderBytes = 1 << 20

func (pc *h1conn) readHeader(h http.Header) error {
	total := 0
	for {
		line, err := pc.readLine()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
		if total += len(line); total > maxHeaderBytes {
			return fmt.Errorf("%w: header too large", errH1)
		}
		i := bytes.IndexByte(line, ':')
		if i <= 0 {
			return fmt.Errorf("%w: header line %q", errH1, truncate(line))
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
			} else if ne, ok := err.(net.Error); ok && ne.Timeout() && b.ctx != nil {
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
		if b.crlf {
			line, err := b.pc.readLine()
			if err != nil {
				return 0, eofIsUnexpected(err)
			}
			if len(line) != 0 {
				return 0, fmt.Errorf("%w: chunk not followed by CRLF", errH1)
			}
			b.crlf = false
		}
		line, err := b.pc.readLine()
		if err != nil {
			return 0, eofIsUnexpected(err)
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return 0, fmt.Errorf("%w: chunk size %q", errH1, truncate(line))
		}
		if size == 0 {
			for { // trailers, up to the blank line
				line, err := b.pc.readLine()
				if err != nil {
					return 0, eofIsUnexpected(err)
				}
				if len(line) == 0 {
					return 0, io.EOF
				}
			}
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
	reuse := b.keep
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
