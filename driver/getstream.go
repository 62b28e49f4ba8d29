package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// StreamStats describes a session's standalone GET stream so far.
type StreamStats struct {
	Open      bool  // a stream is connected now
	Opened    int64 // successful GETs that opened a stream (resumes excluded)
	Events    int64 // events with data received
	Requests  int64 // server→client requests answered
	Breaks    int64 // times the stream broke
	Reopens   int64 // fresh GETs after a break with no event id
	Resumes   []Resume
	Errors    int64  // failed GETs (resume or reopen)
	LastError string // class of the last failure ("" when none)
	Acked     int64  // 2026-07-28: subscriptions acknowledged
	Ledger    Ledger // sequence numbers of numbered notifications
}

// getStream is the standalone GET stream of a session.
type getStream struct {
	s      *Session
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	stats StreamStats
	dec   *SSEDecoder
	ans   []byte
}

// OpenStream opens the standalone GET stream (2025-11-25 transports
// §Listening for Messages from the Server) and keeps reading it in a
// goroutine until Close: server→client requests are answered, numbered
// notifications are checked, and a broken stream is resumed with
// Last-Event-ID (or reopened when it carried no id). It returns
// ErrNoGETStream on 405 and ErrGETStreamConflict on 409.
func (s *Session) OpenStream(ctx context.Context) error {
	s.wantGET = true
	return s.startGET(ctx)
}

// openStream opens (or, with lastID, resumes) the session's stream: a GET
// (legacy), or a subscriptions/listen request (2026-07-28, which has no
// GET stream and no resumption: lastID is ignored).
func (s *Session) openStream(ctx context.Context, lastID string) (*http.Response, error) {
	if !s.modern {
		return s.send(ctx, http.MethodGet, nil, s.hdr.Load().get, lastID)
	}
	params := []byte(`{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}}`)
	body := appendRequest(nil, s.nextListenID(), "subscriptions/listen", params, s.metaModern)
	h := s.hdr.Load().post.Clone()
	h[HeaderMethod] = []string{"subscriptions/listen"}
	return s.sendBody(ctx, body, h)
}

// nextListenID numbers listen requests apart from the session's op ids
// (the stream's goroutine must not touch s.nextID).
func (s *Session) nextListenID() int64 { return 1<<40 + s.listenSeq.Add(1) }

func (s *Session) startGET(ctx context.Context) error {
	// The GET stream lives as long as the session, beyond the deadline of
	// the operation that opened it; Close cancels it.
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	octx, ocancel := context.WithTimeout(gctx, s.cfg.requestTimeout()+time.Nanosecond)
	resp, err := s.openStream(octx, "")
	if err != nil {
		ocancel()
		cancel()
		return s.ctxErr(octx, err)
	}
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		drain(resp)
		ocancel()
		cancel()
		s.wantGET = false
		return ErrNoGETStream
	case resp.StatusCode == http.StatusConflict:
		drain(resp)
		ocancel()
		cancel()
		return ErrGETStreamConflict
	case resp.StatusCode != http.StatusOK || mediaType(resp.Header.Get("Content-Type")) != mtSSE:
		drain(resp)
		ocancel()
		cancel()
		if resp.StatusCode == http.StatusOK {
			return fmt.Errorf("%w: GET answered %q", ErrBadResponse, resp.Header.Get("Content-Type"))
		}
		return fmt.Errorf("GET stream: %w", &StatusError{resp.StatusCode})
	}
	// The open-timeout only bounds the headers; the body lives on gctx.
	stopTimeout := context.AfterFunc(gctx, ocancel)
	g := &getStream{s: s, cancel: func() { cancel(); stopTimeout(); ocancel() }, done: make(chan struct{}), dec: NewSSEDecoder(nil)}
	g.stats.Opened = 1
	g.stats.Open = true
	s.get = g
	go g.run(gctx, resp)
	return nil
}

// restartGET reopens the GET stream after a re-initialize.
func (s *Session) restartGET(ctx context.Context) {
	s.stopGET()
	s.startGET(ctx) //nolint:errcheck // best effort: the stream's stats show failures
	s.wantGET = true
}

func (s *Session) stopGET() {
	if g := s.get; g != nil {
		g.cancel()
		<-g.done
		s.get = nil
	}
}

// StreamStats returns a snapshot of the GET stream's state (zero when none
// was opened). Safe for concurrent use.
func (s *Session) StreamStats() StreamStats {
	g := s.get
	if g == nil {
		return StreamStats{}
	}
	return g.snapshot()
}

func (g *getStream) snapshot() StreamStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stats
	st.Resumes = append([]Resume(nil), g.stats.Resumes...)
	return st
}

func (g *getStream) run(ctx context.Context, resp *http.Response) {
	defer close(g.done)
	s := g.s
	var fails int
	var lastResumeID string
	for {
		err := g.read(ctx, resp)
		resp.Body.Close()
		g.mu.Lock()
		g.stats.Open = false
		g.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		g.mu.Lock()
		g.stats.Breaks++
		g.mu.Unlock()
		clean := errors.Is(err, io.EOF)
		last := string(g.dec.LastEventID())
		if last == "" || s.modern {
			// Nothing to resume from (or 2026-07-28, which never resumes):
			// open a fresh stream after the wait.
			if err := sleepCtx(ctx, s.reconnectDelay(g.dec.RetryMS, fails)); err != nil {
				return
			}
			r, err := s.openStream(ctx, "")
			if !g.accept(r, err, nil) {
				fails++
				if fails >= s.cfg.maxResumes()+1 || g.fatal(r) {
					return
				}
				continue
			}
			g.mu.Lock()
			g.stats.Reopens++
			g.mu.Unlock()
			g.dec.Start(nil)
			resp = r
			continue
		}
		if last == lastResumeID {
			fails++
		} else {
			fails, lastResumeID = 0, last
		}
		if fails >= max(s.cfg.maxResumes(), 1) {
			g.fail(fmt.Errorf("%w: %d attempts without progress", ErrStreamBroken, fails))
			return
		}
		brokeAt := time.Now()
		hint := g.dec.RetryMS
		wait := s.reconnectDelay(hint, fails)
		if err := sleepCtx(ctx, wait); err != nil {
			return
		}
		at := time.Now()
		r, err := s.openStream(ctx, last)
		rec := Resume{At: at, Hint: hint, Waited: wait, Delay: at.Sub(brokeAt), Clean: clean, TimeToResume: time.Since(brokeAt)}
		if !g.accept(r, err, &rec) {
			fails++
			if g.fatal(r) {
				return
			}
			continue
		}
		resp = r
	}
}

// accept checks a (re)opening GET's answer and records it.
func (g *getStream) accept(r *http.Response, err error, rec *Resume) bool {
	ok := err == nil && r.StatusCode == http.StatusOK && mediaType(r.Header.Get("Content-Type")) == mtSSE
	if rec != nil {
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
	}
	if ok {
		g.mu.Lock()
		g.stats.Open = true
		g.mu.Unlock()
		return true
	}
	if err == nil {
		drain(r)
		err = &StatusError{r.StatusCode}
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
	g.mu.Unlock()
}

func (g *getStream) read(ctx context.Context, resp *http.Response) error {
	s := g.s
	var n int64
	r := &countReader{rc: resp.Body, n: &n}
	g.dec.Reset(r)
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
		m, perr := ParseMessage(ev.Data)
		g.mu.Lock()
		g.stats.Events++
		g.mu.Unlock()
		if perr != nil {
			continue
		}
		switch m.Kind {
		case KindRequest:
			g.ans = s.answer(ctx, m, g.ans)
			g.mu.Lock()
			g.stats.Requests++
			g.mu.Unlock()
		case KindNotification:
			if string(m.Method) == "notifications/subscriptions/acknowledged" {
				g.mu.Lock()
				g.stats.Acked++
				g.mu.Unlock()
				continue
			}
			if seq, ok := notificationSeq(m); ok {
				g.mu.Lock()
				g.stats.Ledger.seq(seq)
				g.mu.Unlock()
			}
		case KindResponse:
			if s.modern && m.ID != nil {
				// 2026-07-28: the listen request's own response ends the
				// subscription gracefully (Subscriptions §Graceful Closure).
				continue
			}
			// A response on the standalone stream is only allowed when
			// resuming a request's stream (transports §Listening, item 4).
			g.mu.Lock()
			g.stats.Ledger.crossStream()
			g.mu.Unlock()
		}
	}
}

// notificationSeq extracts the sequence number of a numbered notification
// (the reference server's notifications/message with data.seq).
func notificationSeq(m Message) (int64, bool) {
	if string(m.Method) != "notifications/message" {
		return 0, false
	}
	data := Field(m.Params, "data")
	v, ok := FieldNumber(data, "seq")
	return int64(v), ok
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
