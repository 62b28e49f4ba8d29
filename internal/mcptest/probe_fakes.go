package mcptest

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProbeFaults are the transport faults a ProbeFake can plant, each one a
// fault seen in real servers. The zero value plants none.
type ProbeFaults struct {
	IgnoreOrigin      bool // serve a foreign Origin instead of answering 403
	AnyContentType    bool // serve a POST whose Content-Type is not application/json (instead of 415)
	AnyVersion        bool // serve an unsupported MCP-Protocol-Version (instead of 400)
	NoSessionAccepted bool // serve a POST without Mcp-Session-Id (instead of 400)
	UnknownSession400 bool // 400 where an unknown or deleted session needs 404
	DeletedAccepted   bool // a deleted session keeps working; DELETE it again gets 204
	BadSessionID      bool // session ids contain a space
	NoRetryOnClose    bool // close a stream before its response without a retry field
	StreamStaysOpen   bool // an SSE answer stays open after its response
	ResumeDuplicates  bool // a replay sends its first message twice
	ResumeForeign     bool // a replay ends with a message of another request
	ResumeNeverEnds   bool // a replay of a finished stream stays open
	UnknownLastID404  bool // 404 (session gone) to an unknown Last-Event-ID
	SecondGETError    bool // 500 to a second concurrent GET (instead of 409)
	PUTAccepted       bool // serve PUT as POST (instead of 405)
	// WellFormedAccepted serves an unknown session id shaped like the fake's
	// own ("sess-" and digits) as a live session: ids are checked by their
	// format only, as mcp-go's default session id manager does.
	WellFormedAccepted bool
	// ListenEndsAtOnce (Modern): subscriptions/listen acknowledges what was
	// asked, then answers and ends the stream at once.
	ListenEndsAtOnce bool
	// ListenAcksNothing (Modern): subscriptions/listen acknowledges none of
	// the types asked for ("notifications":{}), then answers and ends the
	// stream, as mcp-go does when it has nothing to deliver.
	ListenAcksNothing bool
	// IgnoreHost serves a request whose Host is not a loopback name
	// (instead of 403): no DNS rebinding protection by Host.
	IgnoreHost bool
	// RefuseSameOrigin answers 403 to every request with an Origin, the
	// server's own included: it refuses every browser client.
	RefuseSameOrigin bool
	// CrossTalk sends the progress of a call with a progressToken on the
	// stream of another call in flight at the same time, as mcp-go does:
	// calls are paired as they come (a call with no partner within a
	// second runs alone, on its own stream) and each one's progress goes
	// on its partner's stream; the responses stay on their own.
	CrossTalk bool
	// PingResult answers ping with {"ok":true} instead of {}.
	PingResult bool
}

// ProbeFake is a small 2025-11-25 Streamable HTTP server that follows the
// transport's rules (sessions, SSE answers with a priming event and event
// ids, resumption from a memory store, SSE polling with retry hints, a GET
// stream, DELETE, Origin validation), so that a probe of it finds nothing
// to report until Faults plant one. Set its fields before serving; it is
// safe for concurrent use.
//
// It lists one tool. Named "progress" (the default) it is the reference
// server's progress{count, close_after, retry_ms}; under another name it is
// a read-only tool without arguments. A call with a progressToken answers
// SSE: a priming event, count progress notifications (3 by default), the
// response; with close_after > 0 the server closes the stream after that
// many notifications, sending a retry field of retry_ms first, and the rest
// is replayed to GET with Last-Event-ID. Everything a call sends is stored
// when it starts, so replays are exact and immediate.
type ProbeFake struct {
	Faults ProbeFaults
	// Stateless serves without sessions: no Mcp-Session-Id, and GET and
	// DELETE answer 405. SSE answers still carry event ids.
	Stateless bool
	// Tool is the name of the listed tool ("" means "progress").
	Tool string
	// ReadOnly marks the tool annotations.readOnlyHint; a tool not named
	// "progress" that is not read-only must never be called by a probe.
	ReadOnly bool
	// CloseAfter and RetryMS are the close_after and retry_ms of a call that
	// does not give them (a server that polls on its own).
	CloseAfter, RetryMS int
	// Modern serves 2026-07-28 as well, on the same endpoint, as servers
	// that speak both eras do (see serveModern): a request whose
	// MCP-Protocol-Version is none of the legacy versions goes there.
	Modern bool
	// NoRetryArg lists the progress tool without retry_ms, as the
	// TypeScript SDK's server does: a close sends retry RetryMS.
	NoRetryArg bool

	mu       sync.Mutex
	n        int
	sessions map[string]bool              // id → alive
	getOpen  map[string]bool              // session → a standalone GET is open
	streams  map[string][]json.RawMessage // stream id → its events' data (index 0: priming, empty)
	calls    map[string]int               // tools/call by tool name
	pending  *xpair                       // a CrossTalk call waiting for a partner
}

// xpair is two CrossTalk calls: box[k] receives the progress member k
// must send on its stream (its partner's).
type xpair struct {
	ready chan struct{} // closed when the second member joins
	box   [2]chan []json.RawMessage
}

var probeVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// Calls returns how many times tools/call ran tool.
func (f *ProbeFake) Calls(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[tool]
}

func (f *ProbeFake) init() {
	if f.sessions == nil {
		f.sessions, f.getOpen, f.streams, f.calls = map[string]bool{}, map[string]bool{}, map[string][]json.RawMessage{}, map[string]int{}
	}
}

func (f *ProbeFake) toolName() string {
	if f.Tool == "" {
		return "progress"
	}
	return f.Tool
}

func probeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32600, "message": msg}})
}

// ServeHTTP implements http.Handler.
func (f *ProbeFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.init()
	f.mu.Unlock()
	if h := r.Host; !f.Faults.IgnoreHost && !loopbackHost(h) {
		probeError(w, http.StatusForbidden, "Forbidden: Host "+strconv.Quote(h)+" is not a loopback name")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && f.Faults.RefuseSameOrigin {
		probeError(w, http.StatusForbidden, "Forbidden: Origin not allowed")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host && !f.Faults.IgnoreOrigin {
		probeError(w, http.StatusForbidden, "Forbidden: Origin not allowed")
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); f.Modern && v != "" && !slices.Contains(probeVersions, v) {
		f.serveModern(w, r)
		return
	}
	switch {
	case r.Method == http.MethodPost, r.Method == http.MethodPut && f.Faults.PUTAccepted:
		f.post(w, r)
	case r.Method == http.MethodGet && !f.Stateless:
		f.get(w, r)
	case r.Method == http.MethodDelete && !f.Stateless:
		f.delete(w, r)
	default:
		if f.Stateless {
			w.Header().Set("Allow", "POST")
		} else {
			w.Header().Set("Allow", "GET, POST, DELETE")
		}
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// session checks the request's session; it answers and returns false when
// the request may not go on.
func (f *ProbeFake) session(w http.ResponseWriter, r *http.Request, required bool) bool {
	if f.Stateless {
		return true
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		if required {
			probeError(w, http.StatusBadRequest, "Bad Request: Mcp-Session-Id required")
			return false
		}
		return true
	}
	f.mu.Lock()
	alive, known := f.sessions[id]
	f.mu.Unlock()
	if known && (alive || f.Faults.DeletedAccepted) {
		return true
	}
	if _, err := strconv.Atoi(strings.TrimPrefix(id, "sess-")); !known && err == nil && f.Faults.WellFormedAccepted {
		return true
	}
	if f.Faults.UnknownSession400 {
		probeError(w, http.StatusBadRequest, "Bad Request: no such session")
	} else {
		http.Error(w, "session not found", http.StatusNotFound)
	}
	return false
}

func (f *ProbeFake) post(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !f.Faults.AnyContentType {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	if a := r.Header.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
		http.Error(w, "Accept must list application/json and text/event-stream", http.StatusNotAcceptable)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Version string          `json:"protocolVersion"`
			Name    string          `json:"name"`
			Args    json.RawMessage `json:"arguments"`
			Meta    struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		probeError(w, http.StatusBadRequest, "Parse error")
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(probeVersions, v) && !f.Faults.AnyVersion {
		http.Error(w, "Bad Request: unsupported protocol version", http.StatusBadRequest)
		return
	}
	if m.Method == "initialize" {
		v := m.Params.Version
		if !slices.Contains(probeVersions, v) {
			v = probeVersions[0]
		}
		if !f.Stateless {
			f.mu.Lock()
			f.n++
			id := "sess-" + strconv.Itoa(f.n)
			if f.Faults.BadSessionID {
				id = "sess " + strconv.Itoa(f.n)
			}
			f.sessions[id] = true
			f.mu.Unlock()
			w.Header().Set("Mcp-Session-Id", id)
		}
		f.result(w, m.ID, map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "probe-fake", "version": "0"}})
		return
	}
	if !f.session(w, r, !f.Faults.NoSessionAccepted) {
		return
	}
	switch {
	case m.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "ping" && f.Faults.PingResult:
		f.result(w, m.ID, map[string]any{"ok": true})
	case m.Method == "ping":
		f.result(w, m.ID, map[string]any{})
	case m.Method == "tools/list":
		f.result(w, m.ID, map[string]any{"tools": []any{f.toolSpec()}})
	case m.Method == "tools/call" && m.Params.Name == f.toolName():
		var args struct {
			Count      *int `json:"count"`
			CloseAfter *int `json:"close_after"`
			RetryMS    *int `json:"retry_ms"`
		}
		json.Unmarshal(m.Params.Args, &args)
		f.call(w, r, m.ID, m.Params.Meta.Token, deref(args.Count, 3), deref(args.CloseAfter, f.CloseAfter), deref(args.RetryMS, f.RetryMS))
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ErrorResponse(m.ID, -32601, "Method not found"))
	}
}

func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func (f *ProbeFake) toolSpec() map[string]any {
	t := map[string]any{"name": f.toolName(), "inputSchema": map[string]any{"type": "object"}}
	if f.toolName() == "progress" {
		t["inputSchema"] = map[string]any{"type": "object", "required": []string{"count"}, "properties": map[string]any{
			"count": map[string]any{"type": "integer"}, "close_after": map[string]any{"type": "integer"}, "retry_ms": map[string]any{"type": "integer"}}}
		if f.NoRetryArg {
			delete(t["inputSchema"].(map[string]any)["properties"].(map[string]any), "retry_ms")
		}
	}
	if f.ReadOnly {
		t["annotations"] = map[string]any{"readOnlyHint": true}
	}
	return t
}

func (f *ProbeFake) result(w http.ResponseWriter, id json.RawMessage, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(Response(id, v))
}

// call answers a tools/call: everything it sends is stored first, then
// written up to the close (or the end).
func (f *ProbeFake) call(w http.ResponseWriter, r *http.Request, id, token json.RawMessage, count, closeAfter, retryMS int) {
	f.mu.Lock()
	f.calls[f.toolName()]++
	f.n++
	stream := "st" + strconv.Itoa(f.n)
	evs := []json.RawMessage{nil}
	for k := 1; k <= count; k++ {
		if token != nil {
			evs = append(evs, mustJSON(Progress(string(token), float64(k), float64(count))))
		}
	}
	resp := mustJSON(Response(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "sent " + strconv.Itoa(count)}}}))
	f.mu.Unlock()
	if f.Faults.CrossTalk && token != nil && closeAfter == 0 {
		// The partner reads own: this call's slice is not written again.
		evs = append([]json.RawMessage{nil}, f.crossTalk(r, slices.Clone(evs[1:]))...)
	}
	evs = append(evs, resp)
	f.mu.Lock()
	f.streams[stream] = evs
	f.mu.Unlock()

	wr := &Writer{ResponseWriter: w}
	wr.Events(Event{ID: stream + "_0", EmptyData: true})
	for i := 1; i < len(evs); i++ {
		wr.Events(Event{ID: stream + "_" + strconv.Itoa(i), Data: string(evs[i])})
		if closeAfter > 0 && i == closeAfter && i < len(evs)-1 {
			if !f.Faults.NoRetryOnClose {
				wr.Events(Event{Retry: retryMS, EmptyData: true})
			}
			return // the stream goes on in the store: GET with Last-Event-ID
		}
	}
	if f.Faults.StreamStaysOpen {
		<-r.Context().Done()
	}
}

// crossTalk pairs the call with another one in flight and swaps their
// progress: it returns the partner's, or own when no partner came within
// a second (or the request ended).
func (f *ProbeFake) crossTalk(r *http.Request, own []json.RawMessage) []json.RawMessage {
	f.mu.Lock()
	pr, me := f.pending, 1
	if pr != nil {
		f.pending = nil
		close(pr.ready)
	} else {
		pr, me = &xpair{ready: make(chan struct{}), box: [2]chan []json.RawMessage{make(chan []json.RawMessage, 1), make(chan []json.RawMessage, 1)}}, 0
		f.pending = pr
	}
	f.mu.Unlock()
	if me == 0 {
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-pr.ready:
		case <-t.C:
		case <-r.Context().Done():
		}
		f.mu.Lock()
		alone := f.pending == pr
		if alone {
			f.pending = nil
		}
		f.mu.Unlock()
		if alone {
			return own
		}
	}
	pr.box[1-me] <- own
	select {
	case theirs := <-pr.box[me]:
		return theirs
	case <-r.Context().Done():
		return nil
	}
}

// loopbackHost reports whether a Host header names a loopback address.
func loopbackHost(h string) bool {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (f *ProbeFake) get(w http.ResponseWriter, r *http.Request) {
	if !f.session(w, r, true) {
		return
	}
	wr := &Writer{ResponseWriter: w}
	if last := r.Header.Get("Last-Event-Id"); last != "" {
		stream, idx, _ := strings.Cut(last, "_")
		k, err := strconv.Atoi(idx)
		f.mu.Lock()
		evs, ok := f.streams[stream]
		f.mu.Unlock()
		if err != nil || !ok || k < 0 || k >= len(evs) {
			if f.Faults.UnknownLastID404 {
				http.Error(w, "not found", http.StatusNotFound)
			} else {
				http.Error(w, "unknown Last-Event-ID", http.StatusBadRequest)
			}
			return
		}
		wr.StartSSE()
		for i := k + 1; i < len(evs); i++ {
			wr.Events(Event{ID: stream + "_" + strconv.Itoa(i), Data: string(evs[i])})
			if i == k+1 && f.Faults.ResumeDuplicates {
				wr.Events(Event{ID: stream + "_" + strconv.Itoa(i), Data: string(evs[i])})
			}
		}
		if f.Faults.ResumeForeign {
			wr.Events(Event{ID: "st999_1", Data: Progress(`"another-request"`, 1, 1)})
		}
		if f.Faults.ResumeNeverEnds {
			<-r.Context().Done()
		}
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	f.mu.Lock()
	open := f.getOpen[sid]
	if !open {
		f.getOpen[sid] = true
	}
	f.mu.Unlock()
	if open {
		if f.Faults.SecondGETError {
			http.Error(w, "internal error", http.StatusInternalServerError)
		} else {
			http.Error(w, "a GET stream is already open", http.StatusConflict)
		}
		return
	}
	defer func() {
		f.mu.Lock()
		delete(f.getOpen, sid)
		f.mu.Unlock()
	}()
	wr.StartSSE()
	wr.Raw(": ok\n\n")
	<-r.Context().Done()
}

func (f *ProbeFake) delete(w http.ResponseWriter, r *http.Request) {
	if !f.session(w, r, true) {
		return
	}
	f.mu.Lock()
	f.sessions[r.Header.Get("Mcp-Session-Id")] = false
	f.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}
