package driver

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// Mailboxes: how a message finds the request it belongs to. Each lane's
// request in flight has a mailbox (inflight) registered with the session;
// a progress notification or a response that arrives on another stream
// (the GET stream, another lane's POST stream) is delivered there, judged
// misrouted in the ledger of the request it belongs to, and not lost. A
// request answered before its progress keeps its mailbox among the late
// ones (lateBoxes) until Result.Settle (late.go).

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
func (s *Lane) begin(c *call) {
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
func (s *Lane) deliver(m jsonrpc.Message) bool {
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
func (s *Lane) toSibling(m jsonrpc.Message) (id int64, ok bool) {
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

// lateBoxes are the mailboxes of a session's requests answered before all
// their expected progress came, shared by its lanes.
type lateBoxes struct {
	n     atomic.Int32 // len(boxes): a message checks them only when there are some
	mu    sync.Mutex
	boxes []*inflight
	empty chan struct{} // closed when the last box goes (nil: none yet)
	due   time.Time     // the latest box's due
}

func (l *lateBoxes) add(mb *inflight, due time.Time) {
	l.mu.Lock()
	if len(l.boxes) == 0 {
		l.empty = make(chan struct{})
	}
	l.boxes = append(l.boxes, mb)
	l.due = due
	l.n.Store(int32(len(l.boxes)))
	l.mu.Unlock()
}

func (l *lateBoxes) remove(mb *inflight) {
	l.mu.Lock()
	if i := slices.Index(l.boxes, mb); i >= 0 {
		l.boxes = slices.Delete(l.boxes, i, i+1)
		if len(l.boxes) == 0 {
			close(l.empty)
		}
	}
	l.n.Store(int32(len(l.boxes)))
	l.mu.Unlock()
}

// settled waits until the session's pending Results are settled (their
// progress may still come on the GET stream, which Close stops), at most
// a little past the latest one's due.
func (l *lateBoxes) settled() {
	l.mu.Lock()
	empty, due := l.empty, l.due
	n := len(l.boxes)
	l.mu.Unlock()
	if n == 0 {
		return
	}
	t := time.NewTimer(time.Until(due) + 50*time.Millisecond)
	defer t.Stop()
	select {
	case <-empty:
	case <-t.C:
	}
}

// take offers m to the mailboxes (see inflight.take).
func (l *lateBoxes) take(m jsonrpc.Message, sibling bool) (id int64, ok bool) {
	if l.n.Load() == 0 {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, mb := range l.boxes {
		if id, ok := mb.take(m, sibling); ok {
			return id, true
		}
	}
	return 0, false
}
