package httpclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// durOr returns d, def for 0, and 0 (disabled) for negative d.
func durOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// deadlineError is a timeout sentinel: its text is its own, and it is
// context.DeadlineExceeded for errors.Is and a net.Error timeout, as a
// context's deadline is.
type deadlineError struct{ msg string }

func (e *deadlineError) Error() string        { return e.msg }
func (e *deadlineError) Is(target error) bool { return target == context.DeadlineExceeded }
func (e *deadlineError) Timeout() bool        { return true }
func (e *deadlineError) Temporary() bool      { return true }

// timeoutError is one firing of a timeout: its text names the limit, and
// it unwraps to its sentinel (ErrConnectTimeout).
type timeoutError struct {
	sentinel error
	msg      string
}

func (e *timeoutError) Error() string   { return e.msg }
func (e *timeoutError) Unwrap() error   { return e.sentinel }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

// ErrConnectTimeout: no TCP connection (or TLS handshake, or proxy
// tunnel) within Options.ConnectTimeout. It is context.DeadlineExceeded
// for errors.Is.
var ErrConnectTimeout error = &deadlineError{"connect timeout (--connect-timeout)"}

// connectTimeout is ErrConnectTimeout after d: what did not finish in
// time ("no TCP connection to 127.0.0.1:8080").
func connectTimeout(what string, d time.Duration) error {
	return &timeoutError{ErrConnectTimeout, "connect timeout: " + what + " within " + d.String() + " (--connect-timeout)"}
}

// isEventStream reports whether a Content-Type is text/event-stream,
// without allocating.
func isEventStream(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

// drain reads (up to 64 KiB of) a body and closes it, so the connection can
// be reused; it returns the bytes read.
func drain(resp *http.Response) int64 {
	n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return n
}

// errTooLarge: a metadata document exceeded readLimited's limit.
var errTooLarge = errors.New("response larger than max_message_bytes")

// readLimited reads r to its end, up to limit bytes (errTooLarge
// beyond).
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = errTooLarge
	}
	return b, err
}

// firstLine returns the first non-blank line of a body, trimmed, printable
// and cut to 200 bytes ("" for an empty or binary body).
func firstLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	if len(b) > 200 {
		b = b[:200]
	}
	var sb strings.Builder
	for _, r := range string(b) {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return "" // binary: nothing useful to show
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
