package mcptest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// CancelIgnorer plants the fault of a server that ignores
// notifications/cancelled: its tools/call handler answers every call over
// SSE (a priming event first) after Work, unless a cancel for the call
// arrives first — then, Late after the cancel was acknowledged (202), it
// writes a progress notification (when the call has a progress token) and
// the response anyway. Planted counts the messages so written after a
// cancel, Calls the calls answered, Cancels the cancels received. Calls
// are told apart by session id and request id: the default Server names
// every session s1, so drive it with one session (lanes share its ids).
// Safe for concurrent use.
type CancelIgnorer struct {
	Work time.Duration // how long a call takes when not cancelled
	Late time.Duration // how long after the cancel it answers anyway

	mu      sync.Mutex
	waiting map[string]chan struct{} // session + request id → closed by its cancel
	planted atomic.Int64
	calls   atomic.Int64
	cancels atomic.Int64
	seq     atomic.Int64
}

// Install makes c the tools/call and notifications/cancelled handler of s.
func (c *CancelIgnorer) Install(s *Server) {
	s.Handle(Key{"POST", Any, "tools/call", Any}, c.call)
	s.Handle(Key{"POST", Any, "notifications/cancelled", Any}, c.cancelled)
}

// Planted returns the messages written after a cancel.
func (c *CancelIgnorer) Planted() int64 { return c.planted.Load() }

// Calls returns the calls answered.
func (c *CancelIgnorer) Calls() int64 { return c.calls.Load() }

// Cancels returns the notifications/cancelled that named a call in flight.
func (c *CancelIgnorer) Cancels() int64 { return c.cancels.Load() }

func (c *CancelIgnorer) key(session string, id json.RawMessage) string {
	return session + "\x00" + string(id)
}

func (c *CancelIgnorer) cancelled(w *Writer, r *Request) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	json.Unmarshal(r.Params, &p)
	c.mu.Lock()
	ch := c.waiting[c.key(r.Session, p.RequestID)]
	delete(c.waiting, c.key(r.Session, p.RequestID))
	c.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	if ch != nil {
		c.cancels.Add(1)
		close(ch) // acknowledged first: what the call writes now is after it
	}
}

func (c *CancelIgnorer) call(w *Writer, r *Request) {
	ch := make(chan struct{})
	k := c.key(r.Session, r.ID)
	c.mu.Lock()
	if c.waiting == nil {
		c.waiting = map[string]chan struct{}{}
	}
	c.waiting[k] = ch
	c.mu.Unlock()
	w.Events(Event{ID: c.id(), EmptyData: true})
	t := time.NewTimer(c.Work)
	defer t.Stop()
	var evs []Event
	select {
	case <-t.C:
		c.mu.Lock()
		delete(c.waiting, k)
		c.mu.Unlock()
	case <-ch:
		time.Sleep(c.Late) // the server's late answer
		if tok := r.ProgressToken(); tok != "" {
			evs = append(evs, Event{ID: c.id(), Data: Progress(tok, 1, 1)})
		}
		c.planted.Add(int64(len(evs) + 1))
	case <-r.Ctx.Done():
		return
	}
	w.Events(append(evs, Event{ID: c.id(), Data: Response(r.ID, map[string]any{"content": []any{}})})...)
	c.calls.Add(1)
}

func (c *CancelIgnorer) id() string { return strconv.FormatInt(c.seq.Add(1), 10) }
