package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// One operation of a lane, from the request rendered to the Result filled:
// Do's loop (re-initialize after a 404, re-issue, multi round-trip input,
// pages), its first and last steps (the op's timer and context in
// timeouts.go; the cancel armed and the change noted before a send, and
// after the op its cancel, mailbox, timer and context ended and its effect
// on the subscriptions settled). The exchange itself is answer.go (a JSON
// answer) and stream.go (an SSE answer, resumed).

// call is the state of one request/response exchange.
type call struct {
	id     int64
	tool   bool
	init   bool
	expect int
	tok    []byte // raw JSON progress token, nil without one
	// a list op (more: its result had a nextCursor, in Session.cursor); a cancel is armed (Op.Cancel)
	list, more, cx bool
	inspect        func(result []byte, res *Result) // Op.Inspect

	gotResp  bool
	respAt   time.Time
	inputReq []byte // an input_required result to answer (2026-07-28)
	err      error  // outcome carried by the response (RPC error, isError)
	result   []byte // copy of the result (initialize only)
	sid      string // Mcp-Session-Id of the answer (initialize only)
}

var errSession404 = fmt.Errorf("%w", ErrSessionMissing)

func (s *Lane) next() int64 { return s.nextID.Add(1) }

// Do runs op as one JSON-RPC request and fills res (the caller sets
// res.Op and res.Intended; Start, FirstByte, End and the rest are set
// here). End is when the response arrived; what the stream carried after
// it is judged by the ledger but is not latency. A 404 on the session
// re-initializes once and retries (res.Reinits); a response stream that
// breaks is resumed with GET + Last-Event-ID after the reconnect policy's
// wait (res.Resumes); a break before any event id is unresumable and,
// with Config.ReissueUnresumable, re-sent (res.Reissues). List ops follow
// nextCursor (paginate.go), Op.Cancel cancels (cancel.go), Op.Changes and
// resources/(un)subscribe feed the subscriptions (subscribe.go). The
// outcome is res.Class/res.Err; Do never panics on bad input.
func (s *Lane) Do(ctx context.Context, op *Op, res *Result) {
	res.Start = time.Now()
	if res.Intended.IsZero() {
		res.Intended = res.Start
	}
	ctx, cancel := s.opContext(ctx)
	s.opCtx = ctx
	var changed time.Time // the pending change of a subscribed resource (Op.Changes)
	defer s.endDo(ctx, op, res, cancel, &changed)
	params := s.opParams(op, res)
	seen := s.hdr.Load()
	hdr := seen.post
	if s.modern {
		hdr = s.modernHeaders(op)
	}
	var extra []byte // retry fields of a multi round-trip request
	retried := false // after a 404 on the session
	for first := true; ; first = false {
		attempt := time.Now()
		c := call{id: s.next(), tool: op.isToolCall, list: op.list, expect: op.ExpectProgress, inspect: op.Inspect}
		body := s.renderCall(&c, op, params, extra)
		res.Ledger.restart()
		s.begin(&c)
		if op.Cancel != nil || op.Changes != "" {
			changed = s.beforeSend(ctx, op, &c, first, attempt, changed)
		}
		s.arm()
		res.End = time.Time{}
		err := s.exchange(ctx, body, &c, res, hdr)
		if op.Cancel != nil {
			s.noteAnswer(op, &c, attempt, err)
		}
		switch {
		case c.cx && s.cancelling():
			res.Cancelled = true // what came after the cancel is judged; nothing more is sent
		case errors.Is(err, errSession404) && !retried:
			retried = true
			if !s.reinitialize(ctx, res, seen) {
				return
			}
			seen = s.hdr.Load()
			hdr = seen.post
			continue
		case s.reissuable(ctx, err, res):
			res.Reissues++
			res.Wasted += time.Since(attempt)
			continue
		case err == nil && c.inputReq != nil:
			x, ok := s.inputRound(&c, res)
			if !ok {
				break
			}
			extra = x
			continue
		case err == nil && c.err == nil && c.more:
			if x, ok := s.nextPage(op, res); ok {
				extra = x
				continue
			}
		case err != nil:
			res.fail(err)
		case c.err != nil:
			res.fail(c.err)
		}
		if c.gotResp && !res.Cancelled {
			res.End = c.respAt
		}
		if c.list && res.Err == nil && !res.Cancelled {
			res.Pages++
		}
		break
	}
}

// opParams returns op's params (rendered by op.Render, with res's VU and
// Iteration, when op has one), with RequestPlaceholder replaced by a key
// unique to this request ("s<session>-<n>") when op has one.
func (s *Lane) opParams(op *Op, res *Result) []byte {
	p := op.Params
	if op.Render != nil {
		s.pbuf = op.Render(s.pbuf[:0], RenderContext{VU: res.VU, Iteration: res.Iteration})
		p = s.pbuf
	}
	if op.parts == nil {
		return p
	}
	var key [40]byte
	k := append(key[:0], 's')
	k = appendInt(k, int64(s.num))
	k = append(k, '-')
	k = appendInt(k, s.reqSeq.Add(1))
	if op.Render != nil {
		return bytes.ReplaceAll(p, []byte(RequestPlaceholder), k)
	}
	return bytes.Join(op.parts, k)
}

// renderCall renders the request of c into the session's body buffer:
// op's method with params, the extra params fields of a multi round-trip
// retry, and _meta (c's progressToken, set here when op asks for
// progress, and the modern _meta).
func (s *Lane) renderCall(c *call, op *Op, params, extra []byte) []byte {
	meta := s.mbuf[:0]
	if op.Progress {
		s.tokBuf = appendInt(append(s.tokBuf[:0], s.tokPrefix...), c.id)
		s.tokBuf = append(s.tokBuf, '"')
		c.tok = s.tokBuf
		meta = append(meta, `"progressToken":`...)
		meta = append(meta, c.tok...)
	}
	if s.modern {
		if len(meta) > 0 {
			meta = append(meta, ',')
		}
		meta = append(meta, s.metaModern...)
	}
	s.mbuf = meta
	return jsonrpc.AppendRequestExtra(s.body.buf(), c.id, op.Method, params, extra, meta)
}

// reinitialize runs initialize again after a 404 on the session whose
// headers were seen (counted in res.Reinits, its bytes in res) and reopens
// the GET stream. One lane re-initializes at a time: a lane whose session
// another lane re-initialized meanwhile just retries with the new id. It
// reports false, with res failed, when initialize fails.
func (s *Lane) reinitialize(ctx context.Context, res *Result, seen *sessHeaders) bool {
	s.reinitMu.Lock()
	defer s.reinitMu.Unlock()
	if s.hdr.Load() != seen {
		return true
	}
	res.Reinits++
	s.forgetSubscriptions() // the server lost the session, and its subscriptions
	var scratch Result
	s.arm()
	ierr := s.initialize(ctx, &scratch)
	res.BytesIn += scratch.BytesIn
	res.BytesOut += scratch.BytesOut
	if ierr != nil {
		res.fail(fmt.Errorf("re-initialize after 404: %w", ierr))
		return false
	}
	if s.wantGET {
		s.restartGET(ctx)
	}
	return true
}

// reissuable reports whether a request that failed with err is re-sent
// with a new id (Config.ReissueUnresumable, within MaxReissues): a stream
// broken before any event id, or (2026-07-28) a cancelled request.
func (s *Lane) reissuable(ctx context.Context, err error, res *Result) bool {
	return s.cfg.ReissueUnresumable && res.Reissues < s.cfg.maxReissues() && ctx.Err() == nil &&
		(errors.Is(err, ErrUnresumable) || errors.Is(err, ErrStreamCancelled) ||
			// 2026-07-28: a connection lost before the answer is a cancelled request too.
			(s.modern && Classify(err) == ClassTransport))
}

// endDo ends Do: the op's cancel, mailbox, timer and context, its End,
// and what it did to the session's subscriptions.
func (s *Lane) endDo(ctx context.Context, op *Op, res *Result, cancel context.CancelCauseFunc, changed *time.Time) {
	if op.Cancel != nil {
		s.endCancel(op, res)
	}
	s.cur.Store(nil)
	// A plain op's context is kept for the next; one that cancels, changes
	// or subscribes, or re-initialized the session (whose GET stream was
	// reopened on it), ends with its op.
	s.endOp(cancel, ctx, op.Cancel == nil && op.Changes == "" && op.subURI == "" && res.Reinits == 0)
	s.opCtx = nil
	if res.End.IsZero() {
		res.End = time.Now()
	}
	if op.Changes != "" || op.subURI != "" {
		s.settleOp(op, res, *changed)
	}
}

// beforeSend arms the cancel of an attempt (Op.Cancel) and notes the
// change it makes (Op.Changes) at its first send; it returns the pending
// change's time.
func (s *Lane) beforeSend(ctx context.Context, op *Op, c *call, first bool, attempt, changed time.Time) time.Time {
	if op.Cancel != nil {
		s.armCancel(ctx, op, c, first, attempt)
	}
	if op.Changes != "" && changed.IsZero() {
		changed = s.noteChange(op, attempt)
	}
	return changed
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// opContext starts one operation: a cancellable context and the session's
// request timer (reused, no timer per op), armed for the first request.
// endOp must be called when the operation is done. The context of the
// lane's previous op is reused when it has the same parent and was not
// cancelled (endOp kept it): a context costs several allocations.
//
// The timeout rule (2025-11-25 transports; documented on
// Config.RequestTimeout): the timer runs while a request waits for its
// answer — until the response headers of an SSE answer (POST stream, GET
// stream, resume), or until the end of a JSON answer. An open stream is
// bounded by StreamIdleTimeout and the run's end only, so a stream that
// legitimately runs longer than RequestTimeout while events keep arriving
// is not cut.
func (s *Lane) opContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	s.opMu.Lock()
	octx, cancel := s.kept, s.keptCancel
	s.kept, s.keptCancel = nil, nil
	if octx == nil || !sameContext(s.keptOf, ctx) || octx.Err() != nil {
		if cancel != nil {
			cancel(nil)
		}
		octx, cancel = context.WithCancelCause(ctx)
		s.keptOf = ctx
	}
	s.opCancel = cancel
	s.opMu.Unlock()
	s.arm()
	return octx, cancel
}

// sameContext reports whether a and b are the same context (a context of
// a type that is not comparable never is).
func sameContext(a, b context.Context) bool {
	if a == nil || b == nil {
		return false
	}
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// arm (re)starts the request timer of the current operation.
func (s *Lane) arm() {
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
func (s *Lane) disarm() {
	s.opMu.Lock()
	if s.opTimer != nil {
		s.opTimer.Stop()
	}
	s.opMu.Unlock()
}

// endOp ends the op whose context's cancel is cancel: with keep, the
// context is kept for the lane's next op (opContext) when nothing
// cancelled it, else it is cancelled.
func (s *Lane) endOp(cancel context.CancelCauseFunc, octx context.Context, keep bool) {
	s.opMu.Lock()
	if s.opTimer != nil {
		s.opTimer.Stop()
	}
	s.opCancel = nil
	if keep && octx.Err() == nil {
		s.kept, s.keptCancel = octx, cancel
		cancel = nil
	}
	s.opMu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
}

// dropKept cancels the context kept for the lane's next op (the session
// closes).
func (s *Lane) dropKept() {
	s.opMu.Lock()
	cancel := s.keptCancel
	s.kept, s.keptCancel, s.keptOf = nil, nil, nil
	s.opMu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
}

func (s *Lane) onOpTimeout() {
	s.opMu.Lock()
	c := s.opCancel
	s.opMu.Unlock()
	if c != nil {
		c(requestTimeout(s.cfg.requestTimeout()))
	}
}
