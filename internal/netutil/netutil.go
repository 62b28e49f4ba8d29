// Package netutil holds the small pieces the HTTP client (httpclient), the
// MCP session (driver) and the probe all need and none owns: timeout
// errors that name their limit, the duration-or-default rule of the
// timeout settings, a sleep that ends with its context, draining a body
// for connection reuse, and the first line of a body for an error
// message. It imports nothing of the module; every function is safe for
// concurrent use.
package netutil

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// deadline is a timeout sentinel: its text is its own, and it is
// context.DeadlineExceeded for errors.Is and a net.Error timeout, as a
// context's deadline is.
type deadline struct{ msg string }

func (e *deadline) Error() string        { return e.msg }
func (e *deadline) Is(target error) bool { return target == context.DeadlineExceeded }
func (e *deadline) Timeout() bool        { return true }
func (e *deadline) Temporary() bool      { return true }

// Deadline returns a timeout sentinel with text msg (e.g. "request timeout:
// no answer in time"): errors.Is(err, context.DeadlineExceeded)
// holds for it, and it is a net.Error whose Timeout is true.
func Deadline(msg string) error { return &deadline{msg} }

// timeout is one firing of a timeout: its text names the limit, and it
// unwraps to its sentinel.
type timeout struct {
	sentinel error
	msg      string
}

func (e *timeout) Error() string   { return e.msg }
func (e *timeout) Unwrap() error   { return e.sentinel }
func (e *timeout) Timeout() bool   { return true }
func (e *timeout) Temporary() bool { return true }

// Timeout returns one firing of the timeout sentinel (made by Deadline):
// its text is msg (which names the limit and the setting), it unwraps to
// sentinel, and it is a net.Error whose Timeout is true.
func Timeout(sentinel error, msg string) error { return &timeout{sentinel, msg} }

// DurOr returns d, def for 0, and 0 (disabled) for negative d: the rule of
// every timeout setting.
func DurOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// SleepCtx waits d, or until ctx ends (ctx.Err() then; at once when d ≤ 0).
func SleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain reads (up to 64 KiB of) a body and closes it, so the connection can
// be reused; it returns the bytes read.
func Drain(resp *http.Response) int64 {
	n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return n
}

// FirstLine returns the first non-blank line of a body, trimmed, printable
// and cut to 200 bytes ("" for an empty or binary body).
func FirstLine(b []byte) string {
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
