package driver

import (
	"context"
	"sync/atomic"
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

// ErrRequestTimeout: a request got no answer within RequestTimeout: its
// response headers (a GET stream, a resume, a POST answered with SSE) or
// its whole JSON answer did not arrive in time. It wraps
// context.DeadlineExceeded (errors.Is); the error of an operation names
// the limit (timeouts.go).
var ErrRequestTimeout error = &deadlineError{"request timeout: no answer in time (--timeout)"}

// opContext starts one operation: a cancellable context and the session's
// request timer (reused, no timer per op), armed for the first request.
// endOp must be called when the operation is done.
//
// The timeout rule (2025-11-25 transports; documented on
// Config.RequestTimeout): the timer runs while a request waits for its
// answer — until the response headers of an SSE answer (POST stream, GET
// stream, resume), or until the end of a JSON answer. An open stream is
// bounded by StreamIdleTimeout and the run's end only, so a stream that
// legitimately runs longer than RequestTimeout while events keep arriving
// is not cut.
func (s *Session) opContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	octx, cancel := context.WithCancelCause(ctx)
	s.opMu.Lock()
	s.opCancel = cancel
	s.opMu.Unlock()
	s.arm()
	return octx, cancel
}

// arm (re)starts the request timer of the current operation.
func (s *Session) arm() {
	d := s.cfg.requestTimeout()
	if d <= 0 {
		return
	}
	s.opMu.Lock()
	if s.opTimer == nil {
		s.opTimer = time.AfterFunc(d, s.onOpTimeout)
	} else {
		s.opTimer.Reset(d)
	}
	s.opMu.Unlock()
}

// disarm stops the request timer: the answer has begun (SSE headers) or
// ended (JSON).
func (s *Session) disarm() {
	s.opMu.Lock()
	if s.opTimer != nil {
		s.opTimer.Stop()
	}
	s.opMu.Unlock()
}

func (s *Session) endOp(cancel context.CancelCauseFunc) {
	s.opMu.Lock()
	if s.opTimer != nil {
		s.opTimer.Stop()
	}
	s.opCancel = nil
	s.opMu.Unlock()
	cancel(nil)
}

func (s *Session) onOpTimeout() {
	s.opMu.Lock()
	c := s.opCancel
	s.opMu.Unlock()
	if c != nil {
		c(requestTimeout(s.cfg.requestTimeout()))
	}
}

// headerTimeout bounds the wait for a request's response headers outside
// an operation (the GET stream's opens and reopens) without bounding the
// body: the returned context lives until cancel is called; only a timeout
// that fires before stop cancels it (with ErrRequestTimeout). stop reports
// whether the headers were in time.
func headerTimeout(ctx context.Context, d time.Duration) (hctx context.Context, stop func() bool, cancel context.CancelCauseFunc) {
	hctx, cancel = context.WithCancelCause(ctx)
	if d <= 0 {
		return hctx, func() bool { return true }, cancel
	}
	var state atomic.Int32 // 0 waiting, 1 headers arrived, 2 timed out
	t := time.AfterFunc(d, func() {
		if state.CompareAndSwap(0, 2) {
			cancel(requestTimeout(d))
		}
	})
	return hctx, func() bool {
		t.Stop()
		return state.CompareAndSwap(0, 1)
	}, cancel
}
