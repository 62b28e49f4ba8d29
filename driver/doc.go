// Package driver is mcpbench's MCP session over the Streamable HTTP
// transport (protocol versions 2025-03-26, 2025-06-18 and 2025-11-25, and
// the stateless 2026-07-28): sessions and their lanes, operations and
// their results, standalone GET streams, resumption with Last-Event-ID
// honouring retry hints, the replay ledger, cancellation, subscriptions,
// answers to server→client requests, DELETE. It builds on httpclient (the
// HTTP client), internal/sse (the SSE decoder) and internal/jsonrpc (the
// JSON-RPC scanner and renderers), and must not import chaos, workload,
// metrics or anything above them (internal/archtest). It measures what an SDK client hides: when a stream broke, what
// was replayed, how long a reconnect waited.
//
// # Wire picture (2025-11-25 transports §Streamable HTTP)
//
//	client                                         server
//	POST initialize ─────────────────────────────▶
//	     ◀──────── 200 JSON or SSE, Mcp-Session-Id: S (optional)
//	POST notifications/initialized (S, MCP-Protocol-Version: V) ──▶ 202
//	POST tools/call id=7, _meta.progressToken=7 ───▶
//	     ◀──────── 200 application/json {result}                    (one message), or
//	     ◀──────── 200 text/event-stream
//	                 id: a_0, data: ""            priming event (SEP-1699)
//	                 id: a_1, data: progress 1/3
//	                 ── connection breaks ──
//	GET (S, Last-Event-ID: a_1), after the retry hint ─▶
//	     ◀──────── 200 text/event-stream: a_2 progress 2/3, a_3 progress 3/3, a_4 {result}
//	GET (S) standalone stream ───────────────────▶ 200 SSE (or 405: none offered, 409: one open)
//	     ◀──────── notifications, server→client requests (answered by POST)
//	DELETE (S) ──────────────────────────────────▶ 200 (405: not allowed, fine)
//
// # Lifecycle
//
// NewSession (the session's first Lane), Initialize (initialize → Mcp-Session-Id → notifications/
// initialized; MCP-Protocol-Version on every later request from 2025-06-18),
// Do per operation, OpenStream for the GET stream, Close (stops the stream,
// DELETE). A 404 on a request that carries a session id means the session is
// gone: Do re-initializes once and re-sends (Result.Reinits). A Lane
// belongs to one goroutine (Lanes: more lanes of one session, for requests
// in flight at once); the session's GET stream runs in a goroutine of its
// own. Session is an alias of Lane (the name the callers use).
//
// # Resume rules
//
//   - A response stream (POST answered with SSE) or the GET stream that ends
//     or breaks before its end is resumed with GET + Last-Event-ID = the last
//     event id committed on that stream (an event cut mid-way does not count).
//   - Before reconnecting the client waits per Config.Reconnect: the last
//     retry hint (honour-retry, the default: SEP-1699 says the client MUST),
//     nothing (immediate), or exponential backoff with jitter from the hint.
//     Without a hint, Config.DefaultRetry (1 s). A hint over
//     Config.MaxRetryWait (DefaultMaxRetryWait, 30 s) waits that long,
//     counted when the wait begins (Result.RetryCapped, Resume.Capped).
//   - A server closing a stream on purpose after an event id (polling,
//     SEP-1699) is a clean break, not an error (Resume.Clean).
//   - Attempts that bring no new event id are bounded (MaxResumes); a stream
//     broken before any event id cannot be resumed (SEP-1335's window):
//     ErrUnresumable, or a re-send with a new id when ReissueUnresumable.
//   - Attempts that do bring a new event id are bounded too: at most
//     Config.MaxStreamResumes (1000) on one response stream and
//     Config.MaxResumeRate (100) per second on any stream, then
//     ErrResumeLimit (class resume-limit): a server ending its stream
//     after every event with retry 0 cannot spin the client.
//   - 404 on a resume: the session is gone (at a rel="stream" URL: the
//     link is, ErrStreamLinkMissing). 405: the server does not resume.
//   - A stream whose response carries a Link header with a same-origin
//     rel="stream" URL (SEP-1335, a draft servers built on it still speak)
//     is resumed there instead of the MCP endpoint, with Last-Event-ID when
//     it carried an event id and without one otherwise — so a stream cut
//     before any event is resumable through its link (Resume.Link). A link
//     to another origin is refused, never followed (Result.LinksRefused,
//     StreamStats.LinksRefused). The header is parsed once per stream
//     response, only when present (linkheader.go, RFC 8288).
//
// # Error taxonomy
//
// Errors wrap a sentinel (ErrSessionMissing, ErrBadResponse, ErrNoResponse,
// ErrStreamBroken, ErrUnresumable, ErrStreamIdle, ErrToolError,
// ErrRequestTimeout, ErrResponseTooLarge and sse.ErrEventTooLarge (each naming
// its limit and the setting that raises it: internal/setting, said as the
// front end names it); httpclient's ErrConnClosedAfterWrite (a request that reached
// the socket is never re-sent), ErrHTTP2Only, ErrNoHTTP2, ErrNoH2C,
// ErrGoAway (with its code and whether the server took the request),
// ErrConnectTimeout, ErrProxy, ErrAuthorization
// (classed http-status), ...), a *StatusError (with the Location,
// WWW-Authenticate, Retry-After and first body line the user needs) or a
// *jsonrpc.Error; Classify maps them to a Class (transport, timeout,
// http-status, session-missing, bad-response, sse-malformed, jsonrpc-error,
// tool-error, stream-broken, unresumable, canceled, resume-limit
// (ErrResumeLimit), link-missing (ErrStreamLinkMissing), ...), which is
// what reports aggregate by.
//
// # Timeouts
//
// RequestTimeout bounds each request until its answer begins (the headers
// of an SSE answer: a POST stream, the GET stream, a resume) or ends (a
// JSON answer). An open response stream is bounded by StreamIdleTimeout
// and the caller's context; the GET stream by the session's life only.
// Result.End is when the response message arrived: what the stream carries
// after it is judged by the ledger (unterminated after 2 s) but is not
// latency.
//
// # Memory
//
// A session keeps small buffers (sse.SmallBuffer); a message larger than that
// reserves its worst case from a Budget shared by many sessions and gives
// it back after, so a run holds about VUs × small buffers + the budget.
// JSON answers over MaxMessageBytes and SSE events over sse.MaxEventBytes fail
// with errors naming the limit.
//
// # Replay ledger
//
// Every stream the driver reads is judged by a Ledger until it ends, also
// after the response: duplicate event ids, progress values or responses
// (duplicated), progress going backwards (reordered), messages of another
// session (cross-stream: progress tokens are unique across the run), of
// another request of this session or of a request on the GET stream
// (misrouted), of this request after its response (late), the response or
// progress k of n never arriving anywhere (lost; n is the server's
// announced total or Op.ExpectProgress, judged for JSON answers too), a
// stream that does not end after its response (unterminated), a break
// before any id (unresumable), a resume accepted and then silent
// (silent-resume), a message of a cancelled request after the server
// acknowledged the cancel (after-cancel). The GET stream's ledger checks
// numbered notifications (gaps are lost) and foreign messages.
//
// # The rest of MCP
//
// List ops follow nextCursor to the last page (paginate.go); an op with
// Cancel sends notifications/cancelled for a share of its calls and judges
// what follows (cancel.go); log messages, tool-list changes and resource
// updates are counted on every stream (notify.go); resource subscriptions
// time each notifications/resources/updated from the change's send
// (subscribe.go).
//
// # Connections
//
// NewHTTPClient builds the client of package httpclient from Config's
// network settings. It picks the transport by Config.HTTP: ours (HTTP/1.1)
// for http:// and wherever ALPN picks http/1.1; net/http's
// HTTP/2 where ALPN picks h2 (--http auto), for every https:// request
// (--http 2), or as h2c with prior knowledge for http:// (--http 2). Under
// HTTP/2 each session has a connection of its own, which its POST
// streams, GET stream and answers share, as one client's would
// (Session.Close closes it). Every connection goes through one dialer:
// the proxy (Config.Proxy; CONNECT tunnels, absolute-form requests for
// http:// over HTTP/1.1), TLS (Config.TLS: CA, client certificate, server
// name; sessions resumed), with connections, proxied connections, TLS
// handshakes (timed) and resumptions counted apart from operations
// (httpclient.TransportStats). With Config.OAuth, a 401 Bearer challenge
// starts the MCP authorization flow for machine clients; the token is
// shared by the client's sessions and refreshed before it expires.
//
// # Files
//
// Where each concern lives, in the order a request flows through a
// session (the layers under it are packages of their own: the HTTP client
// is httpclient, the SSE decoder internal/sse, the JSON-RPC scanner and
// renderers internal/jsonrpc, the conformance probe package probe):
//
//   - config.go: Config and its defaults, protocol versions, NewHTTPClient,
//     header parsing and redaction; network.go: Config's network settings
//     as httpclient.Options (ValidateNet) and a session's own connections
//     (httpclient.PerSession).
//   - result.go: Op (what to send), Result and Resume (what happened).
//   - session.go: Lane (one lane: the handle a goroutine sends with; alias
//     Session) and sessionState (the session: what its lanes share),
//     NewSession, Lanes, the session's headers.
//   - initialize.go: Initialize and the initialization exchange
//     (initialize and notifications/initialized; server/discover for
//     2026-07-28).
//   - do.go: one operation (Do): the request rendered, its timer and
//     context, re-initialize on 404, re-issue, input rounds, pages, and
//     its first and last steps (cancel armed, change noted, settled).
//   - send.go: one HTTP request: the session's headers, redirects, the
//     reusable request body.
//   - answer.go: a request's answer: the POST exchange, a JSON answer
//     (batch, gzip), each incoming message judged (handle), answers to
//     server→client requests.
//   - read.go: media types, bodies read within max_message_bytes, large
//     messages held against the memory budget (budget.go: Budget).
//   - stream.go: a POST's SSE answer: events, the tail after the response,
//     resume with Last-Event-ID, the reconnect delay.
//   - mailbox.go: how a message finds its request across the lanes and
//     streams of a session (inflight, deliver, toSibling, the late ones);
//     late.go: progress still expected after the response, awaited beside
//     the lane (Config.SettleBeside, Result.Pending, Settle, Clone).
//   - timeouts.go: the timeout errors and the stream idle watch.
//   - getstream.go: the standalone GET stream (OpenStream, StreamStats).
//   - linkheader.go: Link headers (RFC 8288) and a stream's same-origin
//     rel="stream" resume URL (SEP-1335).
//   - modern.go: what 2026-07-28 adds (_meta, Mcp-Method/Mcp-Name and
//     parameter headers, input_required answers), Negotiate, PrepareOps.
//   - paginate.go: list ops follow nextCursor (Result.Pages, MaxPages).
//   - cancel.go: Op.Cancel, notifications/cancelled and its judgement.
//   - notify.go: Notifications (log messages, list changes, updates).
//   - subscribe.go: subscriptions, changes, ResourceUpdate and its latency.
//   - ledger.go: the replay ledger and its verdicts.
//   - errors.go: sentinels, StatusError (and the status errors of an
//     answer), Class and Classify.
//   - close.go, hygiene.go: Close, and the deleted-session check it makes
//     (Hygiene); applies.go: ProbeGET (does the server offer a GET stream).
//   - probe_api.go: the wire pieces the conformance probe (package probe)
//     shares with Session: Config.ModernMeta, NameHeader,
//     DiscoverVersions, StreamLink.
//
// # Cost
//
// The hot path does not use reflection or maps: messages are validated and
// classified in one pass (jsonrpc.Parse), requests are rendered with append,
// buffers are reused across operations, and httpclient's HTTP/1.1
// transport does the HTTP I/O in the calling goroutine. See BenchmarkToolsCallSSE.
package driver
