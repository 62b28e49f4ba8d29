package mcptest

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Misrouter plants the fault of a server that shares one notification
// channel per session: with several calls of a session in flight, some of
// one call's progress notifications are written on another call's
// response stream. Its tools/call handler answers every call with an SSE
// stream of Steps notifications/progress (1..Steps, total Steps; Gap
// apart) and then the response. Every Every-th notification of a call is
// written instead on the stream of another call of the same session that
// is still in flight (its stream open, its response not yet written), so
// the client reads it before that call's response; when no other call is
// in flight it goes on the call's own stream. Planted counts the
// notifications so misrouted, Calls the calls answered. Safe for
// concurrent use.
type Misrouter struct {
	Steps int           // progress notifications per call (default 4)
	Every int           // misroute every Every-th one (0: none)
	Gap   time.Duration // between notifications (0: none)

	mu      sync.Mutex
	live    map[string][]*mrCall // per session: calls in flight
	planted atomic.Int64
	calls   atomic.Int64
	seq     atomic.Int64
}

type mrCall struct {
	mu   sync.Mutex // guards w: another call's handler may write on it
	w    *Writer
	done bool // the response is written: nothing more may go on w
}

// Install makes m the tools/call handler of s.
func (m *Misrouter) Install(s *Server) {
	s.Handle(Key{"POST", Any, "tools/call", Any}, m.handle)
}

// Planted returns how many notifications went on another call's stream.
func (m *Misrouter) Planted() int64 { return m.planted.Load() }

// Calls returns how many calls were answered.
func (m *Misrouter) Calls() int64 { return m.calls.Load() }

func (m *Misrouter) handle(w *Writer, r *Request) {
	steps := m.Steps
	if steps <= 0 {
		steps = 4
	}
	tok := r.ProgressToken()
	c := &mrCall{w: w}
	c.mu.Lock()
	w.StartSSE()
	w.Flush()
	c.mu.Unlock()
	m.mu.Lock()
	if m.live == nil {
		m.live = map[string][]*mrCall{}
	}
	m.live[r.Session] = append(m.live[r.Session], c)
	m.mu.Unlock()
	for k := 1; k <= steps; k++ {
		if k > 1 && m.Gap > 0 {
			time.Sleep(m.Gap) // pacing, so calls of a session overlap
		}
		if tok == "" {
			continue
		}
		ev := Event{ID: strconv.FormatInt(m.seq.Add(1), 10), Data: Progress(tok, float64(k), float64(steps))}
		if m.Every > 0 && k%m.Every == 0 && m.misroute(r.Session, c, ev) {
			continue
		}
		c.mu.Lock()
		w.Events(ev)
		c.mu.Unlock()
	}
	m.mu.Lock()
	calls := m.live[r.Session]
	for i, o := range calls {
		if o == c {
			m.live[r.Session] = append(calls[:i:i], calls[i+1:]...)
			break
		}
	}
	m.mu.Unlock()
	c.mu.Lock()
	w.Events(Event{ID: strconv.FormatInt(m.seq.Add(1), 10), Data: Response(r.ID, map[string]any{"content": []any{}})})
	c.done = true
	c.mu.Unlock()
	m.calls.Add(1)
}

// misroute writes ev on the stream of another call of session sid still
// in flight; false when there is none.
func (m *Misrouter) misroute(sid string, self *mrCall, ev Event) bool {
	m.mu.Lock()
	var other *mrCall
	for _, o := range m.live[sid] {
		if o != self {
			other = o
			break
		}
	}
	m.mu.Unlock()
	if other == nil {
		return false
	}
	other.mu.Lock()
	defer other.mu.Unlock()
	if other.done {
		return false
	}
	other.w.Events(ev)
	m.planted.Add(1)
	return true
}
