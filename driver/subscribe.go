package driver

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// Resource subscriptions (2025-11-25 server resources §Subscriptions):
// resources/subscribe, a change the client makes (an op with Changes set,
// such as the reference server's touch tool), and the
// notifications/resources/updated that must follow.
//
// Latency of an update is measured on the client: from the moment it sent
// the request that changes the resource (the op's attempt, just before its
// bytes go out) to the moment the notification arrived, on whichever
// stream of the session it came (legacy servers send it on the GET
// stream). Each notification is matched with the session's oldest pending
// change of its resource, one notification per change (as the SDKs send
// them); a notification when none is pending is unmatched (a change made
// by another session or by the server itself), and a change still pending
// when the session closes is unnotified (a server that coalesces several
// changes into one notification shows there). Only the session's own
// changes are timed: when sessions share a resource, a notification of
// another session's change can be matched with this session's pending
// one, so give each session its own resource to time them exactly.

// UpdateKind says what a ResourceUpdate reports.
type UpdateKind uint8

const (
	// UpdateChange: the session sent a change of a resource it is
	// subscribed to; a notification must follow.
	UpdateChange UpdateKind = iota
	// UpdateNotified: a notification matched the session's oldest pending
	// change of its resource.
	UpdateNotified
	// UpdateUnmatched: a notification of a resource the session had no
	// pending change of.
	UpdateUnmatched
	// UpdateUnnotified: a change was still pending (no notification) when
	// the session closed, after UpdateGrace.
	UpdateUnnotified
)

// ResourceUpdate is one event of a session's subscriptions, handed to
// Config.OnResourceUpdate.
type ResourceUpdate struct {
	Kind UpdateKind
	// Changed is when the change was sent; zero for UpdateUnmatched.
	Changed time.Time
	// At is when the notification arrived (UpdateNotified,
	// UpdateUnmatched).
	At time.Time
}

// Latency is At − Changed: from the change's send to its notification
// (UpdateNotified only; 0 otherwise).
func (u ResourceUpdate) Latency() time.Duration {
	if u.Kind != UpdateNotified {
		return 0
	}
	return u.At.Sub(u.Changed)
}

// UpdateGrace bounds how long Close waits for the notifications of the
// session's pending changes before it stops the GET stream; those still
// pending then are UpdateUnnotified.
const UpdateGrace = 500 * time.Millisecond

// subscriptions is the session's subscription state, shared by its lanes
// and its GET stream.
type subscriptions struct {
	mu      sync.Mutex
	uris    map[string]*subState
	pending int           // pending changes over every resource
	settled chan struct{} // signalled when pending drops
}

type subState struct {
	subscribed bool
	pending    []time.Time // sends of changes not yet notified, oldest first
}

// subscribeURI returns the uri of a resources/subscribe or
// resources/unsubscribe request's params ("" for other methods).
func subscribeURI(method string, params []byte) string {
	if method != "resources/subscribe" && method != "resources/unsubscribe" {
		return ""
	}
	var uri string
	if raw := jsonrpc.Field(params, "uri"); len(raw) > 0 {
		json.Unmarshal(raw, &uri)
	}
	return uri
}

// opSubscribed marks the subscription a successful resources/subscribe or
// resources/unsubscribe op made.
func (s *Lane) opSubscribed(op *Op) {
	if op.subURI != "" {
		s.subscribed(op.subURI, op.Method == "resources/subscribe")
	}
}

// settleOp ends an op that changes or (un)subscribes a resource: a failed
// or cancelled change is due no notification; a subscription that
// succeeded is marked.
func (s *Lane) settleOp(op *Op, res *Result, changed time.Time) {
	if res.Err != nil || res.Cancelled {
		if !changed.IsZero() {
			s.changeFailed(op.Changes, changed)
		}
		return
	}
	s.opSubscribed(op)
}

func (s *Lane) onUpdate(u ResourceUpdate) {
	if f := s.cfg.OnResourceUpdate; f != nil {
		f(u)
	}
}

// state returns uri's state, creating it (s.mu held).
func (b *subscriptions) state(uri string) *subState {
	if b.uris == nil {
		b.uris = map[string]*subState{}
		b.settled = make(chan struct{}, 1)
	}
	st := b.uris[uri]
	if st == nil {
		st = &subState{}
		b.uris[uri] = st
	}
	return st
}

// noteChange records that a change of op.Changes is being sent at t; it
// returns t when the session is subscribed to that resource (a
// notification must follow), else zero.
func (s *Lane) noteChange(op *Op, t time.Time) time.Time {
	if op.Changes == "" {
		return time.Time{}
	}
	b := &s.subs
	b.mu.Lock()
	st := b.state(op.Changes)
	if !st.subscribed {
		b.mu.Unlock()
		return time.Time{}
	}
	st.pending = append(st.pending, t)
	b.pending++
	b.mu.Unlock()
	s.onUpdate(ResourceUpdate{Kind: UpdateChange, Changed: t})
	return t
}

// changeFailed forgets the pending change sent at t: the op that made it
// failed, so no notification is due. (A notification that came anyway
// already matched it.)
func (s *Lane) changeFailed(uri string, t time.Time) {
	b := &s.subs
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.uris[uri]
	if st == nil {
		return
	}
	for i, p := range st.pending {
		if p.Equal(t) {
			st.pending = append(st.pending[:i], st.pending[i+1:]...)
			b.pending--
			return
		}
	}
}

// subscribed marks the session subscribed to uri (resources/subscribe
// succeeded) or not (resources/unsubscribe).
func (s *Lane) subscribed(uri string, on bool) {
	b := &s.subs
	b.mu.Lock()
	b.state(uri).subscribed = on
	b.mu.Unlock()
}

// forgetSubscriptions clears the subscribed marks: the server lost the
// session (a re-initialize). Pending changes stay pending.
func (s *Lane) forgetSubscriptions() {
	b := &s.subs
	b.mu.Lock()
	for _, st := range b.uris {
		st.subscribed = false
	}
	b.mu.Unlock()
}

// resourceUpdated judges a notifications/resources/updated (its params)
// against the session's pending changes of its resource.
func (s *Lane) resourceUpdated(params []byte) {
	at := time.Now()
	var uri string
	if raw := jsonrpc.Field(params, "uri"); len(raw) > 0 {
		json.Unmarshal(raw, &uri)
	}
	b := &s.subs
	b.mu.Lock()
	st := b.uris[uri]
	if st == nil || len(st.pending) == 0 {
		b.mu.Unlock()
		s.onUpdate(ResourceUpdate{Kind: UpdateUnmatched, At: at})
		return
	}
	u := ResourceUpdate{Kind: UpdateNotified, Changed: st.pending[0], At: at}
	b.pending--
	st.pending = st.pending[1:]
	select {
	case b.settled <- struct{}{}:
	default:
	}
	b.mu.Unlock()
	s.onUpdate(u)
}

// settleUpdates waits up to UpdateGrace for the notifications of pending
// changes, then reports those still pending as UpdateUnnotified (Close
// calls it before it stops the GET stream).
func (s *Lane) settleUpdates() {
	b := &s.subs
	var t *time.Timer
	for {
		b.mu.Lock()
		n, ch := b.pending, b.settled
		b.mu.Unlock()
		if n == 0 {
			return
		}
		if t == nil {
			t = time.NewTimer(UpdateGrace)
			defer t.Stop()
		}
		select {
		case <-ch:
			continue
		case <-t.C:
		}
		break
	}
	b.mu.Lock()
	var left []time.Time
	for _, st := range b.uris {
		left = append(left, st.pending...)
		st.pending = nil
	}
	b.pending = 0
	b.mu.Unlock()
	for _, c := range left {
		s.onUpdate(ResourceUpdate{Kind: UpdateUnnotified, Changed: c})
	}
}
