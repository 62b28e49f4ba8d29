// Package refserver is the reference MCP server of mcpbench: the target
// `mcpbench serve` runs and `mcpbench run` starts in-process when no --url is
// given. It is the official Go SDK's StreamableHTTPHandler
// (github.com/modelcontextprotocol/go-sdk v1.8.0) with tools made for
// measuring, which announce their ground truth (how many messages they send)
// so that a client can check replay: nothing lost, duplicated or reordered.
//
// [Start] serves [NewHandler] at /mcp on 127.0.0.1 by default. The handler
// keeps tool handlers cheap (no per-call logging or allocation beyond the
// SDK's) since it runs under load: thousands of calls per second, 1000+
// sessions with GET streams.
//
// # Owns and must not
//
// It owns the reference server: its options and their validation
// (options.go), the HTTP handler around the SDK's StreamableHTTPHandler
// (handler.go), session tracking, numbered notifications on the standalone
// stream and shutdown (sessions.go), the measuring tools (tools.go), the
// rest of MCP — template, completions, logging, subscriptions, list
// changes (resources.go) —, muting cancelled calls (cancel.go), the
// bounded event store (eventstore.go), the Origin and Host policy
// (origin.go), the loopback listener (server.go), HTTPS with a generated CA,
// mutual TLS, HTTP/2-only or HTTP/1.1-only ALPN and h2c (tls.go, Options.TLS
// and H2C), and a small OAuth authorization server for client credentials
// in front of /mcp (auth.go, Options.Auth; the go-sdk's bearer-token
// middleware and protected resource metadata handler).
//
// It must not be required for benchmarking other servers: the driver,
// workload, chaos, metrics and plots packages never import it; only
// cmd/mcpbench (serve, and run or probe without --url) and scripts/hostile
// start it. It must not know mcpbench's measurements (it announces ground
// truth in its tools' answers; judging is the client's), and must not
// listen beyond loopback unless its caller asks for another address.
//
// # Modes
//
//   - [ModeStateful] (default): Mcp-Session-Id sessions, answers as SSE, a
//     bounded memory event store (every stream resumable with Last-Event-ID),
//     standalone GET stream, DELETE ends the session. Protocol versions
//     2024-11-05 … 2025-11-25; a 2026-07-28 request other than server/discover
//     gets UnsupportedProtocolVersion (-32022, HTTP 400), and server/discover
//     lists only the legacy versions, so a 2026 client falls back to
//     initialize.
//   - [ModeJSON]: ModeStateful answering each POST with one application/json
//     object. Notifications and server→client requests made while a request
//     runs (progress, sampling, …) travel on the standalone GET stream
//     instead, with its event ids; the progress tool ignores close_after.
//   - [ModeStateless]: the SDK's stateless mode, legacy versions only: no
//     sessions, no event store (SSE answers carry no ids), GET and DELETE
//     answer 405, server→client requests impossible.
//   - [Mode2026]: protocol 2026-07-28 (SEP-2575) on the SDK's stateless mode:
//     no initialize, no sessions; every request carries
//     _meta["io.modelcontextprotocol/protocolVersion"] equal to its
//     MCP-Protocol-Version header, Mcp-Method (and Mcp-Name for tools/call,
//     resources/read, prompts/get) headers equal to the body, or gets 400
//     HeaderMismatch (-32020). server/discover answers supportedVersions
//     (2026-07-28 first), capabilities and serverInfo; results carry
//     "resultType" and _meta serverInfo. Answers are SSE without event ids or
//     priming event (resumption is gone in 2026-07-28); closing the response
//     stream cancels the request (the tool's context is cancelled), so a client
//     re-issues it with a new id: the count tool shows such double executions.
//     subscriptions/listen is served by the SDK (acknowledgement, then
//     list_changed notifications, which never happen here: the feature lists
//     are fixed; ticks and notify do not reach listen streams). Server→client
//     interactions are input_required results (multi round-trip, SEP-2322).
//     Legacy clients are served on the same handler as in ModeStateless: a
//     legacy initialize is answered (version negotiated, at most 2025-11-25)
//     without Mcp-Session-Id, every later request runs in a throwaway session
//     with default state, GET and DELETE answer 405.
//
// # Origin, Host and binding
//
// Every request whose Origin header is present and is neither the server's
// own origin (the scheme, host and port of the request's Host header, with
// localhost, 127.0.0.1 and [::1] equivalent on the same port) nor in
// Options.AllowedOrigins ("*" allows all) gets 403 with a JSON-RPC error
// body without id, whatever its method (2025-11-25 transports §Security
// Warning: DNS rebinding). Requests without Origin (non-browser clients)
// are served. The SDK also answers 403 when a request reaches a loopback
// listener with a Host header that is not a loopback name. [Start] listens
// on 127.0.0.1 by default; [Server.Loopback] tells whether it listens on
// loopback only (the server has no authentication).
//
// In the stateful modes a POST without Mcp-Session-Id other than initialize
// (or a 2026-07-28 server/discover) gets 400: "Servers that require a
// session ID SHOULD respond to requests without an MCP-Session-Id header
// (other than initialization) with HTTP 400 Bad Request".
//
// # Tools
//
// All take JSON-schema'd arguments (durations in milliseconds) and answer with
// text content, plus structuredContent where shown. Bad arguments are tool
// errors (isError), as is a tool the mode cannot serve.
//
//   - echo{text}: text.
//   - slow{ms}: sleeps ms, then "slept <ms> ms".
//   - progress{count, interval_ms, close_after, retry_ms}: if the request has a
//     progressToken, sends count notifications/progress (progress 1..count,
//     total count) interval_ms apart. In ModeStateful, after every close_after
//     notifications it closes the request's SSE stream (SSE polling,
//     SEP-1699): the client resumes with GET and Last-Event-ID, and the
//     remaining notifications and the result are replayed from the event
//     store. Closing after the last notification makes the result reachable
//     only by resuming. Result {"sent": n} and "sent <n>", n = count (0
//     without a progressToken).
//   - long{ms, interval_ms}: runs ms, sending progress k of ms/interval_ms
//     every interval_ms (default 100) at fixed offsets from its start, for live
//     resumes. Result {"sent": n}.
//   - payload{bytes}: a text of exactly bytes bytes of ASCII letters and
//     digits (no JSON escaping); more than MaxPayloadBytes (16 MiB less
//     4 KiB, so that the answer fits one event of mcpbench's default
//     max_event_bytes) is a tool error.
//   - notify{count, interval_ms}: returns at once with {"will_send": count},
//     then sends count numbered notifications (below) on the session's
//     standalone GET stream, interval_ms apart. Stateful modes only.
//   - sample{}, elicit{}, roots{}: send sampling/createMessage,
//     elicitation/create (message "mcpbench: confirm?", schema {ok: boolean}),
//     roots/list to the client within the request; return the sampled text
//     ({"text"}), the action ({"action"}), "<n> roots" ({"roots": n}). Under
//     2026-07-28 they return input_required instead (input request ids
//     "sample", "elicit", "roots"). A tool error in the legacy stateless
//     modes.
//   - ask{}: always returns input_required once — inputRequests
//     {"confirm": elicitation/create}, requestState "mcpbench/confirm" — and
//     completes with {"action"} when the call is retried with inputResponses
//     and the same requestState. For legacy stateful clients the SDK turns it
//     into an elicitation/create request within the call.
//   - count{key, ms}: counts one execution of key when it starts (so a request
//     cut mid-way and re-issued shows 2), sleeps ms, returns {"executions": n},
//     the starts of key so far. See [Stats].
//   - log{count, level}: sends count notifications/message at level (default
//     info; data {"n": k, "of": count}) on the call's stream through the
//     SDK's ServerSession.Log, so the client gets those at or above the level
//     it set with logging/setLevel (2026-07-28: in the request's _meta) and
//     none before it set one. Result {"sent": count}.
//   - touch{uri}: notifications/resources/updated to every session
//     subscribed to uri (on their GET streams) before it returns (a resource
//     of this server, else a tool error). Counted in Stats.Touches.
//   - toggle_tool{}: adds the tool mcpbench_extra, or removes it: every
//     session gets notifications/tools/list_changed (the SDK coalesces
//     changes 10 ms apart). Counted in Stats.ToolToggles.
//   - fail{message}: a tool error (isError) whose text is message.
//
// Resources mcpbench://static/small (100 bytes) and mcpbench://static/large
// (64 KiB), text/plain, are listed and readable; the template
// mcpbench://items/{id} reads as "item <id>". Every one of them can be
// subscribed to (resources/subscribe). Prompt greet{name} returns one
// user message, "Hello, <name>!". completion/complete offers names for
// greet's name and ids 1…100 for the template's id (those starting with the
// value, case-insensitive). Options.PageSize paginates the lists.
//
// # Cancellation
//
// On notifications/cancelled the SDK cancels the tool's context (the tools
// here return when it is) and then still writes a response for the
// request, an error result "context canceled" — which the spec says a
// receiver SHOULD NOT send. In the stateful modes the server notes every
// tools/call in flight per session and, when a notifications/cancelled
// names one, mutes its answer before the SDK sees the notification:
// nothing more reaches the client for it (Stats.Cancels, Stats.Muted). In
// ModeStateless the notification arrives in a throwaway session of its own
// and cannot reach the call, which runs to its end and answers. Under
// 2026-07-28 closing the response stream is the cancel (the SDK cancels
// the tool's context).
//
// # Wire shapes (stateful modes)
//
// Event ids are "<stream>_<index>": stream is a 26-character random id for
// the stream of a POST, and "" for the standalone GET stream (ids "_0",
// "_1", …); index counts the stream's events from 0. An SSE answer to a
// request from a 2025-11-25 client opens with a priming event (index 0, empty
// data), then carries messages, the response last:
//
//	event: prime
//	id: <stream>_0
//	data:
//
//	event: message
//	id: <stream>_1
//	data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":3}}
//
// When the progress tool closes the stream it sends, if retry_ms > 0, a close
// event carrying the retry hint (in ms), then ends the response:
//
//	event: close
//	retry: 250
//	data:
//
// (retry_ms 0 ends the response with no close event). GET with Last-Event-ID
// "<stream>_<k>" replays the events after k (not the priming event), then
// continues live until the response; 409 if the stream is attached to another
// request, 400 if the events were evicted from the store, 404 for an unknown
// session.
//
// The standalone GET stream opens with the comment ": ok" and has no priming
// event. Numbered notifications (notify tool, ticks) are logging
// notifications on it:
//
//	event: message
//	id: _<k-1>
//	data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"seq":<k>,"stream":"get"},"level":"info","logger":"mcpbench"}}
//
// seq starts at 1 per session and grows by 1, shared by notify and ticks; they
// are sent without waiting for logging/setLevel (the SDK's ServerSession.Log
// would drop them until the client sets a level). When the standalone stream
// carries nothing else, the k-th numbered notification has event id "_<k-1>".
//
// Standalone messages sent while no GET stream is connected are not dropped:
// the SDK stores them in the event store and delivers them to the next GET.
// A GET with Last-Event-ID "_<k>" replays those after k; a GET without it
// replays every retained standalone message from the oldest (the SDK replays
// from index 0 and answers 400 once the oldest were evicted; this package
// then starts the replay at the oldest retained one instead). So a client
// that opens a fresh GET after having read a previous one receives those
// messages again: resume with Last-Event-ID. Without an event store (the
// stateless modes) the SDK rejects messages made outside a request ("write
// to closed stream"), which is why notify is a tool error there.
//
// # Event store
//
// The stateful modes use this package's bounded memory store (see
// Options.EventStoreBytes) rather than the SDK's MemoryEventStore, whose
// eviction walks every stream of every session on each append once full and
// which keeps the streams of finished requests for the session's lifetime.
// Here eviction is O(1), oldest event of the process first, and a request
// stream emptied by eviction is eventually forgotten.
package refserver
