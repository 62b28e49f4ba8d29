package httpclient

import "net/http"

// Optional interfaces of the transports and bodies of this package, named
// so that the layers above (the MCP session, the chaos layer) find them by
// type, not by a method's shape. A wrapper of a RoundTripper or a body
// (chaos) implements the same ones, passing them through.

// PerSession is a RoundTripper that gives each session connections of its
// own where its HTTP version multiplexes (HTTP/2: a session's POST
// streams, GET stream and answers share one connection, as one client's
// would). ForSession returns that session's RoundTripper, or the
// RoundTripper itself when the connections are shared (HTTP/1.1); a
// session that got one of its own calls its CloseIdleConnections (when it
// has one) when it closes, which closes its connections. Safe for
// concurrent use.
type PerSession interface {
	ForSession() http.RoundTripper
}

// Multiplexed is a response body on a connection other streams share
// (HTTP/2): when Multiplexed returns true, closing the body before its end
// resets that one stream (RST_STREAM), not the connection.
type Multiplexed interface {
	Multiplexed() bool
}

// ConnCutter is a response body that can close the connection under it:
// CutConnection closes the TCP connection (with a reset, SO_LINGER 0, when
// rst), breaking every stream on it; Read then fails. Safe to call from
// another goroutine than the reader's.
type ConnCutter interface {
	CutConnection(rst bool) error
}

// ConnResetter is a response body that owns its connection (HTTP/1.1):
// Reset drops the connection with a TCP reset (SO_LINGER 0) instead of an
// orderly close, and a blocked Read returns an error. Safe to call from
// another goroutine than the reader's.
type ConnResetter interface {
	Reset() error
}

// StormCutReporter is a response body a fault injector wraps (package
// chaos): StormCut reports whether a storm wave cut the stream, so that
// the reader can tell the reconnects a storm caused from a server's normal
// stream ends. Safe for concurrent use.
type StormCutReporter interface {
	StormCut() bool
}

// BytesBody is a request body that holds all its bytes: the HTTP/1.1
// transport writes Bytes (which it must not modify) instead of reading
// the body, and closes it as usual.
type BytesBody interface {
	Bytes() []byte
}

// IdleWaiter is a response body that can wait for its next bytes without
// a read buffer in use, and without a goroutine: an idle GET stream waits
// this way, its connection's read buffer back in a pool meanwhile.
// WatchReadable arranges for ready to be called once, on another
// goroutine (it must return quickly: start one), when a Read would not
// block (bytes are buffered or the socket is readable, at its end, or
// failed), or when the body is closed or its connection aborted (the next
// Read then reports why); it returns false, and never calls ready, when it
// cannot (no epoll: not Linux) or a Read would not block now.
// WaitReadable is the same wait in the calling goroutine: it returns at
// once when a Read would not block. Neither is safe for concurrent use
// with Read; Close may be called from another goroutine to end a wait.
type IdleWaiter interface {
	// CanWaitIdle reports whether the body can wait this way (false:
	// TLS, a wrapped connection, HTTP/2; WaitReadable then returns at
	// once, WatchReadable false).
	CanWaitIdle() bool
	WaitReadable()
	WatchReadable(ready func()) bool
}
