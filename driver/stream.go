package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// Reading a request's SSE answer: events until the response, then the
// rest of the stream until it ends (everything that arrives is judged),
// resumes with Last-Event-ID after the reconnect wait, and the idle watch.

// readPOSTStream reads the SSE answer to a request: events until its
// response (the operation's End), then the rest of the stream until it
// ends, so that whatever follows — a second response, a late notification,
// a foreign message — is judged too. A stream that breaks before the
// response is resumed.
func (s *Session) readPOSTStream(ctx context.Context, resp *http.Response, c *call, res *Result) error {
	led := &res.Ledger
	led.Checked = true
	dec := s.dec
	dec.Start(nil)
	lastResumeID := "\x00" // no event id is NUL (an SSE id with NUL is ignored)
	fails := 0
	resumedFrom := "" // the Last-Event-ID of the resume this body answers
	var link *url.URL // the stream's rel="stream" URL (SEP-1335), nil when none
	base := s.u.Load()
	for {
		if len(resp.Header["Link"]) > 0 && !s.modern {
			if l, refused := streamLink(resp.Header, base); l != nil {
				link, base = l, l
			} else if refused {
				res.LinksRefused++
			}
		}
		events, ids := res.Events, len(led.ids)
		dec.Reset(s.watch(resp.Body, res, s.idleDur, false))
		s.sr.dec, s.sr.seen = dec, dec.Progress() // the idle timer re-arms on whole events only
		err := s.readEvents(ctx, dec, c, res, led, false)
		brokeAt := time.Now()
		s.unwatch()
		if err == nil {
			s.readTail(ctx, dec, resp.Body, c, res, led)
			resp.Body.Close()
			dec.Reset(nil) // a large event's buffers go back now, not at the next stream
			s.finishCall(c, res, led, true)
			return nil
		}
		storm := stormCut(resp.Body)
		resp.Body.Close()
		if c.cx && s.cancelling() {
			// A cancelled request: its stream ended, or the grace after the
			// cancel ran out. Nothing is resumed, nothing is due.
			s.dropMailbox()
			return errClientCancel
		}
		if resumedFrom != "" && errors.Is(err, ErrStreamIdle) && res.Events == events && len(led.ids) == ids {
			led.fault(VerdictSilentResume, "resume with Last-Event-ID "+quoteShort([]byte(resumedFrom))+" accepted, nothing delivered before the idle timeout")
			led.LastEventID = resumedFrom
		}
		if errors.Is(err, sse.ErrMalformed) {
			// The stream cannot be read on (an event over the limit): the
			// op fails with that error; nothing is judged lost.
			s.cur.Store(nil)
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return s.ctxErr(ctx, cerr)
		}
		clean := errors.Is(err, io.EOF)
		if s.modern {
			// 2026-07-28: no resumption; the broken stream cancelled the
			// request (Do may re-issue it).
			if errors.Is(err, ErrStreamIdle) {
				return fmt.Errorf("%w: %w", ErrStreamIdle, ErrStreamCancelled)
			}
			return fmt.Errorf("%w (%v)", ErrStreamCancelled, breakCause(err))
		}
		if len(dec.LastEventID()) == 0 && link == nil {
			led.fault(VerdictUnresumable, "stream broke before any event id ("+breakCause(err)+")")
			if errors.Is(err, ErrStreamIdle) {
				return fmt.Errorf("%w: %w", ErrStreamIdle, ErrUnresumable)
			}
			return fmt.Errorf("%w (%v)", ErrUnresumable, breakCause(err))
		}
		if s.cfg.maxResumes() == 0 {
			s.finishCall(c, res, led, false)
			return fmt.Errorf("%w: resumption disabled (%v)", ErrStreamBroken, breakCause(err))
		}
		id := string(dec.LastEventID())
		if id == lastResumeID {
			fails++
		} else {
			fails = 0
			lastResumeID = id
		}
		n := len(res.Resumes)
		resp, err = s.resume(ctx, dec, res, clean, &fails, brokeAt, link)
		for i := n; storm && i < len(res.Resumes); i++ {
			res.Resumes[i].Storm = true // the attempts after a storm's cut
		}
		if err != nil {
			s.finishCall(c, res, led, false)
			return err
		}
		resumedFrom = id
	}
}

// readEvents reads events until the response arrives (nil) or the stream
// ends or breaks (the error: io.EOF for an orderly end).
func (s *Session) readEvents(ctx context.Context, dec *sse.Decoder, c *call, res *Result, led *Ledger, tail bool) error {
	for {
		ev, err := dec.Next()
		if err != nil {
			switch {
			case errors.Is(err, sse.ErrMalformed):
			case s.idleFired.Load() && !tail:
				return streamIdle(s.idleDur)
			case s.idleFired.Load():
				return ErrStreamIdle
			case context.Cause(ctx) != nil:
				return context.Cause(ctx)
			}
			return err
		}
		if ev.HasID && !led.eventID(ev.ID) {
			continue // a replayed duplicate: counted once, not processed again
		}
		if len(ev.Data) == 0 {
			continue // priming event or SEP-1699 close event: id/retry only
		}
		if !tail {
			res.Events++
		}
		s.handle(ctx, ev.Data, c, res, led)
		if c.gotResp && !tail {
			return nil
		}
	}
}

// lingerTimeout bounds how long a stream may stay open after its response
// before it is judged unterminated (2025-11-25 transports §Sending
// Messages, item 6: after the response the server SHOULD terminate the
// stream).
const lingerTimeout = 2 * time.Second

// readTail judges what follows the response on its stream until the
// stream ends; a stream still open lingerTimeout after the response is
// unterminated. The operation's End is already taken: the wait is not
// latency.
func (s *Session) readTail(ctx context.Context, dec *sse.Decoder, body io.ReadCloser, c *call, res *Result, led *Ledger) {
	if dec.AtEOF() {
		return
	}
	// The decoder reads s.sr already (and may hold buffered bytes of the
	// tail): re-arm it with the linger bound instead of resetting it.
	start := time.Now()
	s.watch(body, res, lingerTimeout, true)
	err := s.readEvents(ctx, dec, c, res, led, true)
	s.unwatch()
	if errors.Is(err, ErrStreamIdle) {
		res.TailWait = time.Since(start)
		led.fault(VerdictUnterminated, "the stream stayed open "+lingerTimeout.String()+" after its response")
	}
}

// finishCall closes the ledger of a request, after waiting a little for
// its messages that travel on other streams (a server answering JSON may
// send the request's notifications on the GET stream), so they count as
// misrouted, not lost. Those that came on the GET stream are counted
// misrouted here; those on another lane's stream were counted there.
func (s *Session) finishCall(c *call, res *Result, led *Ledger, gotResp bool) {
	if c.cx && s.cancelling() {
		s.dropMailbox() // cancelled: no response or progress is due
		return
	}
	mb := s.cur.Load()
	if mb != nil && c.expect > 0 && !mb.complete(c.expect, len(led.progress)) {
		due := time.Now().Add(mailboxGrace)
		if s.cfg.SettleBeside {
			// The rest may come on another stream: the mailbox stays open
			// beside the lane, which is free now (late.go).
			s.cur.Store(nil)
			s.mbox = nil
			s.late.add(mb, due)
			res.Pending = &Pending{late: &s.late, mb: mb, expect: c.expect, gotResp: gotResp, due: due}
			led.Checked = true
			return
		}
		// Still in flight while it waits, so what comes meanwhile on
		// another stream is delivered here.
		mb.awaitUntil(c.expect, len(led.progress), due)
	}
	s.cur.Store(nil)
	closeMailbox(mb, led, gotResp, c.expect)
}

// closeMailbox closes the ledger of a request whose mailbox (nil: none)
// takes nothing more: the values that came on other streams count
// misrouted, and what never came anywhere lost.
func closeMailbox(mb *inflight, led *Ledger, gotResp bool, expect int) {
	var elsewhere []float64
	var elsewhereTotal float64
	if mb != nil {
		mb.mu.Lock()
		mb.closed = true
		elsewhere = append(append([]float64(nil), mb.progress...), mb.sibling...)
		elsewhereTotal = mb.total
		for _, v := range mb.progress {
			led.fault(VerdictMisrouted, "progress "+fmtNum(v)+" of this request arrived on the GET stream")
		}
		if mb.resp {
			led.fault(VerdictMisrouted, "the response to this request arrived on the GET stream")
		}
		gotResp = gotResp || mb.resp || mb.siblingResp
		mb.mu.Unlock()
	}
	led.finishOp(gotResp, expect, elsewhere, elsewhereTotal)
}

// mailboxGrace bounds the wait, after a request's response, for its
// progress notifications that the server sends on another stream.
const mailboxGrace = 250 * time.Millisecond

// inflight is a lane's request in flight, as the other streams of the
// session see it: its messages that arrive on the GET stream or on
// another lane's response stream are dropped here (misrouted), so the
// request's ledger does not count them lost.
type inflight struct {
	mu          sync.Mutex
	id          int64
	tok         []byte    // raw JSON progress token
	progress    []float64 // values that came on the GET stream
	sibling     []float64 // values that came on another lane's stream
	total       float64
	resp        bool // the response came on the GET stream
	siblingResp bool // … on another lane's stream
	closed      bool // the request's ledger is closed: takes nothing more
	notify      chan struct{}
}

// begin makes c the lane's request in flight, when another stream may
// carry its messages: the GET stream, or another lane's response stream.
func (s *Session) begin(c *call) {
	if s.get.Load() == nil && len(s.lanes) == 1 {
		return
	}
	if s.mbox == nil {
		s.mbox = &inflight{}
	}
	mb := s.mbox
	mb.mu.Lock()
	mb.id = c.id
	mb.tok = append(mb.tok[:0], c.tok...)
	mb.progress, mb.sibling = mb.progress[:0], mb.sibling[:0]
	mb.total, mb.resp, mb.siblingResp, mb.closed = 0, false, false, false
	if mb.notify == nil {
		mb.notify = make(chan struct{}, 1)
	}
	mb.mu.Unlock()
	s.cur.Store(mb)
}

// complete reports whether the mailbox plus the values seen on the
// request's own stream make want.
func (mb *inflight) complete(want, have int) bool {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return have+len(mb.progress)+len(mb.sibling) >= want
}

// awaitUntil waits until the mailbox plus the values seen on the request's
// own stream make want, or due passes.
func (mb *inflight) awaitUntil(want, have int, due time.Time) {
	var t *time.Timer
	for !mb.complete(want, have) {
		d := time.Until(due)
		if d <= 0 {
			return
		}
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		}
		select {
		case <-mb.notify:
		case <-t.C:
			return
		}
	}
}

// take puts m in the mailbox when it belongs to the request (a progress
// notification with its token, or its response) and returns the
// request's id; sibling: it came on another lane's stream (judged there),
// else on the GET stream.
func (mb *inflight) take(m jsonrpc.Message, sibling bool) (id int64, ok bool) {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if mb.closed {
		return 0, false
	}
	switch m.Kind {
	case jsonrpc.KindResponse:
		if !jsonrpc.IDEqual(m.ID, mb.id) {
			return 0, false
		}
		if sibling {
			mb.siblingResp = true
		} else {
			mb.resp = true
		}
	case jsonrpc.KindNotification:
		if len(mb.tok) == 0 || !bytes.Equal(jsonrpc.Field(m.Params, "progressToken"), mb.tok) {
			return 0, false
		}
		v, _ := jsonrpc.FieldNumber(m.Params, "progress")
		t, _ := jsonrpc.FieldNumber(m.Params, "total")
		if sibling {
			mb.sibling = append(mb.sibling, v)
		} else {
			mb.progress = append(mb.progress, v)
		}
		mb.total = max(mb.total, t)
	default:
		return 0, false
	}
	select {
	case mb.notify <- struct{}{}:
	default:
	}
	return mb.id, true
}

// deliver takes a message of the session's requests that arrived on the
// GET stream: a progress notification or a response of a request in
// flight goes to its mailbox (true); anything else is the caller's.
func (s *Session) deliver(m jsonrpc.Message) bool {
	for _, l := range s.lanes {
		if mb := l.cur.Load(); mb != nil {
			if _, ok := mb.take(m, false); ok {
				return true
			}
		}
	}
	_, ok := s.late.take(m, false)
	return ok
}

// toSibling takes a message that arrived on this lane's stream and belongs
// to another lane's request in flight (a progress notification or the
// response): it goes to that request's mailbox, and toSibling returns that
// request's id.
func (s *Session) toSibling(m jsonrpc.Message) (id int64, ok bool) {
	for _, l := range s.lanes {
		if l == s {
			continue
		}
		if mb := l.cur.Load(); mb != nil {
			if id, ok := mb.take(m, true); ok {
				return id, true
			}
		}
	}
	return s.late.take(m, true)
}

// resume waits per the reconnect policy and GETs the stream with
// Last-Event-ID until the server accepts (2025-11-25 transports
// §Resumability; SEP-1699 retry). fails counts consecutive attempts that
// brought no new event id; attempts stop at MaxResumes. Each attempt's
// headers are bounded by RequestTimeout. With link (the stream's
// rel="stream" URL, SEP-1335) the GETs go there, with Last-Event-ID when
// the stream carried an event id, without it otherwise.
func (s *Session) resume(ctx context.Context, dec *sse.Decoder, res *Result, clean bool, fails *int, brokeAt time.Time, link *url.URL) (*http.Response, error) {
	last := string(dec.LastEventID())
	for {
		if *fails >= s.cfg.maxResumes() {
			return nil, fmt.Errorf("%w: %d attempts without progress", ErrStreamBroken, *fails)
		}
		hint := dec.RetryMS
		wait := s.reconnectDelay(hint, *fails)
		r := Resume{Hint: hint, Waited: wait, Clean: clean, Link: link != nil}
		if err := sleepCtx(ctx, wait); err != nil {
			return nil, s.ctxErr(ctx, err)
		}
		h := s.hdr.Load()
		r.At = time.Now()
		r.Delay = r.At.Sub(brokeAt)
		s.arm()
		resp, err := s.sendTo(ctx, link, http.MethodGet, nil, h.get, last)
		r.TimeToResume = time.Since(brokeAt)
		if err != nil {
			res.Resumes = append(res.Resumes, r)
			if ctx.Err() != nil {
				return nil, s.ctxErr(ctx, err)
			}
			*fails++
			clean = false
			continue
		}
		r.Status = resp.StatusCode
		if resp.StatusCode == http.StatusOK && mediaType(resp.Header.Get("Content-Type")) == mtSSE {
			s.disarm()
			r.OK = true
			res.Resumes = append(res.Resumes, r)
			return resp, nil
		}
		res.BytesIn += drain(resp)
		res.Resumes = append(res.Resumes, r)
		switch {
		case resp.StatusCode == http.StatusNotFound && h.sid != "":
			return nil, fmt.Errorf("resume: %w", ErrSessionMissing)
		case resp.StatusCode == http.StatusMethodNotAllowed:
			return nil, fmt.Errorf("%w: server does not resume (%w)", ErrStreamBroken, &StatusError{Code: resp.StatusCode})
		}
		*fails++
	}
}

// reconnectDelay is the wait before a resume attempt under the policy.
func (s *Session) reconnectDelay(hintMS, fails int) time.Duration {
	base := s.cfg.defaultRetry()
	if hintMS >= 0 {
		base = time.Duration(hintMS) * time.Millisecond
	}
	switch s.cfg.Reconnect {
	case ReconnectImmediate:
		return 0
	case ReconnectBackoff:
		ceil := base << min(fails, 16)
		if m := s.cfg.backoffMax(); ceil > m {
			ceil = m
		}
		d := base
		if ceil > base {
			d += time.Duration(s.rng.Int64N(int64(ceil - base + 1)))
		}
		return d
	}
	return base
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
func (s *Session) watch(body io.ReadCloser, res *Result, d time.Duration, fixed bool) io.Reader {
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

func (s *Session) unwatch() {
	s.idleMu.Lock()
	if s.idle != nil {
		s.idle.Stop()
	}
	s.idleBody = nil
	s.idleMu.Unlock()
}

func (s *Session) onIdle() {
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
	s    *Session
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
	n, err := r.rc.Read(p)
	*r.n += int64(n)
	return n, err
}

func breakCause(err error) string {
	if errors.Is(err, io.EOF) {
		return "stream ended"
	}
	return err.Error()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
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
