package httpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
)

// ErrNoH2C: --http 2 against an http:// server that does not speak h2c
// (HTTP/2 with prior knowledge, RFC 9113 §3.3). net/http's HTTP/2 client
// reports this as a frame too large, a broken pipe or a reset, depending
// on timing; the transport tells it by the server's first bytes: an HTTP/1.x
// status line, or (before any h2c connection of the run has worked) the
// connection closed before any byte. The error wrapping it says which.
var ErrNoH2C error = &setting.Error{Format: "server does not speak h2c (HTTP/2 with prior knowledge): use %s auto or 1.1 for http://, or https:// where it offers h2", Names: []setting.Name{setting.HTTPVersion}}

// h1Sniff is the plain TCP connection under an h2c client connection: it
// notes what the server's first read gave.
type h1Sniff struct {
	net.Conn
	worked *atomic.Bool // set once any h2c connection of the transport got HTTP/2 bytes
	once   sync.Once
	done   chan struct{} // closed once the first read returned
	first  sniffed
}

type sniffed uint8

const (
	sniffH2     sniffed = iota // bytes that are not HTTP/1.x
	sniffH1                    // an HTTP/1.x status line
	sniffClosed                // an error before any byte
)

func newH1Sniff(c net.Conn, worked *atomic.Bool) *h1Sniff {
	return &h1Sniff{Conn: c, worked: worked, done: make(chan struct{})}
}

func (s *h1Sniff) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	s.once.Do(func() {
		switch {
		case bytes.HasPrefix(p[:n], []byte("HTTP/1.")):
			s.first = sniffH1
		case n == 0 && err != nil:
			s.first = sniffClosed
		default:
			s.first = sniffH2
			s.worked.Store(true)
		}
		close(s.done)
	})
	return n, err
}

// h1SniffWait bounds the wait, after a failed h2c request, for the read
// loop's first read (the server has answered or closed by then: it
// returns at once).
const h1SniffWait = time.Second

// explain returns an error wrapping ErrNoH2C, naming host and what the
// server did, for an error of a request on an h2c connection whose server
// does not speak h2c; else err itself.
func (s *h1Sniff) explain(ctx context.Context, host string, err error) error {
	if s == nil || err == nil {
		return err
	}
	t := time.NewTimer(h1SniffWait)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		return err
	case <-ctx.Done():
		return err
	}
	switch {
	case s.first == sniffH1:
		return fmt.Errorf("%s answered the HTTP/2 preface in HTTP/1.1: %w", host, ErrNoH2C)
	case s.first == sniffClosed && !s.worked.Load():
		return fmt.Errorf("%s closed the connection at the HTTP/2 preface, before any frame (no h2c connection has worked yet): %w", host, ErrNoH2C)
	}
	return err
}

type sniffKey struct{}

// sniffSlot returns where the h2c dial of ctx puts its sniffer (nil:
// nobody asked).
func sniffSlot(ctx context.Context) **h1Sniff {
	p, _ := ctx.Value(sniffKey{}).(**h1Sniff)
	return p
}

// ErrGoAway: the server ended the HTTP/2 connection with GOAWAY (RFC 9113
// §6.8) while a request was on it. The error wrapping it says the error
// code and whether the server took the request: a stream above the
// GOAWAY's last stream id was not processed; one at or below it may have
// been.
var ErrGoAway = errors.New("HTTP/2 GOAWAY")

// goAwayError is net/http's GOAWAY error said once, in our words; it
// unwraps to ErrGoAway and to net/http's error.
type goAwayError struct {
	msg   string
	cause error
}

func (e *goAwayError) Error() string   { return e.msg }
func (e *goAwayError) Unwrap() []error { return []error{ErrGoAway, e.cause} }

// connClosedEarly is net/http's "client conn could not be established"
// or "client conn not usable" said in our words; it unwraps to net/http's error (not to ErrGoAway:
// net/http does not say whether a GOAWAY or a bare close ended it).
type connClosedEarly struct {
	msg   string
	cause error
}

func (e *connClosedEarly) Error() string { return e.msg }
func (e *connClosedEarly) Unwrap() error { return e.cause }

// explainGoAway rewrites net/http's three GOAWAY errors (its types are
// unexported: recognised by text) as a *goAwayError; other errors are
// returned as they are.
// explainNewConn is explainGoAway for a connection that refused its
// first stream (net/http's reservation: "connection is unavailable"): a
// new connection is at no stream limit, so the server closed it (a
// GOAWAY or a close) right after the handshake.
func explainNewConn(host string, err error) error {
	if err != nil && err.Error() == "connection is unavailable" {
		return &connClosedEarly{msg: host + " closed the new HTTP/2 connection before the first request went out on it (a GOAWAY or a close right after the handshake: a server at its connection limit, or shutting down): the request was not sent", cause: err}
	}
	return explainGoAway(host, err)
}

func explainGoAway(host string, err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	switch {
	case strings.Contains(s, "http2: client conn could not be established"):
		// net/http's text for a new connection the server closed (a GOAWAY
		// right after the handshake, or a close) before its first request
		// went out: nothing was sent, so nothing was processed.
		return &connClosedEarly{msg: host + " closed the new HTTP/2 connection before the first request went out on it (a GOAWAY or a close right after the handshake: a server at its connection limit, or shutting down): the request was not sent", cause: err}
	case s == "connection is unavailable" || strings.HasSuffix(s, ": connection is unavailable"):
		// net/http's ClientConn reservation (Go 1.26's transport over an
		// HTTP/2 connection) refused: the connection takes no new stream,
		// after the server's GOAWAY, a close, or at its stream limit.
		return &connClosedEarly{msg: host + " took no new request on the HTTP/2 connection (after a GOAWAY or a close, or at its stream limit) when this one was to go out on it: the request was not sent", cause: err}
	case strings.Contains(s, "http2: client conn not usable"):
		// The connection took no more requests (the server's GOAWAY, or a
		// close, came first) when this one was to go out on it.
		return &connClosedEarly{msg: host + " stopped taking requests on the HTTP/2 connection (a GOAWAY or a close) before this one went out on it: the request was not sent", cause: err}
	}
	i := strings.Index(s, "http2: ")
	if i < 0 || !strings.Contains(s, "GOAWAY") {
		return err
	}
	s = s[i:]
	var msg string
	switch {
	case strings.HasPrefix(s, "http2: Transport received GOAWAY from server ErrCode:"):
		code := strings.TrimPrefix(s, "http2: Transport received GOAWAY from server ErrCode:")
		msg = host + " refused the request with GOAWAY (" + code + ") before processing it"
	case strings.HasPrefix(s, "http2: Transport received Server's graceful shutdown GOAWAY"):
		msg = host + " is closing the connection (graceful GOAWAY): the request was not processed"
	case strings.HasPrefix(s, "http2: server sent GOAWAY and closed the connection; "):
		fields := strings.TrimPrefix(s, "http2: server sent GOAWAY and closed the connection; ")
		msg = host + " closed the connection with GOAWAY after taking the request, which it may have processed (" + fields + ")"
	default:
		return err
	}
	return &goAwayError{msg: msg, cause: err}
}
