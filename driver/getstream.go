package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// StreamStats describes a session's standalone GET stream so far.
type StreamStats struct {
	Open bool // a stream is connected now
	// ResumeLimited is true when the stream was given up for reconnecting
	// faster than Config.MaxResumeRate (ErrResumeLimit; LastError
	// resume-limit).
	ResumeLimited bool
	Opened        int64 // successful GETs that opened a stream (resumes excluded)
	Events        int64 // events with data received
	Requests      int64 // server→client requests answered
	Breaks        int64 // times the stream broke
	// BreakCauses counts breaks by cause: "ended" (the server ended the
	// stream), or the error class of the failed read ("transport" for a
	// reset, "bad-response", ...).
	BreakCauses map[string]int64
	Reopens     int64 // fresh GETs accepted after a break with no event id
	// LinksRefused counts rel="stream" links (SEP-1335) that named another
	// origin: refused, never followed.
	LinksRefused int64
	// Resumes are the reconnect attempts after breaks: resumes with
	// Last-Event-ID and re-opens without it (Resume.Reopen).
	Resumes   []Resume
	Errors    int64  // failed GETs (resume or reopen)
	LastError string // class of the last failure ("" when none)
	// ErrorExample is the message of the last failure.
	ErrorExample string
	Acked        int64  // 2026-07-28: subscriptions acknowledged
	Ledger       Ledger // sequence numbers of numbered notifications, foreign messages
	// Notifications counts the log messages, list changes and resource
	// updates the stream carried.
	Notifications Notifications
	// RetryCapped counts reconnect waits whose retry hint was over
	// Config.MaxRetryWait and were cut to it; nil when none was (an idle
	// session's stream holds a pointer, not the counts). The pointee is
	// never changed once set (a capped wait sets a new one), so copies of
	// the stats may share it.
	RetryCapped *RetryCap
	// Since is when the stream was first opened.
	Since time.Time
}

// getStream is the standalone GET stream of a session.
type getStream struct {
	s      *Lane
	cancel context.CancelFunc
	done   chan struct{}
	ctx    context.Context

	mu    sync.Mutex
	stats StreamStats
	dec   *sse.Decoder
	ans   []byte

	// The reading loop's state, kept here because the goroutine ends while
	// the stream waits for input (see idle). Only the loop touches it.
	resp         *http.Response          // the answer to read next (begin keeps its body only)
	body         io.ReadCloser           // the body being read
	hcancel      context.CancelCauseFunc // ends resp's context (openStreamTimed)
	waiter       httpclient.IdleWaiter   // resp's body's, or nil
	fails        int                     // reconnect attempts without progress
	lastResumeID string                  // the id of the last resume; NUL before any
	link, base   *url.URL                // the stream's rel="stream" URL (SEP-1335), nil when none; resolution base
	nread        int64                   // bytes of resp's body read
	bound        resumeBound             // reconnect attempts against Config.MaxResumeRate
	idling       atomic.Bool             // waiting for input, with or without a goroutine (tests)
	reading      bool                    // resp's body is being read (the decoder was reset for it); beside idling: one word for both
	wake         func()                  // reads on after an idle wait without a goroutine (WatchReadable)
}

// OpenStream opens the standalone GET stream (2025-11-25 transports
// §Listening for Messages from the Server) and keeps reading it in a
// goroutine until Close: server→client requests are answered, numbered
// notifications are checked, and a broken stream is resumed with
// Last-Event-ID (or reopened when it carried no id). It returns
// ErrNoGETStream on 405 and ErrGETStreamConflict on 409.
func (s *Lane) OpenStream(ctx context.Context) error {
	s.wantGET = true
	return s.startGET(ctx)
}

// openStream opens (or, with lastID, resumes) the session's stream: a GET
// (legacy), or a subscriptions/listen request (2026-07-28, which has no
// GET stream and no resumption: lastID is ignored).
func (s *Lane) openStream(ctx context.Context, lastID string, link *url.URL) (*http.Response, error) {
	if !s.modern {
		return s.sendTo(ctx, link, http.MethodGet, nil, s.hdr.Load().forGET(lastID), "")
	}
	params := []byte(`{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}}`)
	body := jsonrpc.AppendRequest(nil, s.nextListenID(), "subscriptions/listen", params, s.metaModern)
	h := s.hdr.Load().post.Clone()
	h[HeaderMethod] = []string{"subscriptions/listen"}
	return s.sendBody(ctx, body, h)
}

// nextListenID numbers listen requests apart from the session's op ids
// (the stream's goroutine must not touch s.nextID).
func (s *Lane) nextListenID() int64 { return 1<<40 + s.listenSeq.Add(1) }

// isListenID reports whether a raw JSON id is one of nextListenID's.
func isListenID(raw []byte) bool {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n > 1<<40
}

func (s *Lane) startGET(ctx context.Context) error {
	// The GET stream lives as long as the session, beyond the deadline of
	// the operation that opened it; Close cancels it. RequestTimeout bounds
	// only the wait for its response headers.
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	resp, hcancel, err := s.openStreamTimed(gctx, "", nil)
	if err != nil {
		cancel()
		return err
	}
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		netutil.Drain(resp)
		cancel()
		s.wantGET = false
		return ErrNoGETStream
	case resp.StatusCode == http.StatusConflict:
		netutil.Drain(resp)
		cancel()
		return ErrGETStreamConflict
	case resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != mtSSE:
		cancel()
		if resp.StatusCode == http.StatusOK {
			netutil.Drain(resp)
			return fmt.Errorf("%w: GET answered %q", ErrBadResponse, resp.Header.Get("Content-Type"))
		}
		var scratch Result
		return fmt.Errorf("GET stream: %w", s.statusError(resp, &scratch))
	}
	g := &getStream{s: s, cancel: cancel, done: make(chan struct{}), dec: sse.NewStreamDecoder(), ctx: gctx}
	g.dec.MaxEvent = s.cfg.maxEvent()
	g.dec.Reserve, g.dec.Release = s.budgetHooks(func() context.Context { return g.ctx })
	g.stats.Opened = 1
	g.stats.Open = true
	g.stats.Since = time.Now()
	s.get.Store(g)
	g.wake = func() { go g.run(gctx) }
	g.resp, g.hcancel, g.lastResumeID, g.base = resp, hcancel, "\x00", s.u.Load() // no event id is NUL (an SSE id with NUL is ignored)
	go g.run(gctx)
	return nil
}

// openStreamTimed opens (or resumes) the session's stream with its
// response headers bounded by RequestTimeout; the body lives on a context
// derived from ctx, which the returned cancel ends: call it once the body
// is closed (it ends with ctx too). A resume goes to link (the stream's
// rel="stream" URL) when not nil. On error, cancel is nil.
func (s *Lane) openStreamTimed(ctx context.Context, lastID string, link *url.URL) (*http.Response, context.CancelCauseFunc, error) {
	hctx, inTime, cancel := headerTimeout(ctx, s.cfg.requestTimeout())
	resp, err := s.openStream(hctx, lastID, link)
	if !inTime() {
		if err == nil {
			resp.Body.Close()
		}
		cancel(nil)
		return nil, nil, requestTimeout(s.cfg.requestTimeout())
	}
	if err != nil {
		cancel(nil)
		return nil, nil, s.ctxErr(hctx, err)
	}
	return resp, cancel, nil
}

// restartGET reopens the GET stream after a re-initialize.
func (s *Lane) restartGET(ctx context.Context) {
	s.stopGET()
	s.startGET(ctx) //nolint:errcheck // best effort: the stream's stats show failures
	s.wantGET = true
}

func (s *Lane) stopGET() {
	if g := s.get.Load(); g != nil {
		g.cancel()
		<-g.done
		g.mu.Lock()
		g.stats.Ledger.finishSeq() // the stream is over: judge what never arrived
		g.mu.Unlock()
		last := g.snapshot()
		s.lastGET = &last
		s.get.Store(nil)
	}
}

// StreamStats returns a snapshot of the GET stream's state (zero when none
// was opened); after Close, the final state, with the notifications that
// never arrived counted lost. Safe for concurrent use with the stream's
// goroutine; call it from the session's goroutine (or after Close).
func (s *Lane) StreamStats() StreamStats {
	g := s.get.Load()
	if g == nil {
		if s.lastGET != nil {
			return *s.lastGET // the stream ended (Close): its final stats, judged
		}
		return StreamStats{}
	}
	return g.snapshot()
}

func (g *getStream) snapshot() StreamStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stats
	st.Resumes = append([]Resume(nil), g.stats.Resumes...)
	st.BreakCauses = maps.Clone(g.stats.BreakCauses)
	st.Ledger.Evidence = slices.Clone(g.stats.Ledger.Evidence)
	return st
}

// run reads the stream (loop) until it is over, or until it waits for
// input: the goroutine then ends, and idle waits on a goroutine of its
// own. An idle stream's goroutine thus has the smallest stack (2 KiB): the
// reading grows a goroutine's stack beyond that, and the runtime shrinks a
// parked goroutine's stack only when it uses less than a quarter of it,
// which a goroutine parked in the netpoller never does.
func (g *getStream) run(ctx context.Context) {
	g.idling.Store(false)
	if !g.loop(ctx) {
		close(g.done)
		return
	}
	g.idling.Store(true)
	if g.waiter.WatchReadable(g.wake) {
		return // no goroutine while idle: wake starts one
	}
	go g.idle(ctx)
}

// idle waits for the stream's next bytes in a goroutine of its own, where
// the body cannot be watched without one (httpclient.IdleWaiter: no read
// buffer held, a 2 KiB stack), then reads on.
func (g *getStream) idle(ctx context.Context) {
	g.waiter.WaitReadable()
	g.run(ctx)
}

// loop reads the stream and reconnects when it breaks. It returns true
// when the stream waits for input (its body implements IdleWaiter): call
// loop again once g.waiter.WaitReadable returned. It returns false when
// the stream is over (the session closed it, or reconnecting gave up).
func (g *getStream) loop(ctx context.Context) bool {
	s := g.s
	for {
		if !g.reading {
			resp := g.resp
			if len(resp.Header["Link"]) > 0 && !s.modern {
				if l, refused := streamLink(resp.Header, g.base); l != nil {
					g.link, g.base = l, l
				} else if refused {
					g.mu.Lock()
					g.stats.LinksRefused++
					g.mu.Unlock()
				}
			}
			g.begin(resp)
		}
		err := g.read(ctx)
		if err == sse.ErrIdle {
			return true
		}
		g.reading = false
		body := g.body
		storm := stormCut(body)
		body.Close()
		g.hcancel(nil)
		g.body = nil
		g.mu.Lock()
		g.stats.Open = false
		g.mu.Unlock()
		if ctx.Err() != nil {
			return false
		}
		brokeAt := time.Now()
		cause := "ended"
		if !errors.Is(err, io.EOF) {
			cause = Classify(err).String()
		}
		g.mu.Lock()
		g.stats.Breaks++
		if g.stats.BreakCauses == nil {
			g.stats.BreakCauses = map[string]int64{}
		}
		g.stats.BreakCauses[cause]++
		g.mu.Unlock()
		clean := errors.Is(err, io.EOF)
		last := string(g.dec.LastEventID())
		link := g.link
		reopen := (last == "" && link == nil) || s.modern
		if !reopen {
			if last == g.lastResumeID {
				g.fails++
			} else {
				g.fails, g.lastResumeID = 0, last
			}
		}
		// Reconnect attempts until one is accepted: a failed attempt is
		// counted (Resumes, and toward the limit) but is not another break
		// of the stream. Nothing to resume from (or 2026-07-28, which never
		// resumes): a fresh stream, after the same wait; it is a reconnect
		// attempt too.
		hint := g.dec.RetryMS
		from := last
		if reopen {
			from = ""
		}
		var r *http.Response
		for {
			if !reopen && g.fails >= max(s.cfg.maxResumes(), 1) {
				g.fail(fmt.Errorf("%w: %d attempts without progress", ErrStreamBroken, g.fails))
				return false
			}
			wait, capped := s.reconnectDelay(hint, g.fails)
			if capped {
				g.mu.Lock()
				var c RetryCap
				if g.stats.RetryCapped != nil {
					c = *g.stats.RetryCapped
				}
				noteRetryCap(&c, hint, s.cfg.maxRetryWait())
				g.stats.RetryCapped = &c
				g.mu.Unlock()
			}
			if err := netutil.SleepCtx(ctx, wait); err != nil {
				return false
			}
			at := time.Now()
			// The GET stream lives as long as its session: only the rate
			// bound applies to it, not a total.
			if err := g.bound.next(at, 0, s.cfg.maxResumeRate()); err != nil {
				g.fail(err)
				g.mu.Lock()
				g.stats.ResumeLimited = true
				g.mu.Unlock()
				return false
			}
			var oerr error
			var hcancel context.CancelCauseFunc
			r, hcancel, oerr = s.openStreamTimed(ctx, from, link)
			rec := Resume{At: at, Hint: hint, Waited: wait, Capped: capped, Delay: at.Sub(brokeAt), Clean: clean, TimeToResume: time.Since(brokeAt), Reopen: reopen, Storm: storm, Link: link != nil}
			if g.accept(r, oerr, &rec) {
				g.hcancel = hcancel
				break
			}
			if hcancel != nil {
				hcancel(nil) // accept read or closed the answer's body
			}
			g.fails++
			if (reopen && g.fails >= s.cfg.maxResumes()+1) || g.fatal(r) || ctx.Err() != nil {
				return false
			}
		}
		if reopen {
			g.mu.Lock()
			g.stats.Reopens++
			g.mu.Unlock()
			g.dec.Start(nil)
		}
		g.resp = r
	}
}

// accept checks a (re)opening GET's answer and records the attempt.
func (g *getStream) accept(r *http.Response, err error, rec *Resume) bool {
	ok := err == nil && r.StatusCode == http.StatusOK && mediaType(r.Header.Get("Content-Type")) == mtSSE
	rec.OK = ok
	if r != nil {
		rec.Status = r.StatusCode
	}
	g.mu.Lock()
	g.stats.Resumes = append(g.stats.Resumes, *rec)
	g.mu.Unlock()
	if f := g.s.OnGETResume; f != nil {
		f(*rec)
	}
	if ok {
		g.mu.Lock()
		g.stats.Open = true
		g.mu.Unlock()
		return true
	}
	if err == nil {
		var scratch Result
		err = g.s.statusError(r, &scratch)
		if r.StatusCode == http.StatusNotFound && rec.Link {
			err = fmt.Errorf("%w: %w", ErrStreamLinkMissing, err)
		}
	}
	g.fail(err)
	return false
}

// fatal reports answers after which the stream is not retried: the session
// is gone (404) or the server offers no stream (405).
func (g *getStream) fatal(r *http.Response) bool {
	return r != nil && (r.StatusCode == http.StatusNotFound || r.StatusCode == http.StatusMethodNotAllowed)
}

func (g *getStream) fail(err error) {
	g.mu.Lock()
	g.stats.Errors++
	g.stats.LastError = Classify(err).String()
	g.stats.ErrorExample = err.Error()
	g.mu.Unlock()
}

// begin points the decoder at resp's body. While the stream has nothing
// to read, a body that implements httpclient.IdleWaiter (plain TCP,
// HTTP/1.1) lets it wait with no read buffer held and no reading stack
// (run): an idle session costs less (BenchmarkIdleSessionMemory).
func (g *getStream) begin(resp *http.Response) {
	g.nread = 0
	// Only the body is kept: an idle stream holds no request or headers.
	g.body, g.resp = resp.Body, nil
	g.dec.Reset(&countReader{rc: g.body, n: &g.nread})
	g.waiter = nil
	if w, ok := g.body.(httpclient.IdleWaiter); ok && w.CanWaitIdle() {
		g.waiter = w
	}
	g.dec.ReturnIdle = g.waiter != nil
	g.reading = true
}

// read handles the stream's events until it ends (the error), or until it
// waits for input (sse.ErrIdle).
func (g *getStream) read(ctx context.Context) error {
	s := g.s
	// An idle GET stream is normal (the server may have nothing to say), so
	// no idle timeout applies here; the session's Close ends it.
	for {
		ev, err := g.dec.Next()
		if err != nil {
			return err
		}
		g.mu.Lock()
		fresh := !ev.HasID || g.stats.Ledger.eventID(ev.ID)
		g.mu.Unlock()
		if !fresh || len(ev.Data) == 0 {
			continue
		}
		m, perr := jsonrpc.Parse(ev.Data)
		g.mu.Lock()
		g.stats.Events++
		g.mu.Unlock()
		if perr != nil {
			continue
		}
		switch m.Kind {
		case jsonrpc.KindRequest:
			g.ans = s.answer(ctx, m, g.ans)
			g.mu.Lock()
			g.stats.Requests++
			g.mu.Unlock()
		case jsonrpc.KindNotification:
			switch string(m.Method) {
			case "notifications/subscriptions/acknowledged":
				g.mu.Lock()
				g.stats.Acked++
				g.mu.Unlock()
			case "notifications/progress":
				g.foreign(m, "progress")
			default:
				var n Notifications
				if s.countNotification(m, &n) {
					g.mu.Lock()
					g.stats.Notifications.Add(n)
					g.mu.Unlock()
				}
				if seq, ok := notificationSeq(m); ok {
					g.mu.Lock()
					g.stats.Ledger.seq(seq)
					g.mu.Unlock()
				}
			}
		case jsonrpc.KindResponse:
			if s.modern && isListenID(m.ID) {
				// 2026-07-28: the listen request's own response ends the
				// subscription gracefully (Subscriptions §Graceful Closure).
				continue
			}
			// A response on the standalone stream is only allowed when
			// resuming a request's stream (transports §Listening, item 4).
			g.foreign(m, "response")
		}
	}
}

// foreign judges a request's message on the GET stream: one of the
// request in flight goes to its mailbox (its ledger counts it misrouted);
// one of a finished request of this session is misrouted here; anything
// else is cross-stream.
func (g *getStream) foreign(m jsonrpc.Message, what string) {
	s := g.s
	if s.deliver(m) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if m.Kind == jsonrpc.KindNotification {
		tok := jsonrpc.Field(m.Params, "progressToken")
		if bytes.HasPrefix(tok, s.tokPrefix) {
			g.stats.Ledger.fault(VerdictMisrouted, "progress of request token "+quoteShort(tok)+" of this session arrived on the GET stream (after its request ended)")
			return
		}
		g.stats.Ledger.fault(VerdictCrossStream, "progress for token "+quoteShort(tok)+", not this session's, arrived on the GET stream")
		return
	}
	g.stats.Ledger.fault(VerdictCrossStream, "a "+what+" to id "+quoteShort(m.ID)+" arrived on the GET stream")
}

// notificationSeq extracts the sequence number of a numbered notification
// (the reference server's notifications/message with data.seq).
func notificationSeq(m jsonrpc.Message) (int64, bool) {
	if string(m.Method) != "notifications/message" {
		return 0, false
	}
	data := jsonrpc.Field(m.Params, "data")
	v, ok := jsonrpc.FieldNumber(data, "seq")
	return int64(v), ok
}

// stormCut reports whether a storm wave cut body (the fault injector's
// bodies say so: httpclient.StormCutReporter).
func stormCut(body io.ReadCloser) bool {
	sc, ok := body.(httpclient.StormCutReporter)
	return ok && sc.StormCut()
}

type countReader struct {
	rc io.ReadCloser
	n  *int64
}

func (r *countReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	*r.n += int64(n)
	return n, err
}
