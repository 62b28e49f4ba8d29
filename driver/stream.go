package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
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
func (s *Lane) readPOSTStream(ctx context.Context, resp *http.Response, c *call, res *Result) error {
	led := &res.Ledger
	led.Checked = true
	dec := s.takeDecoder()
	defer s.giveDecoder(dec)
	dec.Start(nil)
	lastResumeID := "\x00" // no event id is NUL (an SSE id with NUL is ignored)
	fails := 0
	resumedFrom := "" // the Last-Event-ID of the resume this body answers
	var link *url.URL // the stream's rel="stream" URL (SEP-1335), nil when none
	var bound resumeBound
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
		resp, err = s.resume(ctx, dec, res, clean, &fails, brokeAt, link, &bound)
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
func (s *Lane) readEvents(ctx context.Context, dec *sse.Decoder, c *call, res *Result, led *Ledger, tail bool) error {
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
func (s *Lane) readTail(ctx context.Context, dec *sse.Decoder, body io.ReadCloser, c *call, res *Result, led *Ledger) {
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
func (s *Lane) finishCall(c *call, res *Result, led *Ledger, gotResp bool) {
	if c.cx && s.cancelling() {
		s.dropMailbox() // cancelled: no response or progress is due
		return
	}
	mb := s.cur.Load()
	if mb != nil && c.expect > 0 && !mb.complete(c.expect, len(led.progress)) {
		due := time.Now().Add(mailboxGrace)
		if s.cfg.SettleBeside {
			// The rest may come on another stream: the mailbox stays open
			// beside the lane, which is free now (late.go). It joins the
			// late boxes before it leaves the lane, so a message arriving
			// meanwhile on another stream always finds it (in between it
			// would find neither, and be judged lost here).
			s.late.add(mb, due)
			s.cur.Store(nil)
			s.mbox = nil
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

// resume waits per the reconnect policy and GETs the stream with
// Last-Event-ID until the server accepts (2025-11-25 transports
// §Resumability; SEP-1699 retry). fails counts consecutive attempts that
// brought no new event id; attempts stop at MaxResumes. Each attempt's
// headers are bounded by RequestTimeout. With link (the stream's
// rel="stream" URL, SEP-1335) the GETs go there, with Last-Event-ID when
// the stream carried an event id, without it otherwise. A retry hint over
// Config.MaxRetryWait waits that long (counted in res.RetryCapped when the
// wait begins, so a wait the run's end cuts is counted too); bound counts
// the stream's attempts against MaxStreamResumes and MaxResumeRate.
func (s *Lane) resume(ctx context.Context, dec *sse.Decoder, res *Result, clean bool, fails *int, brokeAt time.Time, link *url.URL, bound *resumeBound) (*http.Response, error) {
	last := string(dec.LastEventID())
	for {
		if *fails >= s.cfg.maxResumes() {
			return nil, fmt.Errorf("%w: %d attempts without progress", ErrStreamBroken, *fails)
		}
		hint := dec.RetryMS
		wait, capped := s.reconnectDelay(hint, *fails)
		if capped {
			noteRetryCap(&res.RetryCapped, hint, s.cfg.maxRetryWait())
		}
		r := Resume{Hint: hint, Waited: wait, Capped: capped, Clean: clean, Link: link != nil}
		if err := netutil.SleepCtx(ctx, wait); err != nil {
			return nil, s.ctxErr(ctx, err)
		}
		h := s.hdr.Load()
		r.At = time.Now()
		if err := bound.next(r.At, s.cfg.maxStreamResumes(), s.cfg.maxResumeRate()); err != nil {
			return nil, err
		}
		r.Delay = r.At.Sub(brokeAt)
		s.arm()
		resp, err := s.sendTo(ctx, link, http.MethodGet, nil, h.forGET(last), "")
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
		res.BytesIn += netutil.Drain(resp)
		res.Resumes = append(res.Resumes, r)
		switch {
		case resp.StatusCode == http.StatusNotFound && link != nil:
			return nil, fmt.Errorf("resume: %w", ErrStreamLinkMissing)
		case resp.StatusCode == http.StatusNotFound && h.sid != "":
			return nil, fmt.Errorf("resume: %w", ErrSessionMissing)
		case resp.StatusCode == http.StatusMethodNotAllowed:
			return nil, fmt.Errorf("%w: server does not resume (%w)", ErrStreamBroken, &StatusError{Code: resp.StatusCode})
		}
		*fails++
	}
}

// reconnectDelay is the wait before a resume attempt under the policy;
// capped reports a retry hint over Config.MaxRetryWait, cut to it.
func (s *Lane) reconnectDelay(hintMS, fails int) (wait time.Duration, capped bool) {
	base := s.cfg.defaultRetry()
	if hintMS >= 0 {
		base, capped = hintWait(hintMS, s.cfg.maxRetryWait())
	}
	switch s.cfg.Reconnect {
	case ReconnectImmediate:
		return 0, false
	case ReconnectBackoff:
		ceil := base << min(fails, 16)
		if m := s.cfg.backoffMax(); ceil > m || ceil < base { // ceil < base: the shift overflowed
			ceil = m
		}
		d := base
		if ceil > base {
			d += time.Duration(s.rng.Int64N(int64(ceil - base + 1)))
		}
		return d, capped
	}
	return base, capped
}

func breakCause(err error) string {
	if errors.Is(err, io.EOF) {
		return "stream ended"
	}
	return err.Error()
}
