package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/sse"
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
// notification (its 202), or until the stream ends, and judges what came
// after the cancel was sent, once the op ends. The verdict rests on what
// the messages say, not on when a busy generator got round to reading
// them (a reader's delay, or the acknowledgement's, is the generator's):
//
//   - an error answer (a JSON-RPC error, or a result with isError — the
//     go-sdk's "context canceled") says the server stopped: counted in
//     Result.CancelRaced, never a fault;
//   - a success result says the tool ran to its end. It proves the server
//     went on when (1) the server knew the request before it had the
//     cancel: the driver read the first byte of the request's answer (its
//     headers) before it sent the cancel — a cancel that overtakes its
//     request on another connection names a request the server does not
//     know yet, which it "MAY ignore"; and (2) the tool could not have
//     finished before the server had the cancel: the server acknowledged
//     the cancel, plus the cancel's own round trip, sooner after the
//     request was sent than the op's fastest success answer took
//     (Op.fastest: any call's, in any session, this one's included). Then
//     that result and every other message of the call after the cancel
//     was sent (its progress, anything on its stream) are
//     VerdictAfterCancel in the op's ledger. A busy generator only makes
//     that proof harder (it reads the headers and the acknowledgement
//     late, sends the cancel later than noted), and the fastest answer is
//     the least delayed of all the op's calls;
//   - otherwise (no success result, an unacknowledged cancel, or a result
//     that may have been written before the server had the cancel) the
//     messages are the race the spec allows ("cancellation notifications
//     may arrive after request processing has completed, and potentially
//     after a response has already been sent"): counted in
//     Result.CancelRaced.
//
//   - progress that the server wrote after it acknowledged the cancel is
//     evidence that the tool went on, with or without a result. What was
//     in flight at the acknowledgement is told from the stream, not from
//     when the generator read it: every byte of a message written before
//     the server sent its 202 had reached mcpbench's socket when the 202
//     was read (one server, loopback or any in-order path), so once the
//     reader has read everything it had — nothing left in its buffers
//     or on the socket (httpclient.Drainer), after the 202 — what it reads
//     next was written after the acknowledgement. The first progress
//     notification after the acknowledgement is taken as the tool's step
//     that was under way when the cancel came (a server's tool and its
//     cancel handler run concurrently); every later one read after the
//     drain is VerdictAfterCancel. A busy generator only reads the drain
//     later, counting fewer. Bodies that cannot tell (TLS, HTTP/2, a
//     wrapped connection) are judged by the result alone.
//
// So a server that ignores a cancel is caught when it answers over SSE
// with headers first, or keeps sending progress after the cancel was
// acknowledged (over HTTP/1.1 without TLS); one that answers
// application/json (nothing before the answer shows it knew the request)
// is not.
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

// cancelGrace is CancelGrace (tests lengthen it: SetCancelGrace).
var cancelGrace = CancelGrace

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
	mu    sync.Mutex
	timer *time.Timer
	state cxState
	// The op goroutine's own, beside state (its padding): after the
	// acknowledgement, drained is set once the reader had read everything
	// that had reached it (noteDrained), and stepSeen once a progress
	// notification of the call was read since the acknowledgement (the
	// step under way; those after it and after the drain are
	// VerdictAfterCancel at once).
	drained  bool
	stepSeen bool
	// acked is set when the server acknowledged the cancel (state cxSent
	// over a legacy session), for the op's reader: one atomic load a read.
	acked    atomic.Bool
	id       int64           // the request in flight
	ctx      context.Context // the op's context
	wait     time.Duration   // Op.Cancel.After
	deadline time.Time       // when the timer is due (a stale fire is ignored)
	sentAt   time.Time       // when notifications/cancelled was sent
	ackAt    time.Time       // when the server acknowledged it
	fired    chan struct{}   // closed when the firing goroutine returns
	over     chan struct{}   // closed by the op when its reading ended

	// The op goroutine's own: what came after the cancel was sent, judged
	// when the op ends (judgeCancelled).
	reqAt  time.Time // when the request in flight was sent (at the latest)
	doneAt time.Time // when its success result came (zero: none)
	whats  []string  // the messages that came, other than an error answer
}

// testHookCancelDrained, when set (tests), is called on the op's goroutine
// when its reader drained the stream after the cancel's acknowledgement.
var testHookCancelDrained func()

// noteDrained marks the lane's cancelled op drained, once, when its
// reader is about to read more of the stream (rc, decoded by dec) and
// holds nothing of an event: nothing is left in the decoder, in the
// body's buffers or on the socket. Called by the reader (streamReader)
// after the acknowledgement only.
func (s *Lane) noteDrained(rc io.Reader, dec *sse.Decoder) {
	cx := &s.cx
	if cx.drained || dec == nil || !dec.Between() {
		return
	}
	d, ok := rc.(httpclient.Drainer)
	if !ok {
		return
	}
	if drained, known := d.Drained(); known && drained {
		cx.drained = true
		if h := testHookCancelDrained; h != nil {
			h()
		}
	}
}

// armCancel arms the cancel of the op's call c at its first attempt (when
// the call is drawn), or points an armed cancel at a later attempt's
// request (a re-send, the next page).
func (s *Lane) armCancel(ctx context.Context, op *Op, c *call, first bool, sent time.Time) {
	cx := &s.cx
	if first {
		if s.rng.Float64() >= op.Cancel.P {
			return
		}
		cx.reqAt = sent
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
		cx.reqAt = sent
	}
	cx.mu.Unlock()
}

// fireCancel cancels the lane's request in flight when its timer is due.
func (s *Lane) fireCancel() {
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
		cx.state, cx.ackAt = cxSent, cx.sentAt
		cx.mu.Unlock()
		s.cancelOp()
		return
	}
	if s.sendCancel(ctx, id, after) {
		now := time.Now()
		cx.mu.Lock()
		cx.state, cx.ackAt = cxSent, now
		cx.mu.Unlock()
		cx.acked.Store(true)
	}
	t := time.NewTimer(cancelGrace)
	defer t.Stop()
	select {
	case <-over:
	case <-t.C:
		s.cancelOp()
	}
}

// sendCancel POSTs notifications/cancelled for request id and reports
// whether the server acknowledged it (2xx). What follows one that was not
// acknowledged is raced, never a violation.
func (s *Lane) sendCancel(ctx context.Context, id int64, after time.Duration) bool {
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
	netutil.Drain(resp)
	return resp.StatusCode >= http.StatusOK && resp.StatusCode < http.StatusMultipleChoices
}

// cancelOp ends the reading of the lane's op (the grace ran out, or the
// 2026-07-28 cancel).
func (s *Lane) cancelOp() {
	s.opMu.Lock()
	c := s.opCancel
	s.opMu.Unlock()
	if c != nil {
		c(errClientCancel)
	}
}

// cancelling reports whether the lane's op was cancelled (the cancel is
// sent, acknowledged or not).
func (s *Lane) cancelling() bool {
	cx := &s.cx
	cx.mu.Lock()
	defer cx.mu.Unlock()
	return cx.state == cxSending || cx.state == cxSent
}

// endCancel disarms the lane's cancel when its op ends, waiting for a
// cancel being sent (so no goroutine outlives the op), and judges what
// came after the cancel in res (judgeCancelled).
// errCancelNotSent: an op's notifications/cancelled could not be sent
// (nor its context ended): the call was cut short by the client.
var errCancelNotSent = fmt.Errorf("%w: notifications/cancelled was not delivered", ErrStreamCancelled)

func (s *Lane) endCancel(op *Op, res *Result) {
	cx := &s.cx
	cx.mu.Lock()
	if cx.state == cxArmed {
		cx.timer.Stop()
		cx.state = cxIdle // a fire already waiting for the lock sends nothing
	}
	fired, over := cx.fired, cx.over
	cx.mu.Unlock()
	if fired != nil {
		close(over)
		<-fired
	}
	cx.mu.Lock()
	// A cancel whose send failed (the run ended, the connection broke, the
	// server refused it) never reached the server: the call was cut short,
	// not cancelled, and is not counted as cancelled.
	undelivered := fired != nil && res.Cancelled && !s.modern && cx.state != cxSent
	var cause error
	if undelivered && cx.ctx != nil {
		cause = context.Cause(cx.ctx)
	}
	acked := cx.state == cxSent && !s.modern
	// the server answered the request's headers before the cancel was sent
	acked = acked && !res.FirstByte.Before(cx.reqAt) && res.FirstByte.Before(cx.sentAt)
	rtt := cx.ackAt.Sub(cx.sentAt)
	ackAfter := cx.ackAt.Sub(cx.reqAt) + rtt
	cx.state, cx.fired, cx.over, cx.ctx = cxIdle, nil, nil, nil
	cx.mu.Unlock()
	cx.acked.Store(false)
	cx.drained, cx.stepSeen = false, false
	if undelivered {
		res.Cancelled = false
		if cause == nil {
			cause = errCancelNotSent
		}
		res.fail(cause)
	}
	if len(cx.whats) > 0 {
		s.judgeCancelled(op, res, acked, ackAfter, rtt)
		cx.whats, cx.doneAt = cx.whats[:0], time.Time{}
	}
}

// judgeCancelled judges the messages of a cancelled call that came after
// its cancel was sent, other than an error answer (cx.whats): all
// VerdictAfterCancel when the call's success result proves that the tool
// ran on — the server had answered the request's headers before the
// cancel was sent and acknowledged it (acked), plus the cancel's round
// trip rtt, ackAfter after the request was sent, sooner than the op's
// fastest success answer took — else all raced.
func (s *Lane) judgeCancelled(op *Op, res *Result, acked bool, ackAfter, rtt time.Duration) {
	cx := &s.cx
	proven := false
	var fastest time.Duration
	if !cx.doneAt.IsZero() {
		own := cx.doneAt.Sub(cx.reqAt)
		fastest = time.Duration(op.fastest.Load())
		if fastest == 0 || own < fastest {
			fastest = own
		}
		noteFastest(op, own)
		proven = acked && ackAfter < fastest
	}
	if !proven {
		res.CancelRaced += len(cx.whats)
		return
	}
	why := " of cancelled request " + strconv.FormatInt(cx.id, 10) + " came after the cancel: the server acknowledged the cancel " +
		(ackAfter - rtt).Round(time.Microsecond).String() + " after the request (its round trip " + rtt.Round(time.Microsecond).String() +
		"), after it had answered the request's headers, and no call of the op was answered sooner than " + fastest.Round(time.Microsecond).String() + ", yet this one's tool ran to a success result"
	for _, w := range cx.whats {
		res.Ledger.fault(VerdictAfterCancel, w+why)
	}
}

// noteAnswer notes the success answer of an op with Cancel that was not
// cancelled: d after its request was sent.
func (s *Lane) noteAnswer(op *Op, c *call, sent time.Time, err error) {
	if err == nil && c.gotResp && c.err == nil && !(c.cx && s.cancelling()) {
		noteFastest(op, c.respAt.Sub(sent))
	}
}

// noteFastest lowers op.fastest to d.
func noteFastest(op *Op, d time.Duration) {
	for {
		f := op.fastest.Load()
		if d <= 0 || (f != 0 && f <= int64(d)) || op.fastest.CompareAndSwap(f, int64(d)) {
			return
		}
	}
}

// judgeAfterCancel takes a message of call c's own stream that came after
// the call's cancel was sent — a response to c, c's progress, or any other
// message that is not another request's — and reports whether it did:
// then it is taken no further. An error answer is counted raced at once
// (the server stopped); the rest wait for the op's end (judgeCancelled).
// A response that comes before the cancel disarms it.
func (s *Lane) judgeAfterCancel(m jsonrpc.Message, c *call, res *Result, led *Ledger) bool {
	what, stopped := "a message", false
	switch m.Kind {
	case jsonrpc.KindResponse:
		if !jsonrpc.IDEqual(m.ID, c.id) {
			return false
		}
		what = "the response"
		stopped = m.Error != nil || (c.tool && bytes.Equal(jsonrpc.Field(m.Result, "isError"), litTrue))
	case jsonrpc.KindNotification:
		if string(m.Method) == "notifications/progress" {
			if c.tok == nil || !bytes.Equal(jsonrpc.Field(m.Params, "progressToken"), c.tok) {
				return false
			}
		}
		what = string(m.Method)
	case jsonrpc.KindRequest:
		what = "a request " + string(m.Method)
	}
	now := time.Now()
	cx := &s.cx
	cx.mu.Lock()
	st := cx.state
	if st == cxArmed && m.Kind == jsonrpc.KindResponse {
		cx.state = cxAnswered
		cx.timer.Stop()
	}
	cx.mu.Unlock()
	progress := m.Kind == jsonrpc.KindNotification && string(m.Method) == "notifications/progress"
	switch {
	case st != cxSending && st != cxSent:
		return false
	case stopped:
		res.CancelRaced++
	case progress && st == cxSent && !s.modern && cx.drained && cx.stepSeen:
		res.Ledger.fault(VerdictAfterCancel, "progress "+string(jsonrpc.Field(m.Params, "progress"))+" of cancelled request "+strconv.FormatInt(cx.id, 10)+
			" came after the server acknowledged the cancel and after everything that had reached mcpbench by then was read, and after the step under way (the first progress since the acknowledgement): the tool went on")
	default:
		if progress && st == cxSent {
			cx.stepSeen = true
		}
		cx.whats = append(cx.whats, what)
		if m.Kind == jsonrpc.KindResponse && cx.doneAt.IsZero() {
			cx.doneAt = now
		}
	}
	if m.Kind == jsonrpc.KindResponse && !c.gotResp {
		c.gotResp, c.respAt = true, now // ends the reading of events: the tail is judged too
	}
	return true
}

// dropMailbox closes the request's mailbox without waiting: a cancelled
// request expects nothing more.
func (s *Lane) dropMailbox() {
	if mb := s.cur.Load(); mb != nil {
		mb.mu.Lock()
		mb.closed = true
		mb.mu.Unlock()
		s.cur.Store(nil)
	}
}
