package httpclient

import (
	"net"
	"syscall"
)

// Drainer is a response body that can tell whether everything that has
// reached the client so far was read: nothing is left in its read buffers
// and nothing is queued on its socket, so the next byte the reader gets
// arrives after the call. A cancelled request's reader asks it to tell
// the messages that were in flight when the server acknowledged the
// cancel from those the server wrote after (driver/cancel.go). ok is false
// when it cannot tell (TLS, HTTP/2, a wrapped connection: the plaintext
// buffered above the socket is unknown). Not safe for concurrent use with
// Read (the reader's goroutine asks, between reads).
type Drainer interface {
	Drained() (drained, ok bool)
}

var _ Drainer = (*h1body)(nil)

// Drained implements Drainer for a body on a plain TCP connection: no
// byte buffered (the connection's reader, a stream's bytes kept with its
// head) and a peek at the socket (recvfrom(2) with MSG_PEEK, which does
// not block: the socket is non-blocking) finds nothing.
func (b *h1body) Drained() (drained, ok bool) {
	pc := b.pc
	if _, plain := pc.c.(*net.TCPConn); !plain || pc.rc == nil || b.err != nil || b.state.Load() != 0 {
		return false, false
	}
	// A chunk's trailing CRLF is framing, not a message: buffered or on
	// the socket, it is all there is when nothing else is.
	crlf := 0
	if b.mode == modeChunked && b.left == 0 && b.crlf {
		crlf = 2
	}
	if pc.rest != nil && len(pc.rest.rest) > 0 || b.mode == modeChunked && b.left > 0 {
		// Bytes kept with the head, or the rest of a chunk (one write of
		// the server's) still to come.
		return false, true
	}
	buffered := 0
	if pc.br != nil {
		buffered = pc.br.Buffered()
	}
	if buffered > crlf || buffered > 0 && !pc.bufferedCRLF(buffered) {
		return false, true
	}
	var peek [3]byte
	want := crlf - buffered // CRLF bytes still on the socket
	queued, err := 0, error(nil)
	if cerr := pc.rc.Control(func(fd uintptr) { queued, err = peekFD(fd, peek[:]) }); cerr != nil {
		return false, false
	}
	switch {
	case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
		return true, true
	case err != nil || queued == 0: // failed, or the end of the stream: the next Read says so at once
		return false, true
	}
	return want > 0 && queued == want && string(peek[:queued]) == "\r\n"[2-want:], true
}

// bufferedCRLF reports whether the n bytes buffered are the end of a
// chunk's CRLF.
func (pc *h1conn) bufferedCRLF(n int) bool {
	p, _ := pc.br.Peek(n)
	return string(p) == "\r\n"[2-n:]
}
