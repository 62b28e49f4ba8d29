package httpclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync/atomic"
)

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
	if b.pc.br == nil { // back from an idle wait (goIdle)
		b.pc.br = getStreamReader(b.pc.rw)
	}
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
		b.pc.unwatch()
		b.pc.c.Close()
	}
}

var _ ConnResetter = (*h1body)(nil)

// Reset drops the connection with a TCP reset (SO_LINGER 0) instead of an
// orderly close: the chaos layer's RST cut. A blocked Read returns an error.
func (b *h1body) Reset() error {
	if b.state.CompareAndSwap(0, 2) {
		if b.stop != nil {
			b.stop()
		}
		b.pc.unwatch()
		c := b.pc.c
		if tc, ok := c.(*tls.Conn); ok {
			c = tc.NetConn()
		}
		if tc, ok := c.(*net.TCPConn); ok {
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
