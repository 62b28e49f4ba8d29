package refserver

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Mode selects how the server speaks Streamable HTTP.
type Mode string

const (
	// ModeStateful is the default: Mcp-Session-Id sessions, SSE answers that
	// open with a priming event, a memory event store (every stream is
	// resumable with Last-Event-ID), and a standalone GET stream. It speaks
	// protocol versions 2024-11-05 … 2025-11-25.
	ModeStateful Mode = "stateful"

	// ModeStateless is the SDK's stateless mode restricted to the legacy
	// protocol versions (2024-11-05 … 2025-11-25): no sessions (no
	// Mcp-Session-Id), no event store, no resumption, and GET and DELETE
	// answer 405. Server→client requests are impossible, so the sample, elicit,
	// roots, ask and notify tools return tool errors. A 2026-07-28 request is
	// rejected with UnsupportedProtocolVersion (HTTP 400) listing the legacy
	// versions; use [Mode2026] for that protocol.
	ModeStateless Mode = "stateless"

	// ModeJSON is [ModeStateful] with application/json answers (the SDK's
	// JSONResponse): each POST carrying a request is answered with one JSON
	// object, and notifications or requests made while handling it (progress,
	// sampling, …) travel on the standalone GET stream instead.
	ModeJSON Mode = "json"

	// Mode2026 serves MCP 2026-07-28 (SEP-2575, stateless MCP) through the
	// SDK's stateless mode: no initialize and no sessions, version and client
	// capabilities in each request's _meta, server/discover, Mcp-Method and
	// Mcp-Name headers checked against the body, subscriptions/listen, and
	// input_required results (multi round-trip) instead of server→client
	// requests. A dropped response stream cancels the request. The same
	// handler also accepts legacy clients the way [ModeStateless] does (see
	// the package documentation).
	Mode2026 Mode = "2026-07-28"
)

// Default values used when the corresponding [Options] field is zero.
const (
	// DefaultEventStoreBytes is the memory event store cap used when
	// Options.EventStoreBytes is 0.
	DefaultEventStoreBytes = 64 << 20 // 64 MiB
)

// ErrInvalidOptions is wrapped by every error [Options.Validate] returns.
var ErrInvalidOptions = errors.New("refserver: invalid options")

// Options configures the reference server. The zero value is valid: a
// stateful server with a 64 MiB event store, no idle timeout and no ticks.
type Options struct {
	// Mode selects the transport behaviour; "" means ModeStateful.
	Mode Mode

	// Logger receives the SDK's logs (it logs at Info once per session, and so
	// once per request in the stateless modes). Nil discards them. Tool
	// handlers never log per call.
	Logger *slog.Logger

	// EventStoreBytes caps the memory event store, in bytes; 0 means
	// DefaultEventStoreBytes. Every stored event is charged its JSON size plus
	// a fixed overhead (64 bytes); once the cap is reached the oldest events of
	// the whole process are evicted first, and resuming from an evicted event
	// answers 400. Only ModeStateful and ModeJSON use an event store.
	EventStoreBytes int

	// SessionTimeout closes sessions that received no POST for this long; 0
	// means never. An open GET stream does not keep a session alive. Only
	// ModeStateful and ModeJSON have sessions.
	SessionTimeout time.Duration

	// TickInterval, if positive, makes every initialized session send one
	// numbered notification (the same shape the notify tool sends) on its
	// standalone GET stream every TickInterval, for the session's lifetime,
	// starting at a random phase within the first interval.
	// 0 disables ticks. Only ModeStateful and ModeJSON have sessions; the
	// other modes ignore it.
	TickInterval time.Duration

	// GETRetry, if positive, starts every GET SSE response (standalone
	// streams and resumes) with a retry field of this many milliseconds,
	// the hint a client must wait before reconnecting when the stream
	// breaks (SEP-1699). 0 sends none. Only ModeStateful and ModeJSON serve
	// GET streams.
	GETRetry time.Duration

	// AllowedOrigins lists the origins ("scheme://host[:port]", e.g.
	// "https://app.example") whose browser requests are served besides the
	// server's own origin; "*" allows every origin. A request whose Origin
	// header is neither gets 403 Forbidden, whatever its method (2025-11-25
	// transports §Security Warning). Requests without Origin (non-browser
	// clients) are always served. Nil allows the server's own origin only,
	// with localhost, 127.0.0.1 and [::1] equivalent on the same port.
	AllowedOrigins []string

	// TLS, when set, makes Start serve HTTPS (see TLSOptions); nil serves
	// plain HTTP. NewHandler ignores it.
	TLS *TLSOptions

	// H2C makes Start also accept HTTP/2 with prior knowledge on plain HTTP
	// (h2c, RFC 9113 §3.3) beside HTTP/1.1. NewHandler ignores it.
	H2C bool

	// Auth, when set, makes Start require OAuth bearer tokens on /mcp and
	// serve a built-in authorization server (see AuthOptions). NewHandler
	// ignores it.
	Auth *AuthOptions

	// LeakPerSession, if positive, makes the server keep this many bytes
	// for every session it initializes, for its whole lifetime: a
	// deliberate memory leak, to test leak detection (mcpbench soak). Never
	// set it otherwise.
	LeakPerSession int

	// PageSize is the most items one page of tools/list, resources/list,
	// resources/templates/list and prompts/list holds; a longer list is
	// paginated (nextCursor). 0 means the SDK's default (1000).
	PageSize int

	// StreamLinks makes every SSE stream's response carry a Link header
	// with a rel="stream" URL (SEP-1335, a draft that servers built on it
	// still speak), and serves resumes there: a GET at the link, with the
	// session's Mcp-Session-Id, replays the stream from its Last-Event-ID,
	// or from its start without one (so a stream cut before its first event
	// is resumable). Only ModeStateful and ModeJSON have the event store it
	// needs; the other modes ignore it.
	StreamLinks bool
}

// Validate reports every problem with o at once, each naming its field and
// wrapping [ErrInvalidOptions]. It returns nil if o is usable.
func (o Options) Validate() error {
	var errs []error
	switch o.Mode {
	case "", ModeStateful, ModeStateless, ModeJSON, Mode2026:
	default:
		errs = append(errs, fmt.Errorf("%w: Mode: unknown mode %q (want %q, %q, %q or %q)",
			ErrInvalidOptions, o.Mode, ModeStateful, ModeStateless, ModeJSON, Mode2026))
	}
	if o.EventStoreBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: EventStoreBytes: %d is negative (0 means %d)",
			ErrInvalidOptions, o.EventStoreBytes, DefaultEventStoreBytes))
	}
	if o.SessionTimeout < 0 {
		errs = append(errs, fmt.Errorf("%w: SessionTimeout: %v is negative (0 means never)",
			ErrInvalidOptions, o.SessionTimeout))
	}
	if o.LeakPerSession < 0 {
		errs = append(errs, fmt.Errorf("%w: LeakPerSession: %d is negative", ErrInvalidOptions, o.LeakPerSession))
	}
	if o.PageSize < 0 {
		errs = append(errs, fmt.Errorf("%w: PageSize: %d is negative (0 means the SDK's 1000)", ErrInvalidOptions, o.PageSize))
	}
	if o.GETRetry < 0 {
		errs = append(errs, fmt.Errorf("%w: GETRetry: %v is negative (0 means no hint)",
			ErrInvalidOptions, o.GETRetry))
	}
	for _, s := range o.AllowedOrigins {
		if s == "*" {
			continue
		}
		if _, err := parseOrigin(s); err != nil {
			errs = append(errs, fmt.Errorf("%w: AllowedOrigins: %q: %v (want scheme://host[:port] or \"*\")",
				ErrInvalidOptions, s, err))
		}
	}
	if o.TLS != nil {
		errs = append(errs, o.TLS.validate()...)
		if o.H2C {
			errs = append(errs, fmt.Errorf("%w: H2C: plain HTTP only (over TLS, ALPN offers h2)", ErrInvalidOptions))
		}
	}
	if o.Auth != nil {
		errs = append(errs, o.Auth.validate()...)
	}
	if o.TickInterval < 0 {
		errs = append(errs, fmt.Errorf("%w: TickInterval: %v is negative (0 means off)",
			ErrInvalidOptions, o.TickInterval))
	}
	return errors.Join(errs...)
}

// mode returns o.Mode with the default applied.
func (o Options) mode() Mode {
	if o.Mode == "" {
		return ModeStateful
	}
	return o.Mode
}

// stateful reports whether the mode keeps sessions (and an event store).
func (m Mode) stateful() bool { return m == ModeStateful || m == ModeJSON }
