package mcptest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// CancelRunOn plants the fault of a server whose tool runs on after it
// acknowledged notifications/cancelled, as server-everything's
// trigger-long-running-operation does: its tools/call handler answers
// over SSE (a priming event with an id first) and sends progress 1, 2, …
// every Every; a cancel for the call is acknowledged (202) and the tool
// goes on: when Resume says so (a test's signal that the client read
// everything it had, with keep-alive comments meanwhile; nil: at once),
// one progress (the step under way) and After more, numbered on, and the
// stream ends without a response. Planted counts those After messages of
// each cancelled call; Cancels the cancels that named a call in flight. A
// call not cancelled ends with its response after Steps progress. Calls
// are told apart by session and request id. Safe for concurrent use.
type CancelRunOn struct {
	Steps int           // progress notifications of a call not cancelled
	Every time.Duration // between them
	After int           // progress sent after a cancel, beyond the step under way
	// Resume, when set, is received from once per cancelled call before
	// the After messages are sent.
	Resume chan struct{}

	mu      sync.Mutex
	waiting map[string]chan struct{}
	planted atomic.Int64
	cancels atomic.Int64
}

// Install makes c the tools/call and notifications/cancelled handler of s.
func (c *CancelRunOn) Install(s *Server) {
	s.Handle(Key{"POST", Any, "tools/call", Any}, c.call)
	s.Handle(Key{"POST", Any, "notifications/cancelled", Any}, c.cancelled)
}

// Planted returns the progress messages written after a cancel beyond
// the step under way.
func (c *CancelRunOn) Planted() int64 { return c.planted.Load() }

// Cancels returns the notifications/cancelled that named a call in flight.
func (c *CancelRunOn) Cancels() int64 { return c.cancels.Load() }

func (c *CancelRunOn) cancelled(w *Writer, r *Request) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	json.Unmarshal(r.Params, &p)
	k := r.Session + "\x00" + string(p.RequestID)
	c.mu.Lock()
	ch := c.waiting[k]
	delete(c.waiting, k)
	c.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush() // the 202 is out before the tool hears of the cancel
	}
	if ch != nil {
		c.cancels.Add(1)
		close(ch)
	}
}

func (c *CancelRunOn) call(w *Writer, r *Request) {
	ch := make(chan struct{})
	key := r.Session + "\x00" + string(r.ID)
	c.mu.Lock()
	if c.waiting == nil {
		c.waiting = map[string]chan struct{}{}
	}
	c.waiting[key] = ch
	c.mu.Unlock()
	tok := r.ProgressToken()
	w.Events(Event{ID: "0", EmptyData: true})
	t := time.NewTicker(c.Every)
	defer t.Stop()
	for k := 1; ; k++ {
		select {
		case <-r.Ctx.Done():
			return
		case <-ch:
			// Acknowledged: the tool runs on (the first progress is the
			// step that was under way).
			if c.Resume != nil {
				// Keep-alive comments meanwhile: each one has the client
				// read again, and see that it has read everything.
				alive := time.NewTicker(5 * time.Millisecond)
				defer alive.Stop()
			wait:
				for {
					select {
					case <-c.Resume:
						break wait
					case <-alive.C:
						w.Events(Event{Comment: "working"})
					case <-r.Ctx.Done():
						return
					}
				}
			}
			w.Events(Event{ID: strconv.Itoa(k), Data: Progress(tok, float64(k), 0)})
			for j := 1; j <= c.After; j++ {
				w.Events(Event{ID: strconv.Itoa(k + j), Data: Progress(tok, float64(k+j), 0)})
				c.planted.Add(1)
			}
			return // no response: the stream ends without it
		case <-t.C:
		}
		if k > c.Steps {
			w.Events(Event{ID: strconv.Itoa(k), Data: Response(r.ID, map[string]any{"content": []any{}})})
			c.mu.Lock()
			delete(c.waiting, key)
			c.mu.Unlock()
			return
		}
		w.Events(Event{ID: strconv.Itoa(k), Data: Progress(tok, float64(k), float64(c.Steps))})
	}
}
