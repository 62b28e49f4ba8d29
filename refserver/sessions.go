package refserver

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is the per-session state of the stateful modes.
type session struct {
	ss   *mcp.ServerSession
	done chan struct{} // closed when the session has ended

	// mu serialises numbering and sending, so that numbered notifications
	// reach the event store and the wire in sequence order.
	mu  sync.Mutex
	seq int64
}

// initialized is the SDK's InitializedHandler: it starts tracking the
// session and, with TickInterval, its ticks.
func (h *handler) initialized(_ context.Context, req *mcp.InitializedRequest) {
	if n := h.opts.LeakPerSession; n > 0 {
		// A deliberate leak, for testing leak detection: memory kept for
		// the server's lifetime, every page written so it is resident.
		b := make([]byte, n)
		for i := 0; i < n; i += 4096 {
			b[i] = 1
		}
		h.leakMu.Lock()
		h.leaked = append(h.leaked, b)
		h.leakMu.Unlock()
	}
	if !h.mode.stateful() {
		return // legacy clients of the stateless modes: no session to keep
	}
	s := h.track(req.Session)
	if s != nil && h.opts.TickInterval > 0 {
		h.goTracked(func() { h.tick(s) })
	}
}

// track returns the state of ss, creating it (and a goroutine that notices
// the end of the session) on first use. It returns nil once the handler is
// closing.
func (h *handler) track(ss *mcp.ServerSession) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[ss]; s != nil {
		return s
	}
	if h.closing {
		return nil
	}
	s := &session{ss: ss, done: make(chan struct{})}
	h.sessions[ss] = s
	h.opened.Add(1)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		_ = ss.Wait() // returns once the session has ended, for whatever reason
		h.mu.Lock()
		delete(h.sessions, ss)
		h.mu.Unlock()
		close(s.done)
		h.closed.Add(1)
	}()
	return s
}

// goTracked runs f in a goroutine that Close waits for. It reports false,
// without running f, once the handler is closing.
func (h *handler) goTracked(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

// seqData is the data of a numbered notifications/message.
type seqData struct {
	Seq    int64  `json:"seq"`
	Stream string `json:"stream"`
}

// sendSeq sends the session's next numbered notification. Its context carries
// no request, so the SDK routes it to the standalone GET stream.
func (h *handler) sendSeq(s *session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	_, err := h.send(h.ctx, "notifications/message", &mcp.ServerRequest[*mcp.LoggingMessageParams]{
		Session: s.ss,
		Params: &mcp.LoggingMessageParams{
			Level:  "info",
			Logger: "mcpbench",
			Data:   seqData{Seq: s.seq, Stream: "get"},
		},
	})
	return err
}

// tick sends a numbered notification every TickInterval until the session or
// the handler ends.
func (h *handler) tick(s *session) {
	// Start at a random phase: sessions set up together must not tick in
	// step (a burst every interval would show in every latency figure).
	first := time.NewTimer(rand.N(h.opts.TickInterval))
	select {
	case <-first.C:
	case <-s.done:
		first.Stop()
		return
	case <-h.ctx.Done():
		first.Stop()
		return
	}
	if h.sendSeq(s) != nil {
		return
	}
	t := time.NewTicker(h.opts.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if h.sendSeq(s) != nil {
				return
			}
		case <-s.done:
			return
		case <-h.ctx.Done():
			return
		}
	}
}

// notifyLoop sends count numbered notifications, interval apart.
func (h *handler) notifyLoop(s *session, count int, interval time.Duration) {
	var t *time.Timer
	for i := range count {
		if i > 0 && interval > 0 {
			if t == nil {
				t = time.NewTimer(interval)
				defer t.Stop()
			} else {
				t.Reset(interval)
			}
			select {
			case <-t.C:
			case <-s.done:
				return
			case <-h.ctx.Done():
				return
			}
		}
		select {
		case <-s.done:
			return
		case <-h.ctx.Done():
			return
		default:
		}
		if h.sendSeq(s) != nil {
			return
		}
	}
}

// beginClose stops new work and starts ending every session. It is
// idempotent and does not block.
func (h *handler) beginClose() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closing = true
		h.mu.Unlock()
		h.cancel()
	})
	h.closeSessions()
}

// closeSessions ends every session the SDK knows, in the background.
func (h *handler) closeSessions() {
	for ss := range h.server.Sessions() {
		go ss.Close() // waits for in-flight requests, which h.ctx aborts
	}
}

// waitClosed waits up to d for every session and every handler goroutine to
// end. It reports whether they did.
func (h *handler) waitClosed(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		return false
	}
	// Sessions created by requests that were in flight when closing began.
	h.closeSessions()
	return true
}

// Close ends every session, aborts running tools and answers later requests
// with 503. It waits (a bounded time) for sessions to end. It is idempotent
// and always returns nil.
func (h *handler) Close() error {
	h.beginClose()
	h.waitClosed(closeWaitTimeout)
	return nil
}
