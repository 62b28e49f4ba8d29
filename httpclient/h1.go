package httpclient

import (
	"bufio"
	"cmp"
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
	"syscall"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
)

// h1Transport is an HTTP/1.1 client transport made for load generation
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
type h1Transport struct {
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
	// SourceAddrs are local addresses connections are made from, round
	// robin (ParseSourceAddrs); nil lets the kernel choose. Used by the
	// default dialer only.
	SourceAddrs []net.IP

	srcOnce sync.Once
	src     *sourcePicker

	mu      sync.Mutex
	idle    map[string][]*h1conn
	retries atomic.Int64
	lastKey atomic.Pointer[poolKey] // poolKey's last key
	d       *dialer                 // New's: proxies, TLS settings, counts (nil: Dial and TLSConfig)
}

var _ http.RoundTripper = (*h1Transport)(nil)

// ErrConnClosedAfterWrite: the connection closed (EOF or reset) after the
// request, or part of it, was written and before the response head was
// complete. The request is not re-sent: the server may have executed it.
var ErrConnClosedAfterWrite = errors.New("connection closed after the request was sent (not re-sent: the server may have executed it)")

// ErrHTTP2Only: the server speaks only HTTP/2. Either its TLS handshake
// refuses ALPN "http/1.1" (or negotiates no protocol and drops the first
// request) while it accepts "h2", or it answers an HTTP/1.1 request with
// HTTP/2 frames (RFC 9113 §3.4, §4.1).
var ErrHTTP2Only error = &setting.Error{Format: "server offers only HTTP/2 (ALPN h2); this transport speaks HTTP/1.1 (%s auto or 2 speaks HTTP/2)", Names: []setting.Name{setting.HTTPVersion}}

// Retries returns the number of requests re-sent because the connection
// failed before any byte of them was written (the server cannot have seen
// them). A request of which a byte was written is never re-sent. Safe for
// concurrent use.
func (t *h1Transport) Retries() int64 { return t.retries.Load() }

type h1conn struct {
	t      *h1Transport
	key    string // scheme://host, the pool key
	addr   string // host:port dialed
	c      net.Conn
	rw     io.ReadWriter // c's reads and writes: c, or raw I/O on plain TCP (rawio_linux.go)
	br     *bufio.Reader // pooled; nil while the connection is idle
	cw     connWriter    // under the (pooled) write buffer: counts the bytes the connection accepted
	hop    *proxyHop     // a forward proxy taking absolute-form requests (nil: direct or tunnelled)
	long   []byte        // a line longer than br's buffer, gathered
	idleAt time.Time
	reused bool

	// Liveness check of an idle connection (see alive); rc is nil where
	// there is no socket to peek at.
	rc       syscall.RawConn
	peekFn   func(fd uintptr) bool
	peekBuf  [1]byte
	peekLive bool
	// waitFn is IdleWaiter's look at a GET stream's socket (peekWait),
	// set when the stream's connection is a plain TCP socket read through
	// br alone; nil: the stream cannot wait idle.
	waitFn func(fd uintptr) bool
	rest   *restReader // a GET stream's bytes buffered with its head, read first (nil: none)
	// watchID is the epoll watch of an idle GET stream (WatchReadable),
	// 0 when none is armed.
	watchID atomic.Uint64
	aborted atomic.Bool // abortIO was called (the connection is not reused after)

	abortFn func()    // aborts blocked I/O (RoundTrip's context.AfterFunc); made once
	hdrs    *hdrCache // the previous response's header values (nil: none yet, or a GET stream's connection)
}

// abortIO aborts the connection's blocked reads and writes.
func (pc *h1conn) abortIO() {
	pc.aborted.Store(true)
	pc.c.SetDeadline(aLongTimeAgo)
	pc.unwatch() // an idle stream has no blocked read: wake its reader
}

// connWriter writes to the connection and counts what it accepted, so that
// a failed request is known to be unsent (n == 0) or possibly seen.
type connWriter struct {
	c   io.Writer
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
func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
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
		if pc.abortFn == nil {
			pc.abortFn = pc.abortIO
		}
		stop := context.AfterFunc(ctx, pc.abortFn)
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
func (t *h1Transport) explain(ctx context.Context, pc *h1conn, got bool, err error) error {
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
	if br, ok := req.Body.(BytesBody); ok {
		return br.Bytes(), nil
	}
	return io.ReadAll(req.Body)
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
	w := getWriter(&pc.cw)
	defer putWriter(w)
	pc.cw.n, pc.cw.err = 0, nil
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	w.WriteString(method)
	w.WriteByte(' ')
	if pc.hop != nil { // a forward proxy: absolute form (RFC 9112 §3.2.2)
		w.WriteString(req.URL.Scheme)
		w.WriteString("://")
		w.WriteString(req.URL.Host)
	}
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
		w.WriteString(cmp.Or(pc.t.UserAgent, "mcpbench"))
		w.WriteString("\r\n")
	}
	if req.Close {
		w.WriteString("Connection: close\r\n")
	}
	if pc.hop != nil && pc.hop.auth != "" {
		w.WriteString("Proxy-Authorization: ")
		w.WriteString(pc.hop.auth)
		w.WriteString("\r\n")
	}
	if body != nil || method == http.MethodPost || method == http.MethodPut {
		w.WriteString("Content-Length: ")
		w.Write(strconv.AppendInt(w.AvailableBuffer(), int64(len(body)), 10))
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
	return w.Flush()
}
