package httpclient

import (
	"errors"
	"testing"
)

// net/http's "client conn could not be established" (a new HTTP/2
// connection the server closed, with a GOAWAY or not, before its first
// request went out) is said in our words, once, naming the host; the
// cause stays reachable.
func TestExplainConnNotEstablished(t *testing.T) {
	cause := errors.New("http2: client conn could not be established")
	err := explainGoAway("127.0.0.1:9", cause)
	want := "127.0.0.1:9 closed the new HTTP/2 connection before the first request went out on it (a GOAWAY or a close right after the handshake: a server at its connection limit, or shutting down): the request was not sent"
	if err.Error() != want || !errors.Is(err, cause) || errors.Is(err, ErrGoAway) {
		t.Fatalf("%q (is cause %v, is ErrGoAway %v)\nwant %q", err, errors.Is(err, cause), errors.Is(err, ErrGoAway), want)
	}
	cause = errors.New("http2: client conn not usable")
	err = explainGoAway("127.0.0.1:9", cause)
	want = "127.0.0.1:9 stopped taking requests on the HTTP/2 connection (a GOAWAY or a close) before this one went out on it: the request was not sent"
	if err.Error() != want || !errors.Is(err, cause) {
		t.Fatalf("%q\nwant %q", err, want)
	}
	// Go 1.26's ClientConn reservation, seen under -race against a server
	// whose GOAWAY came right after the handshake.
	cause = errors.New("connection is unavailable")
	err = explainGoAway("127.0.0.1:9", cause)
	want = "127.0.0.1:9 took no new request on the HTTP/2 connection (after a GOAWAY or a close, or at its stream limit) when this one was to go out on it: the request was not sent"
	if err.Error() != want || !errors.Is(err, cause) {
		t.Fatalf("%q\nwant %q", err, want)
	}
	// The same refusal on a new connection's first stream: the server
	// closed it right after the handshake.
	err = explainNewConn("127.0.0.1:9", cause)
	want = "127.0.0.1:9 closed the new HTTP/2 connection before the first request went out on it (a GOAWAY or a close right after the handshake: a server at its connection limit, or shutting down): the request was not sent"
	if err.Error() != want || !errors.Is(err, cause) {
		t.Fatalf("%q\nwant %q", err, want)
	}
	if other := errors.New("dial tcp: connection refused"); explainGoAway("h", other) != other || explainNewConn("h", other) != other {
		t.Fatal("another error was rewritten")
	}
}
