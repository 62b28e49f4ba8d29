package driver

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// The request timer's errors and the stream idle watch. Timeout errors say
// which of the driver's timeouts fired, its limit and the setting that
// sets it (internal/setting: Config.RequestTimeout, said as the front end
// names it — mcpbench's CLI: the flag), once:
// not "timeout: request timeout: context deadline exceeded". The request
// timer itself runs with the operation (do.go: opContext, arm, endOp).

// requestTimeout is ErrRequestTimeout after d.
func requestTimeout(d time.Duration) error {
	return netutil.Timeout(ErrRequestTimeout, "request timeout: no answer within "+d.String()+" ("+setting.RequestTimeout.String()+")")
}

// streamIdle is ErrStreamIdle after d without a complete event.
func streamIdle(d time.Duration) error {
	return netutil.Timeout(ErrStreamIdle, "stream idle timeout: no complete event or keep-alive for "+d.String()+" ("+setting.StreamIdleTimeout.String()+")")
}

// ErrRequestTimeout: a request got no answer within RequestTimeout: its
// response headers (a GET stream, a resume, a POST answered with SSE) or
// its whole JSON answer did not arrive in time. It wraps
// context.DeadlineExceeded (errors.Is); the error of an operation names
// the limit (timeouts.go).
var ErrRequestTimeout error = setting.Errorf(netutil.Deadline("request timeout: no answer in time"), "request timeout: no answer in time", " (%s)", setting.RequestTimeout)

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

// watch arms the session's idle timer for a stream body: a body that
// completes no event (and no keep-alive) for d is closed (unblocking the
// read) and the read reports ErrStreamIdle. It returns a reader that
// counts bytes and re-arms the timer when its decoder (sr.dec, set by the
// caller) has read a whole event or keep-alive since the last read —
// unless fixed, when d bounds the whole read (the tail after a response).
// So a server that drips an event a byte at a time is cut after d, and a
// large event must arrive whole within d. One stream is watched at a time
// (the session's op goroutine).
func (s *Lane) watch(body io.ReadCloser, res *Result, d time.Duration, fixed bool) io.Reader {
	s.sr = streamReader{s: s, rc: body, n: &res.BytesIn, d: d}
	if fixed {
		s.sr.d = 0
	}
	s.idleFired.Store(false)
	if d > 0 {
		s.idleMu.Lock()
		s.idleBody = body
		if s.idle == nil {
			s.idle = time.AfterFunc(d, s.onIdle)
		} else {
			s.idle.Reset(d)
		}
		s.idleMu.Unlock()
	}
	return &s.sr
}

func (s *Lane) unwatch() {
	s.idleMu.Lock()
	if s.idle != nil {
		s.idle.Stop()
	}
	s.idleBody = nil
	s.idleMu.Unlock()
}

func (s *Lane) onIdle() {
	s.idleMu.Lock()
	b := s.idleBody
	s.idleBody = nil
	s.idleMu.Unlock()
	if b != nil {
		s.idleFired.Store(true)
		b.Close()
	}
}

// streamReader counts body bytes and re-arms the idle timer when its
// decoder completed an event or keep-alive since the last read: one
// comparison per read, nothing per byte.
type streamReader struct {
	s    *Lane
	rc   io.ReadCloser
	n    *int64
	d    time.Duration // idle timeout re-armed on progress (0: none)
	dec  *sse.Decoder  // whose progress re-arms the timer (nil: none does)
	seen uint64        // dec.Progress() when the timer was last armed
}

func (r *streamReader) Read(p []byte) (int, error) {
	if r.d > 0 && r.dec != nil && r.dec.Progress() != r.seen {
		r.seen = r.dec.Progress()
		r.s.idle.Reset(r.d)
	}
	if r.s.cx.acked.Load() { // a cancelled op's stream after the acknowledgement (cancel.go)
		r.s.noteDrained(r.rc, r.dec)
	}
	n, err := r.rc.Read(p)
	*r.n += int64(n)
	return n, err
}
