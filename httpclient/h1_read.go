package httpclient

import (
	"bufio"
	"bytes"
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
)

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

// readResponse reads the response head, skipping 1xx informational heads,
// and frames the body. got reports whether any response byte arrived.
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
		resp, err := pc.readHead(req, &budget)
		if err != nil {
			return nil, true, err
		}
		if code := resp.StatusCode; code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
			continue // 1xx informational: the real response follows
		}
		if err := pc.frameBody(req, resp); err != nil {
			return nil, true, err
		}
		return resp, true, nil
	}
}

// readHead reads one response head (status line and header lines) within
// budget bytes, decreased by what it reads.
func (pc *h1conn) readHead(req *http.Request, budget *int) (*http.Response, error) {
	if err := pc.checkStart(); err != nil {
		return nil, err
	}
	line, n, err := pc.readLine(*budget)
	switch {
	case err == errLineTooLong:
		return nil, fmt.Errorf("%w: status line %s makes the response head larger than 1 MiB", errH1, excerpt(line))
	case err != nil:
		return nil, fmt.Errorf("h1: status line %s cut short: %w", excerpt(line), eofIsUnexpected(err))
	}
	*budget -= n
	code, err := statusCode(line)
	if err != nil {
		return nil, err
	}
	status := "200 OK"
	if string(line[9:]) != status {
		status = string(line[9:])
	}
	resp := &http.Response{
		StatusCode: code,
		Status:     status,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     make(http.Header, 8),
		Request:    req,
	}
	if line[7] == '0' {
		resp.Proto, resp.ProtoMinor = "HTTP/1.0", 0
	}
	err = pc.readHeader(resp.Header, budget)
	if cap(pc.long) > 64<<10 {
		pc.long = nil // do not keep a huge line's buffer
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// statusCode returns the status code of a status line:
// HTTP/1.x SP 3DIGIT [SP reason].
func statusCode(line []byte) (int, error) {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte(http1Prefix)) || line[8] != ' ' {
		return 0, fmt.Errorf("%w: status line %s", errH1, excerpt(line))
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
		return 0, fmt.Errorf("%w: status line %s: no status code", errH1, excerpt(line))
	}
	return code, nil
}

// frameBody sets resp.Body to an h1body framed as the head says (RFC 9112
// §6.3): none (HEAD, 204, 304, Content-Length 0), chunked, Content-Length,
// or until the connection closes; keep-alive unless either side said
// close or the server speaks HTTP/1.0.
func (pc *h1conn) frameBody(req *http.Request, resp *http.Response) error {
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
	switch code := resp.StatusCode; {
	case req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified:
		b.mode = modeNone
	case te != "":
		if !strings.EqualFold(strings.TrimSpace(te), "chunked") {
			return fmt.Errorf("%w: transfer encoding %s", errH1, excerpt([]byte(te)))
		}
		b.mode = modeChunked
		resp.TransferEncoding = []string{"chunked"}
		resp.ContentLength = -1
	case cl != "":
		n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: content length %s", errH1, excerpt([]byte(cl)))
		}
		b.mode, b.left, resp.ContentLength = modeLength, n, n
		if n == 0 {
			b.mode = modeNone
		}
	default:
		b.mode, b.keep, resp.ContentLength = modeClose, false, -1
	}
	if req.Method == http.MethodGet && b.mode != modeNone && isEventStream(resp.Header.Get("Content-Type")) {
		pc.shrinkReader(b)
	}
	resp.Body = b
	return nil
}

// streamBufSize is the read buffer of a connection that carries a GET
// stream: such a stream lives as long as its session and mostly waits, and
// the SSE decoder above it has its own buffer (reads larger than this one
// bypass it).
const streamBufSize = 512

// shrinkReader gives the connection of a GET stream a small read buffer
// in place of the pooled one; the bytes already buffered are read first
// (the connection is then not reused after the stream: those bytes sit in
// front of the socket).
func (pc *h1conn) shrinkReader(b *h1body) {
	if pc.br.Size() <= streamBufSize {
		return
	}
	// The stream mostly waits, and what an idle session holds matters
	// more than its rare reads: no header cache, the connection's own
	// Read and Write (raw I/O saves wakeups at high request rates).
	pc.hdrs = nil
	pc.rw, pc.cw.c = pc.c, pc.c
	var src io.Reader = pc.rw
	if n := pc.br.Buffered(); n > 0 {
		rest, _ := pc.br.Peek(n)
		pc.rest = &restReader{rest: bytes.Clone(rest), r: pc.rw}
		src = pc.rest
		b.keep = false
	}
	putReader(pc.br)
	pc.br = getStreamReader(src)
	if _, plain := pc.c.(*net.TCPConn); plain && pc.rc != nil && pc.waitFn == nil {
		pc.waitFn = pc.peekWait
	}
}

// restReader reads the bytes a GET stream's connection had buffered
// beyond the response head (often the first event), then the connection.
type restReader struct {
	rest []byte
	r    io.Reader
}

func (r *restReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return r.r.Read(p)
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// streamReaderPool holds the read buffers of GET streams that wait idle
// (h1body.WaitReadable): an idle stream holds none.
var streamReaderPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamBufSize) }}

func getStreamReader(r io.Reader) *bufio.Reader {
	br := streamReaderPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// CanWaitIdle implements IdleWaiter: a GET stream's body on a plain TCP
// connection.
func (b *h1body) CanWaitIdle() bool { return b.pc.waitFn != nil }

// goIdle prepares an idle wait: with nothing buffered (a chunk's CRLF
// taken first), the connection's read buffer goes back to the pool and it
// returns true; the next read takes one again (read). False: the body
// cannot wait idle, or a Read would not block.
func (b *h1body) goIdle() bool {
	pc := b.pc
	if b.mode == modeChunked && b.left == 0 && b.crlf && pc.br != nil && pc.br.Buffered() >= 2 {
		// The last chunk's CRLF is buffered, the next chunk is not: take
		// it now, so that what is left to wait for is on the socket.
		if p, _ := pc.br.Peek(2); string(p) == "\r\n" {
			pc.br.Discard(2)
			b.crlf = false
		}
	}
	if pc.waitFn == nil || pc.br == nil || pc.br.Buffered() > 0 || pc.rest != nil && len(pc.rest.rest) > 0 ||
		b.err != nil || b.state.Load() != 0 || b.mode == modeNone || b.mode == modeLength && b.left == 0 {
		return false
	}
	br := pc.br
	pc.br, pc.rest = nil, nil
	br.Reset(nil)
	streamReaderPool.Put(br)
	return true
}

// WaitReadable implements IdleWaiter for a GET stream's body on a plain
// TCP connection: with nothing buffered, the connection's read buffer goes
// back to the pool and the socket is watched by the netpoller
// (RawConn.Read with peekWait) until it has bytes, its end or an error.
func (b *h1body) WaitReadable() {
	if !b.goIdle() {
		return
	}
	pc := b.pc
	if hook := testHookIdleWait.Load(); hook != nil {
		(*hook)(pc)
	}
	pc.rc.Read(pc.waitFn) //nolint:errcheck // closed or aborted: the next Read says so
}

// WatchReadable implements IdleWaiter: as WaitReadable, but the socket is
// watched by the process's epoll watcher (idlewatch_linux.go), and ready
// is called once (on the watcher's goroutine: it must return quickly)
// when a Read would not block, or when the body is closed or its
// connection aborted. It returns false, and will not call ready, when the
// body cannot be watched (no epoll) or a Read would not block now.
func (b *h1body) WatchReadable(ready func()) bool {
	w := theWatcher()
	if w == nil || !b.goIdle() {
		return false
	}
	pc := b.pc
	if hook := testHookIdleWait.Load(); hook != nil {
		(*hook)(pc)
	}
	var id uint64
	// The watch id is stored before the socket is armed: an abort that
	// comes after finds it (unwatch); one that came before, while this
	// goroutine was still reading, is seen here.
	err := pc.rc.Control(func(fd uintptr) {
		id = w.arm(fd, ready, &pc.watchID)
	})
	if err != nil || id == 0 {
		return false
	}
	if pc.aborted.Load() || b.state.Load() != 0 {
		pc.unwatch()
	}
	return true
}

// unwatch ends a watch armed by WatchReadable, if it has not fired: the
// socket leaves the epoll set and ready is called, so the reader finds
// the body closed or aborted. Safe for concurrent use.
func (pc *h1conn) unwatch() {
	id := pc.watchID.Swap(0)
	if id == 0 {
		return
	}
	w := theWatcher()
	ready := w.take(id)
	if ready == nil {
		return // fired: the reader is on its way
	}
	pc.rc.Control(w.forget) //nolint:errcheck // closed: the kernel dropped it from the set
	ready()
}

// testHookIdleWait, when set (tests), is called by WaitReadable before it
// waits.
var testHookIdleWait atomic.Pointer[func(*h1conn)]

// peekWait is WaitReadable's look at the socket: recvfrom(2) with
// MSG_PEEK of one byte. Nothing to read (EAGAIN) waits for readiness; a
// byte, the end of the stream or an error ends the wait.
func (pc *h1conn) peekWait(fd uintptr) bool {
	_, err := peekFD(fd, pc.peekBuf[:])
	return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
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
// bytes (decreased by what it reads). The values of one response share
// one backing array, and a value equal to the one the connection's
// previous response had for that key reuses its string (see hdrCache), so
// a response head costs the map and one array.
func (pc *h1conn) readHeader(h http.Header, budget *int) error {
	var vals []string
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
		if pc.hdrs == nil {
			pc.hdrs = new(hdrCache)
		}
		v := pc.hdrs.value(key, bytes.TrimSpace(line[i+1:]))
		if old, ok := h[key]; ok {
			h[key] = append(old, v) // a repeated field: its own array
			continue
		}
		if len(vals) == cap(vals) {
			vals = make([]string, 0, 8)
		}
		vals = append(vals, v)
		h[key] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
}

// hdrCache holds the header values of a connection's previous response,
// by key: a server sends the same Content-Type, Cache-Control, session id
// and (within a second) Date on every answer, and the strings are reused
// rather than allocated again. Used by the goroutine that reads the
// connection's responses only.
type hdrCache struct {
	ents [6]struct{ k, v string }
	next int
}

// value returns v as a string, the cached one when key had that value.
func (c *hdrCache) value(key string, v []byte) string {
	for i := range c.ents {
		if e := &c.ents[i]; e.k == key {
			if e.v != string(v) {
				e.v = string(v)
			}
			return e.v
		}
	}
	e := &c.ents[c.next]
	c.next = (c.next + 1) % len(c.ents)
	e.k, e.v = key, string(v)
	return e.v
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
		return "Mcp-Session-Id"
	case "Keep-Alive", "keep-alive":
		return "Keep-Alive"
	case "Vary", "vary":
		return "Vary"
	case "X-Accel-Buffering", "x-accel-buffering":
		return "X-Accel-Buffering"
	case "Link", "link":
		return "Link"
	}
	return http.CanonicalHeaderKey(string(k))
}

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
