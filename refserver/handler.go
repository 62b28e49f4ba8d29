package refserver

import (
	"context"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names and versions this server announces.
const (
	implementationName    = "mcpbench-refserver"
	implementationVersion = "0.1.0"
	protocolVersion2026   = "2026-07-28"
)

// Close bounds: a closing handler waits this long for sessions to end before
// giving up on them (their HTTP connections are forced closed by then).
const closeWaitTimeout = 2 * time.Second

// Stats are the server's counters since it started.
type Stats struct {
	// ToolCalls counts tool executions started: calls whose arguments
	// passed the input schema, including those that then fail (bad values,
	// a tool the mode cannot serve). A multi round-trip call counts once per
	// round.
	ToolCalls int64

	// Executions maps each key of the count tool to the number of times it
	// started. It is a copy.
	Executions map[string]int64

	// DoubleExecutions counts count-tool keys that started more than once.
	DoubleExecutions int64

	// Touches counts executions of the touch tool (resource changes);
	// ToolToggles those of toggle_tool (tool list changes).
	Touches, ToolToggles int64

	// Cancels counts notifications/cancelled that named a tools/call in
	// flight (the stateful modes), or one that came later (a cancel that
	// overtook its call on another connection: the call is cancelled on
	// arrival); Muted counts the writes of cancelled
	// calls the server kept from the client (the SDK's response to a
	// cancelled request among them).
	Cancels, Muted int64

	// SessionsOpened counts sessions that completed initialization
	// (notifications/initialized received); SessionsClosed counts those that
	// ended since (DELETE, SessionTimeout, Close). Both stay 0 in the
	// stateless modes, which have no sessions.
	SessionsOpened, SessionsClosed int64

	// LinkResumes counts the resumes served at a stream's rel="stream"
	// link (Options.StreamLinks); GETs refused with 400 are not counted.
	LinkResumes int64
}

// handler is the http.Handler NewHandler returns.
type handler struct {
	opts    Options
	mode    Mode
	origins originPolicy
	server  *mcp.Server
	mcp     *mcp.StreamableHTTPHandler
	store   *memoryEventStore // nil unless mode.stateful()

	// send is the SDK's default sending method handler, captured through a
	// sending middleware. Calling it sends notifications/message without
	// ServerSession.Log's level filter, which drops every message until the
	// client calls logging/setLevel.
	send mcp.MethodHandler

	// ctx is cancelled when the handler closes: it aborts running tools
	// (through a receiving middleware), ticks and notify loops.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	closing  bool                            // no goroutine may start once set
	wg       sync.WaitGroup                  // goroutines started by goTracked
	sessions map[*mcp.ServerSession]*session // initialized sessions (stateful modes)

	execMu     sync.Mutex
	executions map[string]int64

	leakMu sync.Mutex
	leaked [][]byte // Options.LeakPerSession

	toolCalls, doubles, opened, closed atomic.Int64
	linkResumes                        atomic.Int64 // Options.StreamLinks

	touches, toggles, cancels, muted atomic.Int64
	calls                            inflightCalls // tools/call in flight, for cancels
	toggleMu                         sync.Mutex
	extraOn                          bool // toggle_tool added ExtraTool

	closeOnce sync.Once
}

var _ io.Closer = (*handler)(nil)

// NewHandler returns an http.Handler serving the MCP endpoint as opts says;
// mount it at /mcp. It returns an error wrapping [ErrInvalidOptions] if opts
// is invalid.
//
// The handler is safe for concurrent use. Sessions end with DELETE or
// Options.SessionTimeout; the returned value also implements io.Closer, whose
// Close ends every session, aborts running tools, and answers later requests
// with 503.
func NewHandler(opts Options) (http.Handler, error) {
	h, err := newHandler(opts)
	if err != nil {
		return nil, err
	}
	return h, nil
}

func newHandler(opts Options) (*handler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	h := &handler{
		opts:       opts,
		mode:       opts.mode(),
		sessions:   make(map[*mcp.ServerSession]*session),
		executions: make(map[string]int64),
	}
	h.origins, _ = newOriginPolicy(opts.AllowedOrigins) // Validate checked it
	h.ctx, h.cancel = context.WithCancel(context.Background())

	var versions []string
	if h.mode == ModeStateless {
		versions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool {
			return v >= protocolVersion2026
		})
	}
	h.server = mcp.NewServer(&mcp.Implementation{
		Name:    implementationName,
		Title:   "mcpbench reference server",
		Version: implementationVersion,
	}, &mcp.ServerOptions{
		Instructions:              "Reference server of mcpbench: tools made for measuring Streamable HTTP servers.",
		Logger:                    opts.Logger,
		InitializedHandler:        h.initialized,
		SupportedProtocolVersions: versions,
		PageSize:                  opts.PageSize,
		CompletionHandler:         h.complete,
		SubscribeHandler:          h.subscribe,
		UnsubscribeHandler:        h.unsubscribe,
	})
	h.server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		h.send = next
		return next
	})
	h.server.AddReceivingMiddleware(h.toolContext)
	h.addFeatures()

	httpOpts := &mcp.StreamableHTTPOptions{
		Stateless:                    !h.mode.stateful(),
		JSONResponse:                 h.mode == ModeJSON,
		Logger:                       opts.Logger,
		SessionTimeout:               opts.SessionTimeout,
		PropagateRequestCancellation: h.mode == Mode2026,
		// With TLS names besides the loopback ones, Start's hostGuard
		// checks the Host header instead (those names allowed too).
		DisableLocalhostProtection: opts.TLS != nil && len(opts.TLS.Hosts) > 0,
	}
	if h.mode.stateful() {
		n := opts.EventStoreBytes
		if n == 0 {
			n = DefaultEventStoreBytes
		}
		h.store = newMemoryEventStore(n)
		httpOpts.EventStore = h.store
	}
	h.mcp = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server }, httpOpts)
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ok, o := h.origins.allows(r); !ok {
		writeJSONRPCError(w, http.StatusForbidden, codeInvalidRequest, "Forbidden: Origin "+strconv.Quote(o)+" is not allowed")
		return
	}
	if h.ctx.Err() != nil {
		http.Error(w, "refserver: closing", http.StatusServiceUnavailable)
		return
	}
	if h.store != nil && r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		if r = sessionless(w, r); r == nil {
			return
		}
	}
	if h.store != nil && r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
		var mw *mutedWriter
		w, mw = h.watchCancel(w, r)
		defer h.unwatch(mw)
	}
	// Ask reverse proxies not to buffer SSE (2026-07-28 Streamable HTTP).
	w.Header().Set("X-Accel-Buffering", "no")
	if h.opts.StreamLinks && h.store != nil {
		if w, r = h.withLinks(w, r); r == nil {
			return
		}
	}
	if h.store != nil && r.Method == http.MethodGet && len(r.Header.Values("Last-Event-ID")) == 0 {
		r = h.freshGET(r)
	}
	if h.store != nil && r.Method == http.MethodGet && h.opts.GETRetry > 0 {
		w = &retryWriter{ResponseWriter: w, line: []byte("retry: " + strconv.FormatInt(h.opts.GETRetry.Milliseconds(), 10) + "\n\n")}
	}
	h.mcp.ServeHTTP(w, r)
}

// retryWriter writes a retry field first in a 200 text/event-stream answer.
type retryWriter struct {
	http.ResponseWriter
	line    []byte
	started bool
}

func (w *retryWriter) WriteHeader(code int) {
	if w.started {
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.ResponseWriter.Write(w.line)
	}
}

func (w *retryWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher (the SDK flushes every event).
func (w *retryWriter) Flush() {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *retryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// freshGET adapts a GET without Last-Event-ID. The SDK answers it by
// replaying the session's standalone stream from index 0, and with 400 once
// the event store has evicted its oldest events; this makes it replay from
// the oldest retained event instead, with correct event ids.
func (h *handler) freshGET(r *http.Request) *http.Request {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return r
	}
	first, ok := h.store.standaloneFirst(id)
	if !ok || first == 0 {
		return r
	}
	r = r.Clone(r.Context())
	r.Header.Set("Last-Event-ID", "_"+strconv.Itoa(first-1))
	return r
}

// toolContext is a receiving middleware: tools/call handlers get a context
// that the handler's Close cancels, so that Close never waits on a sleeping
// tool or on a client that never answers a server→client request.
func (h *handler) toolContext(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(h.ctx, cancel)
		defer func() {
			stop()
			cancel()
		}()
		return next(ctx, method, req)
	}
}

// startExecution counts one start of the count tool for key.
func (h *handler) startExecution(key string) {
	h.execMu.Lock()
	h.executions[key]++
	n := h.executions[key]
	h.execMu.Unlock()
	if n == 2 {
		h.doubles.Add(1)
	}
}

func (h *handler) executionsOf(key string) int64 {
	h.execMu.Lock()
	defer h.execMu.Unlock()
	return h.executions[key]
}

func (h *handler) stats() Stats {
	h.execMu.Lock()
	ex := maps.Clone(h.executions)
	h.execMu.Unlock()
	return Stats{
		ToolCalls:        h.toolCalls.Load(),
		Executions:       ex,
		DoubleExecutions: h.doubles.Load(),
		Touches:          h.touches.Load(),
		ToolToggles:      h.toggles.Load(),
		Cancels:          h.cancels.Load(),
		Muted:            h.muted.Load(),
		SessionsOpened:   h.opened.Load(),
		SessionsClosed:   h.closed.Load(),
		LinkResumes:      h.linkResumes.Load(),
	}
}
