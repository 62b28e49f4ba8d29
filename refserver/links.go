package refserver

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Stream links (Options.StreamLinks): SEP-1335, a draft the 2025-11-25
// specification did not adopt (it chose priming events), which servers
// built on it still speak. Every SSE stream's response carries
//
//	Link: </mcp?stream=ID>; rel="stream"
//
// and a GET to that URL resumes the stream: from its Last-Event-ID when
// the client sends one (it must be one of that stream's ids), from the
// stream's start otherwise — so a stream cut before its first event can be
// resumed. The GET carries the session's Mcp-Session-Id like any other.
// The server replays from its event store through the SDK, exactly as a
// resume at the endpoint.

// streamParam is the query parameter of a stream link: the SDK's stream
// id, empty for the session's standalone GET stream.
const streamParam = "stream"

// linkSlot receives the id of the stream the SDK opens for a POST (the
// event store's Open sees it in the request's context) before the
// response headers are written.
type linkSlot struct {
	mu      sync.Mutex
	session string
	stream  string
	set     bool
}

type linkSlotKey struct{}

// noteStream records a stream opened under ctx (called by the event
// store's Open).
func noteStream(ctx context.Context, sessionID, streamID string) {
	if sl, ok := ctx.Value(linkSlotKey{}).(*linkSlot); ok {
		sl.mu.Lock()
		sl.session, sl.stream, sl.set = sessionID, streamID, true
		sl.mu.Unlock()
	}
}

// withLinks prepares a request of the StreamLinks mode: a GET at a stream
// link becomes the resume the SDK serves (nil when it was answered with an
// error), and the response writer adds the Link header to an SSE answer.
func (h *handler) withLinks(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	lw := &linkWriter{ResponseWriter: w, h: h, path: r.URL.Path}
	switch r.Method {
	case http.MethodGet:
		if r.URL.Query().Has(streamParam) {
			if r = h.linkResume(w, r); r == nil {
				return nil, nil
			}
		}
		lw.session = r.Header.Get("Mcp-Session-Id")
		if lid := r.Header.Get("Last-Event-ID"); lid != "" {
			lw.stream, _, _ = strings.Cut(lid, "_")
		}
		lw.known = true
	case http.MethodPost:
		lw.slot = &linkSlot{}
		r = r.WithContext(context.WithValue(r.Context(), linkSlotKey{}, lw.slot))
	}
	return lw, r
}

// linkResume turns a GET at a stream link into the SDK's resume: the
// Last-Event-ID it carries (checked to be the stream's), or the stream's
// start (after its priming event, index 0). It answers 400 itself and
// returns nil when the resume cannot be served.
func (h *handler) linkResume(w http.ResponseWriter, r *http.Request) *http.Request {
	stream := r.URL.Query().Get(streamParam)
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		writeJSONRPCError(w, http.StatusBadRequest, codeInvalidRequest, "Bad Request: a stream link resume needs the session's Mcp-Session-Id header")
		return nil
	}
	r = r.Clone(r.Context())
	r.URL.RawQuery = ""
	if lid := r.Header.Get("Last-Event-ID"); lid != "" {
		if s, _, _ := strings.Cut(lid, "_"); s != stream {
			writeJSONRPCError(w, http.StatusBadRequest, codeInvalidRequest, "Bad Request: Last-Event-ID "+lid+" is not an event of stream "+stream+" (the link's stream parameter)")
			return nil
		}
		h.linkResumes.Add(1)
		return r
	}
	if stream == "" {
		h.linkResumes.Add(1)
		return r // the standalone stream: replayed from its oldest retained event (freshGET)
	}
	if !h.store.primed(sid, stream) {
		writeJSONRPCError(w, http.StatusBadRequest, codeInvalidRequest, "Bad Request: stream "+stream+" cannot be replayed from its start (unknown, or its events were evicted)")
		return nil
	}
	r.Header.Set("Last-Event-ID", stream+"_0") // after the priming event
	h.linkResumes.Add(1)
	return r
}

// linkWriter adds the Link header to a 200 text/event-stream answer whose
// stream can be resumed at the link: a stream that opened with a priming
// event (a POST's) or the standalone stream.
type linkWriter struct {
	http.ResponseWriter
	h       *handler
	path    string
	slot    *linkSlot // POST: the stream the SDK opened
	session string    // GET: the stream the request reads
	stream  string
	known   bool
	started bool
}

func (w *linkWriter) WriteHeader(code int) {
	if w.started {
		return
	}
	w.started = true
	if code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		if target, ok := w.target(); ok {
			w.Header().Set("Link", "<"+target+`>; rel="stream"`)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// target returns the stream's link, if it can be resumed there.
func (w *linkWriter) target() (string, bool) {
	session, stream, ok := w.session, w.stream, w.known
	if w.slot != nil {
		w.slot.mu.Lock()
		session, stream, ok = w.slot.session, w.slot.stream, w.slot.set
		w.slot.mu.Unlock()
	}
	if !ok || session == "" || (stream != "" && !w.h.store.primed(session, stream)) {
		return "", false
	}
	return w.path + "?" + streamParam + "=" + url.QueryEscape(stream), true
}

func (w *linkWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher (the SDK flushes every event).
func (w *linkWriter) Flush() {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *linkWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
