package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Any matches any value in a Key field.
const Any = "*"

// Key selects a handler. Fields are matched exactly or by Any.
type Key struct {
	HTTPMethod  string // POST, GET, DELETE
	Session     string // Mcp-Session-Id ("" when absent)
	RPCMethod   string // JSON-RPC method of a POST ("" for GET/DELETE; "response" for a client's response)
	LastEventID string // Last-Event-ID header ("" when absent)
}

// K builds a Key: K("POST", "s1", "tools/call", "").
func K(httpMethod, session, rpcMethod, lastEventID string) Key {
	return Key{HTTPMethod: httpMethod, Session: session, RPCMethod: rpcMethod, LastEventID: lastEventID}
}

// Request is one request the server received.
type Request struct {
	HTTPMethod  string
	Session     string
	RPCMethod   string
	LastEventID string
	ID          json.RawMessage // JSON-RPC id (nil for notifications)
	Params      json.RawMessage
	Result      json.RawMessage // for a client's response
	Header      http.Header
	Body        []byte
	At          time.Time
	// Ctx is the HTTP request's context: done when the client goes away.
	Ctx context.Context
}

// ProgressToken returns params._meta.progressToken as raw JSON ("" if none).
func (r *Request) ProgressToken() string {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(r.Params, &p)
	return string(p.Meta.Token)
}

// Handler answers a request.
type Handler func(w *Writer, r *Request)

// Server is the fake. Its zero value is not usable; use New.
// Safe for concurrent use.
type Server struct {
	// SessionID is assigned on initialize ("" to assign none).
	SessionID string
	// Protocol is the protocolVersion answered to initialize ("" echoes the
	// requested one).
	Protocol string

	mu      sync.Mutex
	routes  map[Key]Handler
	reqs    []*Request
	notify  chan struct{}
	deleted map[string]bool
}

// New returns a fake server with default handlers: initialize (JSON
// answer, Mcp-Session-Id "s1"), notifications/* and responses (202),
// DELETE (200), ping (JSON {}), and 405 for GET.
func New() *Server {
	s := &Server{SessionID: "s1", routes: map[Key]Handler{}, notify: make(chan struct{}), deleted: map[string]bool{}}
	s.Handle(Key{"POST", Any, "initialize", Any}, func(w *Writer, r *Request) {
		var p struct {
			V string `json:"protocolVersion"`
		}
		json.Unmarshal(r.Params, &p)
		v := s.Protocol
		if v == "" {
			v = p.V
		}
		if s.SessionID != "" {
			w.Header().Set("Mcp-Session-Id", s.SessionID)
		}
		w.Result(r, map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "fake", "version": "0"}})
	})
	accept := func(w *Writer, r *Request) { w.WriteHeader(http.StatusAccepted) }
	s.Handle(Key{"POST", Any, "notifications/initialized", Any}, accept)
	s.Handle(Key{"POST", Any, "notifications/cancelled", Any}, accept)
	s.Handle(Key{"POST", Any, "response", Any}, accept)
	s.Handle(Key{"POST", Any, "ping", Any}, func(w *Writer, r *Request) { w.Result(r, map[string]any{}) })
	s.Handle(Key{"DELETE", Any, "", Any}, func(w *Writer, r *Request) {
		s.mu.Lock()
		s.deleted[r.Session] = true
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})
	s.Handle(Key{"GET", Any, "", Any}, func(w *Writer, r *Request) { w.WriteHeader(http.StatusMethodNotAllowed) })
	return s
}

// Handle sets the handler for k (replacing one set before).
func (s *Server) Handle(k Key, h Handler) {
	s.mu.Lock()
	s.routes[k] = h
	s.mu.Unlock()
}

// Deleted reports whether a DELETE for session id arrived.
func (s *Server) Deleted(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleted[id]
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Find returns the received requests matching k.
func (s *Server) Find(k Key) []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if match(k, r) {
			out = append(out, r)
		}
	}
	return out
}

// WaitFor blocks until a request matching k has arrived n times or ctx ends.
func (s *Server) WaitFor(ctx context.Context, k Key, n int) ([]*Request, error) {
	for {
		s.mu.Lock()
		ch := s.notify
		s.mu.Unlock()
		if got := s.Find(k); len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Find(k), fmt.Errorf("waiting for %d× %+v: %w", n, k, ctx.Err())
		}
	}
}

func match(k Key, r *Request) bool {
	f := func(want, got string) bool { return want == Any || want == got }
	return f(k.HTTPMethod, r.HTTPMethod) && f(k.Session, r.Session) && f(k.RPCMethod, r.RPCMethod) && f(k.LastEventID, r.LastEventID)
}

func (s *Server) lookup(r *Request) Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Most specific first: exact, then wildcards from the least telling field.
	cands := []Key{
		{r.HTTPMethod, r.Session, r.RPCMethod, r.LastEventID},
		{r.HTTPMethod, Any, r.RPCMethod, r.LastEventID},
		{r.HTTPMethod, r.Session, r.RPCMethod, Any},
		{r.HTTPMethod, Any, r.RPCMethod, Any},
		{r.HTTPMethod, r.Session, Any, Any},
		{r.HTTPMethod, Any, Any, Any},
	}
	for _, k := range cands {
		if h, ok := s.routes[k]; ok {
			return h
		}
	}
	return nil
}

// ServeHTTP records the request and runs its handler (501 when none).
func (s *Server) ServeHTTP(hw http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	r := &Request{
		HTTPMethod:  hr.Method,
		Session:     hr.Header.Get("Mcp-Session-Id"),
		LastEventID: hr.Header.Get("Last-Event-Id"),
		Header:      hr.Header.Clone(),
		Body:        body,
		At:          time.Now(),
		Ctx:         hr.Context(),
	}
	if hr.Method == http.MethodPost {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(hw, "bad JSON", http.StatusBadRequest)
			return
		}
		r.ID, r.RPCMethod, r.Params, r.Result = m.ID, m.Method, m.Params, m.Result
		if m.Method == "" {
			r.RPCMethod = "response"
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	close(s.notify)
	s.notify = make(chan struct{})
	s.mu.Unlock()
	h := s.lookup(r)
	if h == nil {
		http.Error(hw, "no handler for "+r.HTTPMethod+" "+r.RPCMethod, http.StatusNotImplemented)
		return
	}
	h(&Writer{ResponseWriter: hw}, r)
}

// Writer wraps the response with MCP helpers.
type Writer struct {
	http.ResponseWriter
	sse bool
}

// JSON writes v as an application/json answer with status.
func (w *Writer) JSON(status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Result answers r with a JSON-RPC result as application/json.
func (w *Writer) Result(r *Request, result any) {
	w.JSON(http.StatusOK, Response(r.ID, result))
}

// Response returns a JSON-RPC response object for id.
func Response(id json.RawMessage, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": result}
}

// ErrorResponse returns a JSON-RPC error response object for id.
func ErrorResponse(id json.RawMessage, code int, msg string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}}
}

// Progress returns a notifications/progress message.
func Progress(token string, progress, total float64) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
		"params": map[string]any{"progressToken": json.RawMessage(token), "progress": progress, "total": total}}
}

// Event is one SSE event to write. Empty fields are left out; Data is
// marshalled to JSON unless it is a string (written as is) or nil (an
// empty data line only when EmptyData).
type Event struct {
	ID        string
	Type      string
	Data      any
	Retry     int // ms; 0 leaves it out
	EmptyData bool
	Comment   string
}

// StartSSE writes 200 text/event-stream headers (once).
func (w *Writer) StartSSE() {
	if w.sse {
		return
	}
	w.sse = true
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// Events writes events (starting SSE if needed) and flushes.
func (w *Writer) Events(evs ...Event) {
	w.StartSSE()
	var b strings.Builder
	for _, e := range evs {
		if e.Comment != "" {
			b.WriteString(": " + e.Comment + "\n")
		}
		if e.Type != "" {
			b.WriteString("event: " + e.Type + "\n")
		}
		if e.ID != "" {
			b.WriteString("id: " + e.ID + "\n")
		}
		if e.Retry > 0 {
			b.WriteString("retry: " + strconv.Itoa(e.Retry) + "\n")
		}
		switch d := e.Data.(type) {
		case nil:
			if e.EmptyData {
				b.WriteString("data:\n")
			}
		case string:
			for _, line := range strings.Split(d, "\n") {
				b.WriteString("data: " + line + "\n")
			}
		default:
			j, _ := json.Marshal(d)
			b.WriteString("data: " + string(j) + "\n")
		}
		b.WriteString("\n")
	}
	io.WriteString(w, b.String())
	w.Flush()
}

// Raw writes bytes as they are and flushes (for malformed streams).
func (w *Writer) Raw(s string) {
	io.WriteString(w, s)
	w.Flush()
}

// Flush sends buffered bytes to the client.
func (w *Writer) Flush() {
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Cut drops the connection abruptly (no terminating chunk): the client sees
// a broken stream, not an orderly end. Returning from the handler instead
// ends the stream in order (what a server polling per SEP-1699 does).
func (w *Writer) Cut() {
	conn, _, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		panic("mcptest: cut: " + err.Error())
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // RST
	}
	conn.Close()
}

// Pipe is an in-memory network: Listener serves what Dial connects. Made
// inside a synctest bubble, its blocking is durable, so the bubble's fake
// clock advances exactly by the waits of the code under test.
type Pipe struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

// NewPipe returns an in-memory network.
func NewPipe() *Pipe { return &Pipe{ch: make(chan net.Conn), done: make(chan struct{})} }

// Accept waits for a Dial.
func (p *Pipe) Accept() (net.Conn, error) {
	select {
	case c := <-p.ch:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept.
func (p *Pipe) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

// Addr is a dummy address.
func (p *Pipe) Addr() net.Addr { return pipeAddr{} }

// Dial connects to the listener.
func (p *Pipe) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case p.ch <- s:
		return c, nil
	case <-p.done:
		return nil, errors.New("mcptest: pipe closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// ServePipe serves h on an in-memory network and returns an HTTP client
// dialing it and a stop function that shuts both down, waiting (up to 10 s
// of the bubble's clock) for running handlers to return, so a synctest
// bubble ends with no goroutine left.
func ServePipe(h http.Handler) (*http.Client, func()) {
	p := NewPipe()
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() { srv.Serve(p); close(done) }()
	tr := &http.Transport{DialContext: p.Dial, DisableCompression: true}
	return &http.Client{Transport: tr}, func() {
		tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		p.Close()
		<-done
	}
}
