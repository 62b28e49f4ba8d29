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
}

type callKey struct{ session, id string }

// peekRequest reads the head of a POST body (giving it back to r) and
// returns its JSON-RPC method, id and, for notifications/cancelled, the
// requestId (raw JSON, compacted); empty when it is something else.
func peekRequest(r *http.Request) (method string, id, cancelled []byte) {
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeek))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || !(bytes.Contains(head, []byte(`"tools/call"`)) || bytes.Contains(head, []byte(`"notifications/cancelled"`))) {
		return "", nil, nil
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(head, &m) != nil {
		return "", nil, nil
	}
	return m.Method, compact(m.ID), compact(m.Params.RequestID)
}

func compact(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// watchCancel prepares a stateful-mode POST: a tools/call gets a writer
// that a later cancel can mute (done unregisters it); a
// notifications/cancelled mutes the call it names, before the SDK
// handles it. Other requests pass as they are.
func (h *handler) watchCancel(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	sid := r.Header.Get("Mcp-Session-Id")
	method, id, reqID := peekRequest(r)
	switch {
	case method == "tools/call" && id != nil:
		k := callKey{sid, string(id)}
		mw := &mutedWriter{ResponseWriter: w, h: h}
		c := &h.calls
		c.mu.Lock()
		if c.calls == nil {
			c.calls = map[callKey]*mutedWriter{}
		}
		c.calls[k] = mw
		c.mu.Unlock()
		return mw, func() {
			c.mu.Lock()
			if c.calls[k] == mw {
				delete(c.calls, k)
			}
			c.mu.Unlock()
		}
	case method == "notifications/cancelled" && reqID != nil:
		c := &h.calls
		c.mu.Lock()
		mw := c.calls[callKey{sid, string(reqID)}]
		c.mu.Unlock()
		if mw != nil {
			h.cancels.Add(1)
			mw.mu.Lock()
			mw.muted = true
			mw.mu.Unlock()
		}
	}
	return w, func() {}
}

// mutedWriter passes a call's answer through until the call is cancelled,
// then drops every write.
type mutedWriter struct {
	http.ResponseWriter
	h     *handler
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
