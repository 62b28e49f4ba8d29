package driver

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Cancellation (2025-11-25 cancellation utility). An op with Op.Cancel
// cancels a share P of its calls that are still in flight After their
// request was sent: the lane's timer POSTs
//
//	{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":ID,"reason":…}}
//
// and the server "SHOULD stop processing the cancelled request … [and]
// not send a response for the cancelled request". The op keeps reading
// the request's stream for CancelGrace after the server acknowledged the
// notification (its 202), or until the stream ends, and judges what came.
// The server received the cancel at some time between its send (S) and
// its acknowledgement (A); a message it wrote just before that reaches the
// driver's reader later by its delivery delay (network and scheduling). So:
//
//   - a message of the request (its response, its progress, any other
//     message on its own stream) read later than A + (A − S) — the
//     acknowledgement plus the cancel's own round trip — is a violation:
//     VerdictAfterCancel in the op's ledger. A message the server wrote
//     before it had the cancel could only be judged so if its delivery took
//     longer than the cancel's whole round trip;
//   - one read between S and A + (A − S) is the race the spec allows
//     ("cancellation notifications may arrive after request processing has
//     completed, and potentially after a response has already been sent"):
//     counted in Result.CancelRaced, not a fault. A server that answers
//     every cancelled call at once (the go-sdk's error result) shows here.
//
// The times are when the driver read the messages; on loopback the round
// trip is well under a millisecond.
//
// A cancelled op is neither a success nor an error: Result.Cancelled is
// set, its class is ok, and reports keep it out of latency. It is never
// re-sent or resumed.
//
// Under 2026-07-28 (cancellation §Transport-Specific Cancellation:
// "Closing the SSE response stream is the cancellation signal … No
// notifications/cancelled message is required or expected") the driver
// cancels by closing the request's response stream; nothing can arrive on
// it after that, so no violation can be seen there.

// Cancel cancels a share of an op's calls: each call is drawn with
// probability P (0 < P ≤ 1, from the lane's seeded generator) and, if it
// is still in flight After its request was sent, cancelled.
type Cancel struct {
	After time.Duration
	P     float64
}

// CancelGrace is how long a cancelled op keeps reading its stream after
// the server acknowledged the cancel, judging what arrives, before it
// closes the stream.
const CancelGrace = 500 * time.Millisecond

// errClientCancel ends the reading of a cancelled request (the grace ran
// out, or the 2026-07-28 cancel closed its stream).
var errClientCancel = errors.New("request cancelled by the client")

// cancel states of a lane's op.
type cxState uint8

const (
	cxIdle     cxState = iota // no cancel armed
	cxArmed                   // drawn: the timer may fire
	cxAnswered                // the response came first: no cancel
	cxSending                 // notifications/cancelled sent, not yet acknowledged
	cxSent                    // acknowledged (2026-07-28: the stream closed)
)

// canceller is a lane's cancel of its op in flight. The op goroutine arms
// it and judges messages; the timer's goroutine sends the cancel.
type canceller struct {
	mu       sync.Mutex
	timer    *time.Timer
	state    cxState
	id       int64           // the request in flight
	ctx      context.Context // the op's context
	wait     time.Duration   // Op.Cancel.After
	deadline time.Time       // when the timer is due (a stale fire is ignored)
	sentAt   time.Time       // when notifications/cancelled was sent
	ackAt    time.Time       // when the server acknowledged it
	after    time.Time       // ackAt + (ackAt − sentAt): later messages are violations
	fired    chan struct{}   // closed when the firing goroutine returns
	over     chan struct{}   // closed by the op when its reading ended
}

// armCancel arms the cancel of the op's call c at its first attempt (when
// the call is drawn), or points an armed cancel at a later attempt's
// request (a re-send, the next page).
func (s *Session) armCancel(ctx context.Context, op *Op, c *call, first bool) {
	cx := &s.cx
	if first {
		if s.rng.Float64() >= op.Cancel.P {
			return
		}
		cx.mu.Lock()
		cx.state, cx.id, cx.ctx, cx.wait = cxArmed, c.id, ctx, op.Cancel.After
		cx.deadline = time.Now().Add(op.Cancel.After)
		if cx.timer == nil {
			cx.timer = time.AfterFunc(op.Cancel.After, s.fireCancel)
		} else {
			cx.timer.Reset(op.Cancel.After)
		}
		cx.mu.Unlock()
		c.cx = true
		return
	}
	cx.mu.Lock()
	if cx.state == cxArmed {
		cx.id = c.id
		c.cx = true
	}
	cx.mu.Unlock()
}

// fireCancel cancels the lane's request in flight when its timer is due.
func (s *Session) fireCancel() {
	cx := &s.cx
	cx.mu.Lock()
	if cx.state != cxArmed || time.Now().Before(cx.deadline) {
		cx.mu.Unlock()
		return
	}
	cx.state, cx.sentAt = cxSending, time.Now()
	cx.fired, cx.over = make(chan struct{}), make(chan struct{})
	id, ctx, fired, over, after := cx.id, cx.ctx, cx.fired, cx.over, cx.wait
	cx.mu.Unlock()
	defer close(fired)
	if s.modern {
		cx.mu.Lock()
		cx.state, cx.ackAt, cx.after = cxSent, cx.sentAt, cx.sentAt
		cx.mu.Unlock()
		s.cancelOp()
		return
	}
	if s.sendCancel(ctx, id, after) {
		now := time.Now()
		cx.mu.Lock()
		cx.state, cx.ackAt, cx.after = cxSent, now, now.Add(now.Sub(cx.sentAt))
		cx.mu.Unlock()
	}
	t := time.NewTimer(CancelGrace)
	defer t.Stop()
	select {
	case <-over:
	case <-t.C:
		s.cancelOp()
	}
}

// sendCancel POSTs notifications/cancelled for request id and reports
// whether the server acknowledged it (2xx). One that was not acknowledged
// leaves what follows in the race window (raced, never a violation).
func (s *Session) sendCancel(ctx context.Context, id int64, after time.Duration) bool {
	b := append([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`), strconv.FormatInt(id, 10)...)
	b = append(b, `,"reason":"mcpbench: still in flight after `...)
	b = append(b, after.String()...)
	b = append(b, `"}}`...)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.requestTimeout())
	defer cancel()
	resp, err := s.sendBody(ctx, b, s.hdr.Load().post)
	if err != nil {
		return false
	}
	drain(resp)
	return resp.StatusCode >= http.StatusOK && resp.StatusCode < http.StatusMultipleChoices
}

// cancelOp ends the reading of the lane's op (the grace ran out, or the
// 2026-07-28 cancel).
func (s *Session) cancelOp() {
	s.opMu.Lock()
	c := s.opCancel
	s.opMu.Unlock()
	if c != nil {
		c(errClientCancel)
	}
}

// cancelling reports whether the lane's op was cancelled (the cancel is
// sent, acknowledged or not).
func (s *Session) cancelling() bool {
	cx := &s.cx
	cx.mu.Lock()
	defer cx.mu.Unlock()
	return cx.state == cxSending || cx.state == cxSent
}

// endCancel disarms the lane's cancel when its op ends, waiting for a
// cancel being sent (so no goroutine outlives the op).
func (s *Session) endCancel() {
	cx := &s.cx
	cx.mu.Lock()
	if cx.state == cxArmed {
		cx.timer.Stop()
	}
	fired, over := cx.fired, cx.over
	cx.state, cx.fired, cx.over, cx.ctx = cxIdle, nil, nil, nil
	cx.mu.Unlock()
	if fired != nil {
		close(over)
		<-fired
	}
}

// judgeAfterCancel judges a message of call c's own stream against its
// cancel: a response to c, c's progress, or any other message that is not
// another request's. It reports whether the message came after the
// cancel was sent — then it is counted (raced until the acknowledgement
// plus the cancel's round trip, VerdictAfterCancel after) and taken no
// further.
// A response that comes before the cancel disarms it.
func (s *Session) judgeAfterCancel(m Message, c *call, res *Result, led *Ledger) bool {
	what := "a message"
	switch m.Kind {
	case KindResponse:
		if !IDEqual(m.ID, c.id) {
			return false
		}
		what = "the response"
	case KindNotification:
		if string(m.Method) == "notifications/progress" {
			if c.tok == nil || !bytes.Equal(Field(m.Params, "progressToken"), c.tok) {
				return false
			}
		}
		what = string(m.Method)
	case KindRequest:
		what = "a request " + string(m.Method)
	}
	now := time.Now()
	cx := &s.cx
	cx.mu.Lock()
	st, ack, late := cx.state, cx.ackAt, cx.after
	if st == cxArmed && m.Kind == KindResponse {
		cx.state = cxAnswered
		cx.timer.Stop()
	}
	cx.mu.Unlock()
	switch {
	case st == cxSent && now.After(late):
		led.fault(VerdictAfterCancel, what+" of cancelled request "+strconv.FormatInt(c.id, 10)+" arrived "+now.Sub(ack).Round(time.Microsecond).String()+" after the server acknowledged the cancel (whose round trip took "+late.Sub(ack).Round(time.Microsecond).String()+")")
	case st == cxSending || st == cxSent:
		res.CancelRaced++
	default:
		return false
	}
	if m.Kind == KindResponse && !c.gotResp {
		c.gotResp, c.respAt = true, now // ends the reading of events: the tail is judged too
	}
	return true
}

// dropMailbox closes the request's mailbox without waiting: a cancelled
// request expects nothing more.
func (s *Session) dropMailbox() {
	if mb := s.cur.Load(); mb != nil {
		mb.mu.Lock()
		mb.closed = true
		mb.mu.Unlock()
		s.cur.Store(nil)
	}
}
