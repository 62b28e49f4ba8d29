package refserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// Honouring cancellation (2025-11-25 cancellation §Behavior
// Requirements): on notifications/cancelled the receiver SHOULD stop
// processing the request and not send a response for it. The SDK stops
// the tool (its context is cancelled, and the tools here return when it
// is) but then still writes a response for the request — an error result
// "context canceled". So the server notes each tools/call in flight on a
// session (the stateful modes, where notifications/cancelled can reach
// it) and, when a notifications/cancelled names one, mutes that call's
// response stream before the SDK sees the notification: nothing the SDK
// writes on it afterwards reaches the client. What was written before is
// the race the spec allows.

// inflightCalls are the tools/call requests in flight, per session.
type inflightCalls struct {
	mu    sync.Mutex
	calls map[callKey]*mutedWriter
	// early are cancels that named a call whose POST was not handled yet:
	// sent on another connection after the call, a cancel can overtake it
	// on a loaded server. The call, when it comes, is cancelled at once.
	// The newest maxEarlyCancels are kept (a cancel for a call already
	// answered names one that never comes): ring holds them in arrival
	// order, next is the oldest once it is full.
	early map[callKey]struct{}
	ring  []callKey
	next  int
}

// rememberEarly keeps a cancel for a call not handled yet (c.mu held).
func (c *inflightCalls) rememberEarly(k callKey) {
	if c.early == nil {
		c.early = map[callKey]struct{}{}
	}
	if len(c.ring) < maxEarlyCancels {
		c.ring = append(c.ring, k)
	} else {
		delete(c.early, c.ring[c.next])
		c.ring[c.next] = k
		c.next = (c.next + 1) % maxEarlyCancels
	}
	c.early[k] = struct{}{}
}

// maxEarlyCancels bounds inflightCalls.early.
const maxEarlyCancels = 1024

type callKey struct{ session, id string }

// peekRequest reads a POST body (giving it back to r) and returns its
// JSON-RPC method, id and, for notifications/cancelled, the requestId (raw
// JSON); empty unless it is a tools/call or a notifications/cancelled. A
// body of known length is read once into one buffer; others only up to
// maxPeek.
func peekRequest(r *http.Request) (method string, id, cancelled []byte) {
	var head []byte
	if n := r.ContentLength; n > 0 && n <= maxPeek {
		head = make([]byte, n)
		if _, err := io.ReadFull(r.Body, head); err != nil {
			r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
			return "", nil, nil
		}
		r.Body = &bodyBytes{Reader: bytes.NewReader(head), c: r.Body}
	} else {
		var err error
		head, err = io.ReadAll(io.LimitReader(r.Body, maxPeek))
		r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		if err != nil {
			return "", nil, nil
		}
	}
	if !bytes.Contains(head, []byte(`"tools/call"`)) && !bytes.Contains(head, []byte(`"notifications/cancelled"`)) {
		return "", nil, nil
	}
	switch string(member(head, "method")) {
	case `"tools/call"`:
		return "tools/call", compact(member(head, "id")), nil
	case `"notifications/cancelled"`:
		return "notifications/cancelled", nil, compact(member(member(head, "params"), "requestId"))
	}
	return "", nil, nil
}

// member returns the raw value of key among the members of the JSON
// object obj (not nested ones), nil when absent or obj is not an object
// this scanner can follow (keys with escapes are not matched; the SDK
// validates the JSON itself).
func member(obj []byte, key string) []byte {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	for i = skipSpace(obj, i+1); i < len(obj) && obj[i] == '"'; {
		ke := skipValue(obj, i)
		if ke < 0 {
			return nil
		}
		k := obj[i+1 : ke-1]
		i = skipSpace(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		vs := skipSpace(obj, i+1)
		ve := skipValue(obj, vs)
		if ve < 0 {
			return nil
		}
		if string(k) == key {
			return obj[vs:ve]
		}
		i = skipSpace(obj, ve)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipValue returns the index after the JSON value at b[i] (a string,
// an object or array with its nesting, or a scalar), -1 when it is cut.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i
			}
		case ',', ' ', '\t', '\r', '\n', ':':
			if depth == 0 {
				return i
			}
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}

// bodyBytes is a request body read in full.
type bodyBytes struct {
	*bytes.Reader
	c io.Closer
}

func (b *bodyBytes) Close() error { return b.c.Close() }

// compact returns raw without insignificant whitespace (as it is when it
// has none), nil for none.
func compact(raw json.RawMessage) []byte {
	if len(raw) == 0 || !bytes.ContainsAny(raw, " \t\r\n") {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// watchCancel prepares a stateful-mode POST: a tools/call gets a writer
// that a later cancel can mute (unwatch unregisters it); a
// notifications/cancelled mutes the call it names, before the SDK
// handles it. Other requests pass as they are (mw nil).
func (h *handler) watchCancel(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *mutedWriter) {
	sid := r.Header.Get("Mcp-Session-Id")
	method, id, reqID := peekRequest(r)
	switch {
	case method == "tools/call" && id != nil:
		mw := &mutedWriter{ResponseWriter: w, h: h, key: callKey{sid, string(id)}}
		c := &h.calls
		c.mu.Lock()
		if c.calls == nil {
			c.calls = map[callKey]*mutedWriter{}
		}
		c.calls[mw.key] = mw
		if _, ok := c.early[mw.key]; ok { // its cancel came first
			delete(c.early, mw.key)
			h.cancels.Add(1)
			mw.muted = true
		}
		c.mu.Unlock()
		return mw, mw
	case method == "notifications/cancelled" && reqID != nil:
		c := &h.calls
		key := callKey{sid, string(reqID)}
		c.mu.Lock()
		mw := c.calls[key]
		if mw == nil {
			c.rememberEarly(key)
		}
		c.mu.Unlock()
		if mw != nil {
			h.cancels.Add(1)
			mw.mu.Lock()
			mw.muted = true
			mw.mu.Unlock()
		}
	}
	return w, nil
}

// unwatch forgets a call once its POST is answered (mw nil: nothing).
func (h *handler) unwatch(mw *mutedWriter) {
	if mw == nil {
		return
	}
	c := &h.calls
	c.mu.Lock()
	if c.calls[mw.key] == mw {
		delete(c.calls, mw.key)
	}
	c.mu.Unlock()
}

// mutedWriter passes a call's answer through until the call is cancelled,
// then drops every write.
type mutedWriter struct {
	http.ResponseWriter
	h     *handler
	key   callKey
	mu    sync.Mutex
	muted bool
}

func (w *mutedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.muted {
		w.h.muted.Add(1)
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher (the SDK flushes every event).
func (w *mutedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *mutedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
