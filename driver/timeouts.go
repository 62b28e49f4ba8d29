package driver

import (
	"context"
	"time"
)

// Timeout errors say which of the driver's timeouts fired, its limit and
// the setting that sets it (the flag; the profile's timeouts.* field
// reads the same), once: not "timeout: request timeout: context deadline
// exceeded".

// deadlineError is a timeout sentinel: its text is its own, and it is
// context.DeadlineExceeded for errors.Is and a net.Error timeout, as a
// context's deadline is.
type deadlineError struct{ msg string }

func (e *deadlineError) Error() string        { return e.msg }
func (e *deadlineError) Is(target error) bool { return target == context.DeadlineExceeded }
func (e *deadlineError) Timeout() bool        { return true }
func (e *deadlineError) Temporary() bool      { return true }

// timeoutError is one firing of a timeout: its text names the limit, and
// it unwraps to its sentinel (ErrRequestTimeout, ErrStreamIdle; the
// connect timeout is httpclient.ErrConnectTimeout).
type timeoutError struct {
	sentinel error
	msg      string
}

func (e *timeoutError) Error() string   { return e.msg }
func (e *timeoutError) Unwrap() error   { return e.sentinel }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

// requestTimeout is ErrRequestTimeout after d.
func requestTimeout(d time.Duration) error {
	return &timeoutError{ErrRequestTimeout, "request timeout: no answer within " + d.String() + " (--timeout)"}
}

// streamIdle is ErrStreamIdle after d without a complete event.
func streamIdle(d time.Duration) error {
	return &timeoutError{ErrStreamIdle, "stream idle timeout: no complete event or keep-alive for " + d.String() + " (--stream-idle-timeout)"}
}
