package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrNotMCPEndpoint is wrapped by the error Probe returns when neither era
// answers: no server/discover result and no initialize result carrying a
// protocolVersion. The message says what the endpoint answered instead
// (e.g. "HTTP 404 to every request").
var ErrNotMCPEndpoint = errors.New("not an MCP endpoint")

// Results of a ProbeCase.
const (
	ProbeOK      = "ok"      // the server does what the cited sentence asks
	ProbeDiffers = "differs" // it does not; Detail says what it did
	ProbeNA      = "n/a"     // the check does not apply; Detail says why
)

// ProbeReport is what a server speaks and how it meets the transport's
// rules, from a few requests (Probe). Marshalled as JSON it is the
// machine-readable form of `mcpbench probe`.
type ProbeReport struct {
	URL string `json:"url"`
	// MCPEndpoint reports that one era answered: a server/discover result,
	// or an initialize result with a protocolVersion.
	MCPEndpoint bool `json:"mcp_endpoint"`
	// Requests is the number of HTTP requests the probe sent (about 20 to
	// 40: it never loads the server).
	Requests int `json:"requests"`

	// Modern (2026-07-28) era.
	Discover struct {
		Status    int             `json:"status"`
		Modern    bool            `json:"modern"`
		Versions  []string        `json:"supported_versions,omitempty"`
		Error     string          `json:"error,omitempty"`
		Result    json.RawMessage `json:"result,omitempty"`
		AnswerAs  string          `json:"answer_as,omitempty"` // json or sse
		ListenOK  bool            `json:"listen_stream"`
		ListenAck bool            `json:"listen_acknowledged"`
	} `json:"discover"`

	// Legacy era: the version negotiated for each version requested.
	Legacy []ProbeInit `json:"legacy"`

	Sessions   string `json:"sessions"`    // "stateful" (Mcp-Session-Id), "stateless", or "none" (no legacy era)
	Answers    string `json:"answers"`     // "json", "sse", "mixed" or "-": how requests were answered
	EventIDs   bool   `json:"event_ids"`   // some SSE event carried an id
	Priming    bool   `json:"priming"`     // an SSE answer opened with an id and empty data
	RetryHints []int  `json:"retry_hints"` // retry fields seen (ms), in order
	GETStream  string `json:"get_stream"`  // "offered", "not offered (405)", "HTTP <n>", "-"
	// Resumable sums up the resume checks: "yes: …", "no: …", "not
	// resumable (no event ids)", or "not checked: …".
	Resumable string `json:"resumable"`
	// Streaming is the answer to a tool call made to stream.
	Streaming   ProbeStream `json:"streaming"`
	Recommended string      `json:"recommended"` // what --protocol auto picks ("" when not an MCP endpoint)
	Notes       []string    `json:"notes,omitempty"`

	// Cases are the checks, in the order they ran; each cites the sentence
	// of the spec it checks.
	Cases []ProbeCase `json:"checks"`
	// Checked counts the cases that applied; Differ those that differ.
	Checked int `json:"checked"`
	Differ  int `json:"differ"`
}

// ProbeInit is one legacy initialize attempt.
type ProbeInit struct {
	Requested  string `json:"requested"`
	Negotiated string `json:"negotiated,omitempty"`
	Status     int    `json:"status"`
	SessionID  bool   `json:"session_id"`
	Error      string `json:"error,omitempty"`
}

// ProbeStream describes the answer to the tool call Probe makes to get a
// streaming answer: the reference server's progress tool, or a read-only
// tool without required arguments, called with a progressToken and
// Accept listing both media types.
type ProbeStream struct {
	Tool string `json:"tool,omitempty"` // the tool called; "" when none could be
	Args string `json:"arguments,omitempty"`
	Era  string `json:"protocol,omitempty"`
	// Why says why no streaming answer could be triggered.
	Why        string `json:"why,omitempty"`
	Status     int    `json:"status,omitempty"`
	AnsweredAs string `json:"answered_as,omitempty"` // "sse" or "json"
	Events     int    `json:"events"`                // SSE events
	Progress   int    `json:"progress"`              // notifications/progress
	EventIDs   bool   `json:"event_ids"`
	Priming    bool   `json:"priming"`
	RetryHints []int  `json:"retry_hints"`
	Response   bool   `json:"response"` // the response arrived on the answer
	Ended      bool   `json:"ended"`    // the server ended the answer
}

// ProbeCase is one check: what the server answered against what the cited
// sentence of the spec asks.
type ProbeCase struct {
	Case     string `json:"case"`
	Status   int    `json:"status,omitempty"` // HTTP status (0: none, or not an HTTP exchange)
	RPCCode  int    `json:"jsonrpc_code,omitempty"`
	Expected string `json:"expected"`
	// Result is ProbeOK, ProbeDiffers or ProbeNA; OK is Result == ProbeOK.
	Result string `json:"result"`
	OK     bool   `json:"ok"`
	// Detail says what differed, why the case does not apply, or a remark.
	Detail string `json:"detail,omitempty"`
	// Spec quotes (shortly) the sentence checked, with its document and
	// section.
	Spec string `json:"spec"`
}

// Sentences the checks cite: 2025-11-25 basic/transports unless named.
const (
	specOrigin        = `2025-11-25 transports §Security Warning: "If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."`
	specSessionChars  = `2025-11-25 transports §Session Management: "The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)."`
	specSessionGone   = `2025-11-25 transports §Session Management: "The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found."`
	specNoSession     = `2025-11-25 transports §Session Management: "Servers that require a session ID SHOULD respond to requests without an MCP-Session-Id header (other than initialization) with HTTP 400 Bad Request."`
	specDelete        = `2025-11-25 transports §Session Management: clients "SHOULD send an HTTP DELETE … to explicitly terminate the session"; "The server MAY respond to this request with HTTP 405 Method Not Allowed"`
	specVersion       = `2025-11-25 transports §Protocol Version Header: "If the server receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond with 400 Bad Request."`
	specNotification  = `2025-11-25 transports §Sending Messages: "If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body."`
	specBadInput      = `2025-11-25 transports §Sending Messages: "If the server cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request)."`
	specAccept        = `2025-11-25 transports §Sending Messages: "The client MUST include an Accept header, listing both application/json and text/event-stream as supported content types."`
	specContentType   = `2025-11-25 transports §Sending Messages: "The body of the POST request MUST be a single JSON-RPC request, notification, or response."; RFC 9110 §15.5.16: 415 Unsupported Media Type`
	specMethods       = `2025-11-25 transports §Streamable HTTP: "The server MUST provide a single HTTP endpoint path … that supports both POST and GET methods"; RFC 9110 §15.5.6: other methods get 405 with Allow`
	specTerminate     = `2025-11-25 transports §Sending Messages: "After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream."`
	specRetry         = `2025-11-25 transports §Sending Messages: "If the server does close the connection prior to terminating the SSE stream, it SHOULD send an SSE event with a standard retry field before closing the connection."`
	specResume        = `2025-11-25 transports §Resumability and Redelivery: "The server MAY use this header to replay messages that would have been sent after the last event ID, on the stream that was disconnected"`
	specPoll          = `2025-11-25 transports §Sending Messages: "the server MAY close the connection (without terminating the SSE stream) … The client SHOULD then \"poll\" the SSE stream by attempting to reconnect."`
	specGET           = `2025-11-25 transports §Listening for Messages from the Server: "The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405 Method Not Allowed"`
	specSecondGET     = `2025-11-25 transports §Multiple Connections: "The server MUST send each of its JSON-RPC messages on only one of the connected streams"`
	specUnknownLastID = `2025-11-25 transports §Resumability and Redelivery: "The server MUST NOT replay messages that would have been delivered on a different stream."`
	spec401           = `RFC 9110 §15.5.2: "The server generating a 401 response MUST send a WWW-Authenticate header field"; 2025-11-25 authorization: its resource_metadata parameter locates the Protected Resource Metadata (RFC 9728)`
	specMismatch      = `2026-07-28 Streamable HTTP §Server Validation: "Servers MUST reject requests with a 400 Bad Request HTTP status and JSON-RPC error code -32020 (HeaderMismatch) if any validation fails."`
	specMissingHeader = `2026-07-28 Streamable HTTP §Server Validation: failures include "A required standard header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) is missing."`
	specUnknownMethod = `2026-07-28 Streamable HTTP: "If the server does not implement the requested RPC method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601"`
	specFuture        = `2026-07-28 Streamable HTTP: "If the server does not implement the requested protocol version … it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError"`
	specModernGET     = `2026-07-28 Streamable HTTP §Earlier Streamable HTTP Revisions: "HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed."`
)

// Probe limits.
const (
	probeTimeout    = 5 * time.Second        // one request, its answer read included
	probeWindow     = 500 * time.Millisecond // how long a GET stream is read
	probeGrace      = time.Second            // how long an SSE answer may stay open after its response
	probeResumeWait = 2 * time.Second        // a finished stream's replay must end within this
	probeMaxEvents  = 1000                   // SSE events read per answer
	probeMaxPolls   = 3                      // resumes of a stream the server keeps closing
	probeMaxBody    = 1 << 20                // bytes read per answer
	probeOrigin     = "http://evil.example"  // the foreign Origin sent
	probeToken      = "mcpbench-probe-1"     // progressToken of the streaming call
	probePollToken  = "mcpbench-probe-2"     // progressToken of the polling call
)

// Probe sends a few requests (about 20 to 40, one at a time but for two GET
// streams; it never loads the server) to learn what a server speaks, and
// checks it against the Streamable HTTP transport (2025-11-25 transports;
// 2026-07-28 Streamable HTTP for that era):
//
//   - the eras and versions: server/discover, and initialize with each
//     legacy version;
//   - sessions (and the characters of the session id), JSON or SSE
//     answers;
//   - a streaming answer, triggered by calling a tool with a progressToken:
//     the reference server's progress tool, or else a read-only tool
//     (annotations.readOnlyHint) without required arguments, never any
//     other tool. It records event ids, a priming event, retry hints, and
//     whether the stream ends after its response;
//   - resumability: a real resume of a finished stream (GET with
//     Last-Event-ID = its first event id must replay exactly the later
//     events, then end), and of a stream the server closed (SSE polling;
//     the reference progress tool closes one on request);
//   - the status codes of the transport's error cases: unknown, missing and
//     deleted session ids (POST and GET), DELETE twice, an unsupported
//     MCP-Protocol-Version, malformed JSON, a wrong Accept or Content-Type,
//     a foreign Origin (403), PUT (405), a second concurrent GET, a GET with
//     an unknown Last-Event-ID, the 401 challenge; and the 2026-07-28 header
//     validation.
//
// Each case cites the sentence it checks; cases that do not apply say why.
// cfg.Header is sent with every request and never appears in the report.
//
// Probe returns an error for a server that cannot be reached (a transport
// error on the first request), and an error wrapping ErrNotMCPEndpoint,
// with the report, when neither era answers. When ctx ends mid-way it
// returns context.Cause(ctx) and no report. It is safe to call
// concurrently; it does not change cfg.
func Probe(ctx context.Context, cfg *Config) (*ProbeReport, error) {
	r := &ProbeReport{URL: cfg.URL, Sessions: "none", GETStream: "-", Answers: "-", RetryHints: []int{}}
	r.Streaming.RetryHints = []int{}
	c := *cfg
	hc := c.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(&c)
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	p := &prober{cfg: &c, rt: rt, u: c.URL, r: r, nextID: 900}

	first := p.discover(ctx)
	if first.err != nil {
		return nil, fmt.Errorf("server/discover: %w", first.err)
	}
	p.initialize(ctx)
	discovered := r.Discover.Modern || len(r.Discover.Result) > 0
	r.MCPEndpoint = discovered || p.legacy
	switch {
	case r.Discover.Modern:
		r.Recommended = Protocol20260728
	case p.legacy:
		r.Recommended = p.proto
	}
	if !r.MCPEndpoint {
		p.authCase()
		p.finish()
		return r, fmt.Errorf("%w: %s", ErrNotMCPEndpoint, p.notMCP())
	}
	if p.legacy {
		if p.sid != "" {
			r.Sessions = "stateful"
		} else {
			r.Sessions = "stateless"
		}
		p.sessionIDCase()
		p.notificationCase(ctx)
	}
	p.useModern = r.Discover.Modern || !p.legacy
	if r.Discover.Modern {
		p.modernCases(ctx)
	}
	p.streaming(ctx)
	p.requestCases(ctx)
	if p.legacy {
		p.getCases(ctx)
	}
	p.resumeCases(ctx)
	if p.legacy {
		p.deleteCases(ctx)
	} else {
		p.legacyNA()
	}
	p.authCase()
	p.finish()
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx) // interrupted: the cases after it are void
	}
	return r, nil
}

// prober holds one probe's state. It is used by one goroutine, but for the
// concurrent GET streams, which call do only.
type prober struct {
	cfg *Config
	rt  http.RoundTripper
	u   string
	r   *ProbeReport

	legacy    bool   // a legacy initialize succeeded
	proto     string // the version it negotiated
	sid       string // its Mcp-Session-Id ("" when none)
	useModern bool   // the streaming call and the era-independent cases use 2026-07-28
	nextID    int64

	json, sse int
	firstAns  []string // what server/discover and the initializes got, for notMCP

	unauthorized *answer // the first 401
	unauthWhat   string

	// The streaming answer and what the resume checks need.
	tool     *probeTool
	stream   *answer // the streaming call's answer (with a resume's events appended)
	closed   *answer // an SSE answer the server ended before its response
	closedBy string  // the call that got it
	closedID int64   // that call's JSON-RPC id
	closedTk string  // and its progressToken
	getIDs   *answer // the first GET stream, when it carried event ids
	polled   bool    // a resume of closed completed the stream
}

// answer is one HTTP exchange as the probe saw it.
type answer struct {
	status int
	ct     string
	hdr    http.Header
	body   []byte     // a non-SSE body (up to probeMaxBody)
	events []sseEvent // an SSE body's events
	sse    bool
	ended  bool // the server ended the body (it was not cut by the probe)
	// response is the JSON-RPC response to the request's id, when seen.
	response []byte
	err      error
}

type sseEvent struct {
	ID    string
	HasID bool
	Type  string
	Data  string
	Retry int // -1: none
}

// req is one request of the probe.
type req struct {
	method string
	h      map[string]string // headers over cfg.Header; "" deletes one
	body   string
	id     int64         // a POST request's JSON-RPC id: read its SSE answer up to the response, plus probeGrace
	window time.Duration // an SSE answer is read this long at most (0: until its end or probeTimeout)
}

func (p *prober) id() int64 { p.nextID++; return p.nextID }

// send sends q, counts it, and notes a 401.
func (p *prober) send(ctx context.Context, q req) answer {
	p.r.Requests++
	a := p.do(ctx, q)
	p.seen(&a, q)
	return a
}

func (p *prober) seen(a *answer, q req) {
	if a.status == http.StatusUnauthorized && p.unauthorized == nil {
		p.unauthorized = a
		p.unauthWhat = q.method
		if m := Field([]byte(q.body), "method"); len(m) > 0 {
			p.unauthWhat += " " + strings.Trim(string(m), `"`)
		}
	}
}

// do sends one raw request and reads its answer: a non-SSE body whole (up
// to probeMaxBody), an SSE body until its end, the response to q.id plus
// probeGrace, q.window, or probeTimeout, whichever comes first. It touches
// no prober state, so two may run at once.
func (p *prober) do(ctx context.Context, q req) answer {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var rd io.Reader
	if q.body != "" {
		rd = strings.NewReader(q.body)
	}
	hr, err := http.NewRequestWithContext(ctx, q.method, p.u, rd)
	if err != nil {
		return answer{err: err}
	}
	for k, v := range p.cfg.Header {
		hr.Header[k] = v
	}
	for k, v := range q.h {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	resp, err := p.rt.RoundTrip(hr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return answer{err: err}
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, ct: resp.Header.Get("Content-Type"), hdr: resp.Header}
	if mediaType(a.ct) != mtSSE {
		a.body, _, err = readAll(resp.Body, nil, probeMaxBody)
		a.ended = err == nil
		if mediaType(a.ct) == mtJSON && q.id != 0 {
			if m, err := ParseMessage(bytes.TrimSpace(a.body)); err == nil && m.Kind == KindResponse && IDEqual(m.ID, q.id) {
				a.response = a.body
			}
		}
		return a
	}
	a.sse = true
	var cut atomic.Bool
	stop := func() { cut.Store(true); resp.Body.Close() }
	if q.window > 0 {
		t := time.AfterFunc(q.window, stop)
		defer t.Stop()
	}
	var grace *time.Timer
	d := NewSSEDecoder(resp.Body)
	for range probeMaxEvents {
		ev, err := d.Next()
		if err != nil {
			a.ended = errors.Is(err, io.EOF) && !cut.Load()
			break
		}
		e := sseEvent{ID: string(ev.ID), HasID: ev.HasID, Type: string(ev.Type), Data: string(ev.Data), Retry: ev.Retry}
		a.events = append(a.events, e)
		if q.id != 0 && a.response == nil && e.Data != "" {
			if m, err := ParseMessage([]byte(e.Data)); err == nil && m.Kind == KindResponse && IDEqual(m.ID, q.id) {
				a.response = []byte(e.Data)
				grace = time.AfterFunc(probeGrace, stop)
			}
		}
	}
	if grace != nil {
		grace.Stop()
	}
	return a
}

// message returns the first JSON-RPC message of a JSON answer (or nil).
func (a *answer) message() (Message, bool) {
	if a.response != nil {
		m, err := ParseMessage(a.response)
		return m, err == nil
	}
	if mediaType(a.ct) != mtJSON {
		return Message{}, false
	}
	m, err := ParseMessage(bytes.TrimSpace(a.body))
	return m, err == nil && m.Kind != KindInvalid
}

// rpcCode is the JSON-RPC error code of the answer (0 if none).
func (a *answer) rpcCode() int {
	m, ok := a.message()
	if !ok || m.Error == nil {
		return 0
	}
	return parseRPCError(m.Error).Code
}

// describe says what came back, e.g. "HTTP 404 (text/plain)".
func (a *answer) describe() string {
	if a.err != nil {
		return "no answer: " + a.err.Error()
	}
	ct := a.ct
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	if ct == "" {
		return "HTTP " + strconv.Itoa(a.status)
	}
	return fmt.Sprintf("HTTP %d (%s)", a.status, strings.TrimSpace(ct))
}

// ids returns the events that carried an id.
func (a *answer) ids() []sseEvent {
	var out []sseEvent
	for _, e := range a.events {
		if e.HasID {
			out = append(out, e)
		}
	}
	return out
}

// note records what an answer to a request shows: JSON or SSE, ids,
// priming, retry hints.
func (p *prober) note(a *answer, post bool) {
	switch {
	case !post || a.status != http.StatusOK:
	case mediaType(a.ct) == mtJSON:
		p.json++
	case a.sse:
		p.sse++
	}
	for i, e := range a.events {
		if e.HasID {
			p.r.EventIDs = true
			if post && i == 0 && e.Data == "" {
				p.r.Priming = true
			}
		}
		if e.Retry >= 0 {
			p.r.RetryHints = append(p.r.RetryHints, e.Retry)
		}
	}
}

func (p *prober) add(c ProbeCase) {
	c.OK = c.Result == ProbeOK
	p.r.Cases = append(p.r.Cases, c)
}

// result is ProbeOK or ProbeDiffers.
func result(ok bool) string {
	if ok {
		return ProbeOK
	}
	return ProbeDiffers
}

// check adds a case judged on an answer.
func (p *prober) check(name, expected, spec string, a answer, ok bool, detail string) {
	res := result(ok)
	if a.err != nil && detail == "" {
		detail = a.describe()
	}
	p.add(ProbeCase{Case: name, Status: a.status, RPCCode: a.rpcCode(), Expected: expected, Result: res, Detail: detail, Spec: spec})
}

// na adds a case that does not apply, saying why.
func (p *prober) na(name, expected, spec, why string) {
	p.add(ProbeCase{Case: name, Expected: expected, Result: ProbeNA, Detail: why, Spec: spec})
}

// finish fills the summary fields.
func (p *prober) finish() {
	r := p.r
	switch {
	case p.json > 0 && p.sse > 0:
		r.Answers = "mixed"
	case p.sse > 0:
		r.Answers = "sse"
	case p.json > 0:
		r.Answers = "json"
	}
	r.Checked, r.Differ = 0, 0
	for _, c := range r.Cases {
		if c.Result != ProbeNA {
			r.Checked++
		}
		if c.Result == ProbeDiffers {
			r.Differ++
		}
	}
	if r.MCPEndpoint && len(r.RetryHints) == 0 {
		r.Notes = append(r.Notes, "no retry hint seen (servers send one before closing a stream on purpose)")
	}
}

const probeAccept = "application/json, text/event-stream"

// legacyH returns the headers of a request in the legacy session; kv
// overrides them ("" deletes one).
func (p *prober) legacyH(kv ...string) map[string]string {
	m := map[string]string{"Content-Type": "application/json", "Accept": probeAccept, HeaderProtocolVersion: p.proto}
	if p.sid != "" {
		m[HeaderSessionID] = p.sid
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// modernH returns the headers of a 2026-07-28 request; kv overrides them.
func (p *prober) modernH(method string, kv ...string) map[string]string {
	m := map[string]string{"Content-Type": "application/json", "Accept": probeAccept, HeaderProtocolVersion: Protocol20260728, HeaderMethod: method}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// call builds a request in the probe's era: method with params (a JSON
// object or "") and extra _meta members (without braces, or "").
func (p *prober) call(method, params, meta string) req {
	id := p.id()
	if p.useModern {
		mm := modernMeta(p.cfg, Protocol20260728)
		if meta != "" {
			mm = append([]byte(meta+","), mm...)
		}
		h := p.modernH(method)
		if n := mcpName(method, []byte(params)); n != "" {
			h[HeaderName] = EncodeHeaderValue(n)
		}
		return req{method: http.MethodPost, h: h, body: string(appendRequest(nil, id, method, []byte(params), mm)), id: id}
	}
	return req{method: http.MethodPost, h: p.legacyH(), body: string(appendRequest(nil, id, method, []byte(params), []byte(meta))), id: id}
}

// harmless is a request every server answers without side effects: ping
// (legacy) or tools/list (2026-07-28 has no ping).
func (p *prober) harmless() req {
	if p.useModern {
		return p.call("tools/list", "", "")
	}
	return p.call("ping", "", "")
}

// with returns q with headers overridden.
func (q req) with(kv ...string) req {
	h := make(map[string]string, len(q.h)+len(kv)/2)
	for k, v := range q.h {
		h[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	q.h = h
	return q
}

// discover sends server/discover (2026-07-28) and decides the era as
// Negotiate does.
func (p *prober) discover(ctx context.Context) answer {
	id := p.id()
	body := string(appendRequest(nil, id, "server/discover", nil, modernMeta(p.cfg, Protocol20260728)))
	a := p.send(ctx, req{method: http.MethodPost, h: p.modernH("server/discover"), body: body, id: id})
	if a.err != nil {
		return a
	}
	d := &p.r.Discover
	d.Status = a.status
	p.firstAns = append(p.firstAns, "server/discover: "+a.describe())
	m, ok := a.message()
	switch {
	case ok && m.Kind == KindResponse && m.Result != nil:
		var res struct {
			Supported []string `json:"supportedVersions"`
		}
		json.Unmarshal(m.Result, &res)
		d.Result = bytes.Clone(m.Result)
		d.Versions = res.Supported
		for _, v := range ModernProtocols {
			if slices.Contains(res.Supported, v) {
				d.Modern = true
			}
		}
		if !d.Modern {
			d.Error = fmt.Sprintf("server/discover lists no modern version we speak (%v): legacy", res.Supported)
		}
	case ok && m.Kind == KindResponse && m.Error != nil:
		var e struct {
			Code int `json:"code"`
			Data struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		}
		json.Unmarshal(m.Error, &e)
		if e.Code == CodeUnsupportedVersion {
			for _, v := range ModernProtocols {
				if slices.Contains(e.Data.Supported, v) {
					d.Modern = true
					d.Versions = e.Data.Supported
				}
			}
		}
		if !d.Modern {
			d.Error = fmt.Sprintf("server/discover: HTTP %d, JSON-RPC error %d: legacy", a.status, e.Code)
		}
	default:
		d.Error = fmt.Sprintf("server/discover: %s without a modern JSON-RPC answer: legacy", a.describe())
	}
	return a
}

// initialize tries each legacy version; the first that succeeds (newest
// first) is the session the legacy cases use, the others are deleted.
func (p *prober) initialize(ctx context.Context) {
	for _, v := range LegacyProtocols {
		pi := ProbeInit{Requested: v}
		id := p.id()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcpbench-probe","version":%q}}}`,
			id, v, cmpOr(p.cfg.ClientVersion, "dev"))
		a := p.send(ctx, req{method: http.MethodPost, h: map[string]string{"Content-Type": "application/json", "Accept": probeAccept}, body: body, id: id})
		pi.Status = a.status
		p.firstAns = append(p.firstAns, "initialize "+v+": "+a.describe())
		p.note(&a, true)
		var res struct {
			V string `json:"protocolVersion"`
		}
		m, ok := a.message()
		switch {
		case a.err != nil:
			pi.Error = a.describe()
		case !ok || m.Kind != KindResponse:
			pi.Error = a.describe() + " without a JSON-RPC response"
		case m.Error != nil:
			e := parseRPCError(m.Error)
			pi.Error = fmt.Sprintf("%s: JSON-RPC error %d: %s", a.describe(), e.Code, e.Message)
		case json.Unmarshal(m.Result, &res) != nil || res.V == "":
			pi.Error = a.describe() + ": the result has no protocolVersion"
		}
		if pi.Error == "" {
			pi.Negotiated = res.V
			sid := a.hdr.Get(HeaderSessionID)
			pi.SessionID = sid != ""
			if !p.legacy {
				p.legacy, p.proto, p.sid = true, res.V, sid
			} else if sid != "" {
				p.send(ctx, req{method: http.MethodDelete, h: map[string]string{HeaderSessionID: sid, HeaderProtocolVersion: res.V}})
			}
		}
		p.r.Legacy = append(p.r.Legacy, pi)
	}
}

// notMCP says what the endpoint answered instead of MCP.
func (p *prober) notMCP() string {
	var statuses []int
	for _, c := range p.r.Legacy {
		statuses = append(statuses, c.Status)
	}
	statuses = append(statuses, p.r.Discover.Status)
	same := true
	for _, s := range statuses {
		same = same && s == statuses[0] && s != 0
	}
	switch {
	case same && statuses[0] == http.StatusUnauthorized:
		msg := "HTTP 401 to every request: the server wants authorization"
		if ch := p.unauthorized.hdr.Get("WWW-Authenticate"); ch != "" {
			msg += " (WWW-Authenticate: " + clip(ch, 200) + ")"
		}
		if _, ok := p.cfg.Header["Authorization"]; ok {
			return msg + "; the Authorization header given was refused"
		}
		return msg + "; pass a token with -H 'Authorization: Bearer …'"
	case same:
		return fmt.Sprintf("HTTP %d to every request (server/discover, initialize %s)", statuses[0], strings.Join(LegacyProtocols, ", "))
	}
	return "no server/discover result and no initialize result: " + strings.Join(p.firstAns, "; ")
}

// plural returns "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// clip shortens s to n bytes for display.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (p *prober) sessionIDCase() {
	const name, want = "session id characters", "visible ASCII 0x21-0x7E"
	if p.sid == "" {
		p.na(name, want, specSessionChars, "server has no sessions")
		return
	}
	for i := 0; i < len(p.sid); i++ {
		if c := p.sid[i]; c < 0x21 || c > 0x7e {
			p.add(ProbeCase{Case: name, Expected: want, Result: ProbeDiffers, Spec: specSessionChars,
				Detail: fmt.Sprintf("byte %d of the %d-byte Mcp-Session-Id is 0x%02X", i, len(p.sid), c)})
			return
		}
	}
	p.add(ProbeCase{Case: name, Expected: want, Result: ProbeOK, Spec: specSessionChars, Detail: fmt.Sprintf("%d characters", len(p.sid))})
}

// notificationCase sends notifications/initialized, which the legacy
// session needs anyway, and checks its 202.
func (p *prober) notificationCase(ctx context.Context) {
	a := p.send(ctx, req{method: http.MethodPost, h: p.legacyH(), body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
	detail := ""
	if a.status == http.StatusAccepted && len(a.body) > 0 {
		detail = fmt.Sprintf("202 with a %d-byte body", len(a.body))
	} else if a.status != http.StatusAccepted {
		detail = a.describe()
	}
	p.check("notification", "202, no body", specNotification, a, a.status == http.StatusAccepted && len(a.body) == 0 && !a.sse, detail)
}

// probeTool is the tool the streaming call uses.
type probeTool struct {
	name      string
	ref       bool // the reference server's progress tool
	canClose  bool // it takes close_after and retry_ms
	schema    json.RawMessage
	available int // tools listed
}

// pickTool chooses the tool to call from a tools/list result: the
// reference server's progress tool, else a read-only tool without required
// arguments. Nothing else is ever called: a probe must not change state.
func pickTool(result []byte) *probeTool {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return nil
	}
	type schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	var readOnly *probeTool
	for _, t := range res.Tools {
		var s schema
		json.Unmarshal(t.InputSchema, &s)
		if t.Name == "progress" && s.Properties["count"] != nil {
			_, ca := s.Properties["close_after"]
			_, rm := s.Properties["retry_ms"]
			return &probeTool{name: t.Name, ref: true, canClose: ca && rm, schema: t.InputSchema, available: len(res.Tools)}
		}
		if readOnly == nil && t.Annotations.ReadOnly && len(s.Required) == 0 {
			readOnly = &probeTool{name: t.Name, schema: t.InputSchema}
		}
	}
	if readOnly != nil {
		readOnly.available = len(res.Tools)
		return readOnly
	}
	return &probeTool{available: len(res.Tools)}
}

// toolCall builds a tools/call with a progressToken.
func (p *prober) toolCall(args, token string) req {
	params := `{"name":` + strconv.Quote(p.tool.name) + `,"arguments":` + args + `}`
	q := p.call("tools/call", params, `"progressToken":`+strconv.Quote(token))
	if p.useModern {
		if hs, err := ParamHeaders(p.tool.schema, []byte(args)); err == nil {
			for _, h := range hs {
				q.h[h[0]] = h[1]
			}
		}
	}
	return q
}

// streaming lists the tools, calls one with a progressToken to get a
// streaming answer, and records what the answer shows.
func (p *prober) streaming(ctx context.Context) {
	st := &p.r.Streaming
	st.Era = p.proto
	if p.useModern {
		st.Era = Protocol20260728
	}
	a := p.send(ctx, p.call("tools/list", "", ""))
	p.note(&a, true)
	if p.useModern && a.status == http.StatusOK {
		p.r.Discover.AnswerAs = "json"
		if a.sse {
			p.r.Discover.AnswerAs = "sse"
		}
	}
	m, ok := a.message()
	if !ok || m.Result == nil {
		st.Why = "tools/list: " + a.describe() + " without a result"
		return
	}
	p.tool = pickTool(m.Result)
	if p.tool == nil || p.tool.name == "" {
		n := 0
		if p.tool != nil {
			n = p.tool.available
		}
		p.tool = nil
		st.Why = fmt.Sprintf("could not trigger a streaming answer: of %d tools listed, none is the reference progress tool or read-only (annotations.readOnlyHint) without required arguments, and the probe calls no other", n)
		return
	}
	st.Tool = p.tool.name
	st.Args = "{}"
	if p.tool.ref {
		st.Args = `{"count":3}`
	}
	q := p.toolCall(st.Args, probeToken)
	a = p.send(ctx, q)
	p.note(&a, true)
	st.Status = a.status
	switch {
	case a.status != http.StatusOK:
		st.Why = "tools/call " + p.tool.name + ": " + a.describe()
		return
	case a.sse:
		st.AnsweredAs = "sse"
	case mediaType(a.ct) == mtJSON:
		st.AnsweredAs = "json"
	}
	st.Events = len(a.events)
	for i, e := range a.events {
		if e.HasID {
			st.EventIDs = true
			if i == 0 && e.Data == "" {
				st.Priming = true
			}
		}
		if e.Retry >= 0 {
			st.RetryHints = append(st.RetryHints, e.Retry)
		}
		if m, err := ParseMessage([]byte(e.Data)); err == nil && string(m.Method) == "notifications/progress" {
			st.Progress++
		}
	}
	st.Response, st.Ended = a.response != nil, a.ended
	p.stream = &a
	if a.sse && a.ended && a.response == nil {
		p.closed, p.closedBy, p.closedID, p.closedTk = &a, "the streaming call", q.id, probeToken
	}
	p.terminateCase(&a)
}

// terminateCase checks that an SSE answer ends after its response.
func (p *prober) terminateCase(a *answer) {
	const name, want = "SSE answer ends after its response", "end of stream after the response"
	switch {
	case !a.sse:
		p.na(name, want, specTerminate, "the tool call was answered as "+cmpOr(mediaType2(a.ct), "-")+", not SSE")
	case a.response == nil && a.ended:
		p.na(name, want, specTerminate, "the server closed the stream before the response (SSE polling; checked below)")
	case a.response == nil:
		p.check(name, want, specTerminate, *a, false, fmt.Sprintf("no response within %v (%d events)", probeTimeout, len(a.events)))
	case !a.ended:
		p.check(name, want, specTerminate, *a, false, fmt.Sprintf("the stream stayed open %v after the response", probeGrace))
	default:
		p.check(name, want, specTerminate, *a, true, "")
	}
}

// mediaType2 returns the media type of a Content-Type, for display.
func mediaType2(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.TrimSpace(ct)
}

// requestCases checks the error cases of POST (and PUT) in the probe's era.
func (p *prober) requestCases(ctx context.Context) {
	// On the legacy session when there is one, else in 2026-07-28.
	modern := p.useModern
	p.useModern = !p.legacy
	defer func() { p.useModern = modern }()
	if p.legacy {
		p.sessionCases(ctx)
	}
	q := p.harmless()
	q.body = `{"jsonrpc":"2.0","id":`
	a := p.send(ctx, q)
	p.check("malformed JSON", "400 (an error status)", specBadInput, a, a.status >= 400 && a.status < 500, "")
	a = p.send(ctx, p.harmless().with("Accept", "text/html"))
	p.check("Accept without application/json and text/event-stream", "400 or 406", specAccept, a, a.status == 400 || a.status == 406, "")
	a = p.send(ctx, p.harmless().with("Content-Type", "text/plain"))
	switch {
	case a.status == http.StatusUnsupportedMediaType:
		p.check("wrong Content-Type (text/plain)", "415", specContentType, a, true, "")
	case a.status >= 400 && a.status < 500:
		p.check("wrong Content-Type (text/plain)", "415", specContentType, a, true, fmt.Sprintf("HTTP %d: an error status, as the MCP spec asks; 415 is the precise one", a.status))
	default:
		p.check("wrong Content-Type (text/plain)", "415", specContentType, a, false, a.describe()+": a text/plain body was accepted")
	}
	a = p.send(ctx, p.harmless().with("Origin", probeOrigin))
	detail := ""
	if a.status != http.StatusForbidden {
		detail = a.describe() + " to Origin " + probeOrigin
	}
	p.check("foreign Origin (DNS rebinding)", "403", specOrigin, a, a.status == http.StatusForbidden, detail)
	put := p.harmless()
	put.method = http.MethodPut
	a = p.send(ctx, put)
	switch allow := a.hdr.Get("Allow"); {
	case a.status != http.StatusMethodNotAllowed:
		detail = a.describe()
	case allow != "":
		detail = "Allow: " + allow
	default:
		detail = "no Allow header (RFC 9110 §15.5.6 requires one)"
	}
	p.check("PUT on the endpoint", "405 with Allow", specMethods, a, a.status == http.StatusMethodNotAllowed, detail)
}

// sessionCases checks requests with an unknown and without a session id,
// and an unsupported MCP-Protocol-Version, on the legacy session.
func (p *prober) sessionCases(ctx context.Context) {
	if p.sid != "" {
		a := p.send(ctx, p.harmless().with(HeaderSessionID, "mcpbench-no-such-session"))
		p.check("request with an unknown session id", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
		a = p.send(ctx, p.harmless().with(HeaderSessionID, ""))
		p.check("request without the session id", "400", specNoSession, a, a.status == http.StatusBadRequest, "")
	} else {
		p.na("request with an unknown session id", "404", specSessionGone, "server has no sessions")
		p.na("request without the session id", "400", specNoSession, "server has no sessions")
	}
	a := p.send(ctx, p.harmless().with(HeaderProtocolVersion, "1999-01-01"))
	p.check("unsupported MCP-Protocol-Version header", "400", specVersion, a, a.status == http.StatusBadRequest, "")
}

// legacyNA adds the cases of the legacy era as not applying, for a server
// that refused every legacy initialize.
func (p *prober) legacyNA() {
	why := "no 2025-11-25 era: initialize was refused (2026-07-28 has no sessions and no GET stream)"
	for _, c := range []struct{ name, want, spec string }{
		{"session id characters", "visible ASCII 0x21-0x7E", specSessionChars},
		{"notification", "202, no body", specNotification},
		{"request with an unknown session id", "404", specSessionGone},
		{"request without the session id", "400", specNoSession},
		{"unsupported MCP-Protocol-Version header", "400", specVersion},
		{"GET: SSE stream or 405", "200 text/event-stream, or 405", specGET},
		{"second concurrent GET", "409, or a second stream", specSecondGET},
		{"GET without the session id", "400", specNoSession},
		{"GET with an unknown session id", "404", specSessionGone},
		{"GET with an unknown Last-Event-ID", "400, or a stream replaying nothing", specUnknownLastID},
		{"DELETE the session", "200/204, or 405", specDelete},
		{"DELETE the session again", "404", specSessionGone},
		{"request on the deleted session", "404", specSessionGone},
		{"GET on the deleted session", "404", specSessionGone},
	} {
		p.na(c.name, c.want, c.spec, why)
	}
}

// getCases checks the standalone GET stream: offered or 405, a second
// concurrent GET, GET without, with an unknown and with a deleted session
// id, and an unknown Last-Event-ID.
func (p *prober) getCases(ctx context.Context) {
	getH := func(kv ...string) map[string]string {
		m := map[string]string{"Accept": "text/event-stream", HeaderProtocolVersion: p.proto}
		if p.sid != "" {
			m[HeaderSessionID] = p.sid
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// The first GET stays open while the second is sent.
	p.r.Requests++
	firstCh := make(chan answer, 1)
	opened := make(chan struct{})
	firstStatus := 0 // written before opened is closed
	var once sync.Once
	signal := func(status int) { once.Do(func() { firstStatus = status; close(opened) }) }
	pr := *p // do reads only cfg, rt and u
	pr.rt = notifyRT{p.rt, signal}
	go func() {
		defer signal(0)
		firstCh <- pr.do(ctx, req{method: http.MethodGet, h: getH(), window: probeWindow})
	}()
	var second answer
	select {
	case <-opened:
		if firstStatus == http.StatusOK {
			second = p.send(ctx, req{method: http.MethodGet, h: getH(), window: probeWindow})
		}
	case <-ctx.Done():
	}
	first := <-firstCh
	p.seen(&first, req{method: http.MethodGet})
	p.note(&first, false)
	offered := first.status == http.StatusOK && first.sse
	switch {
	case offered:
		p.r.GETStream = "offered"
	case first.status == http.StatusMethodNotAllowed:
		p.r.GETStream = "not offered (405)"
	default:
		p.r.GETStream = first.describe()
	}
	detail := ""
	if !offered && first.status != http.StatusMethodNotAllowed {
		detail = first.describe()
	}
	p.check("GET: SSE stream or 405", "200 text/event-stream, or 405", specGET, first, offered || first.status == http.StatusMethodNotAllowed, detail)
	if len(first.ids()) > 0 {
		p.getIDs = &first
	}
	const second409 = "409, or a second stream"
	switch {
	case !offered:
		p.na("second concurrent GET", second409, specSecondGET, "no GET stream ("+first.describe()+")")
	case second.status == http.StatusConflict:
		p.check("second concurrent GET", second409, specSecondGET, second, true, "")
	case second.status == http.StatusOK && second.sse:
		p.note(&second, false)
		p.check("second concurrent GET", second409, specSecondGET, second, true, "a second stream was opened: the server must send each message on one stream only")
	default:
		p.check("second concurrent GET", second409, specSecondGET, second, false, second.describe())
	}

	if first.status == http.StatusMethodNotAllowed {
		p.na("GET without the session id", "400", specNoSession, "no GET stream (405)")
		p.na("GET with an unknown session id", "404", specSessionGone, "no GET stream (405)")
		p.na("GET with an unknown Last-Event-ID", "400, or a stream replaying nothing", specUnknownLastID, "no GET stream (405)")
		return
	}
	if p.sid != "" {
		a := p.send(ctx, req{method: http.MethodGet, h: getH(HeaderSessionID, ""), window: probeWindow})
		p.check("GET without the session id", "400", specNoSession, a, a.status == http.StatusBadRequest, "")
		a = p.send(ctx, req{method: http.MethodGet, h: getH(HeaderSessionID, "mcpbench-no-such-session"), window: probeWindow})
		p.check("GET with an unknown session id", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
	} else {
		p.na("GET without the session id", "400", specNoSession, "server has no sessions")
		p.na("GET with an unknown session id", "404", specSessionGone, "server has no sessions")
	}
	a := p.send(ctx, req{method: http.MethodGet, h: getH(HeaderLastEventID, "mcpbench-probe-no-such-event"), window: probeWindow})
	const want = "400, or a stream replaying nothing"
	switch {
	case a.status == http.StatusNotFound && p.sid != "":
		p.check("GET with an unknown Last-Event-ID", want, specUnknownLastID, a, false, "404 tells the client its session is gone")
	case a.status >= 400 && a.status < 500:
		p.check("GET with an unknown Last-Event-ID", want, specUnknownLastID, a, true, "")
	case a.status == http.StatusOK && a.sse:
		n := 0
		for _, e := range a.events {
			if e.Data != "" {
				n++
			}
		}
		detail := "a stream that replayed nothing"
		if n > 0 {
			detail = fmt.Sprintf("replayed %d messages after an id it never issued", n)
		}
		p.check("GET with an unknown Last-Event-ID", want, specUnknownLastID, a, n == 0, detail)
	default:
		p.check("GET with an unknown Last-Event-ID", want, specUnknownLastID, a, false, a.describe())
	}
}

// notifyRT calls f with the status (0 on failure) once RoundTrip has
// returned.
type notifyRT struct {
	http.RoundTripper
	f func(status int)
}

func (n notifyRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := n.RoundTripper.RoundTrip(r)
	if err != nil {
		n.f(0)
	} else {
		n.f(resp.StatusCode)
	}
	return resp, err
}

// deleteCases ends the session and checks that it is gone.
func (p *prober) deleteCases(ctx context.Context) {
	const okDelete = "200/204, or 405"
	if p.sid == "" {
		for _, c := range []struct{ name, want, spec string }{
			{"DELETE the session", okDelete, specDelete},
			{"DELETE the session again", "404", specSessionGone},
			{"request on the deleted session", "404", specSessionGone},
			{"GET on the deleted session", "404", specSessionGone},
		} {
			p.na(c.name, c.want, c.spec, "server has no sessions")
		}
		return
	}
	del := req{method: http.MethodDelete, h: map[string]string{HeaderSessionID: p.sid, HeaderProtocolVersion: p.proto}}
	a := p.send(ctx, del)
	deleted := a.status >= 200 && a.status < 300
	p.check("DELETE the session", okDelete, specDelete, a, deleted || a.status == http.StatusMethodNotAllowed, "")
	if !deleted {
		why := "the session was not deleted (" + a.describe() + ")"
		p.na("DELETE the session again", "404", specSessionGone, why)
		p.na("request on the deleted session", "404", specSessionGone, why)
		p.na("GET on the deleted session", "404", specSessionGone, why)
		return
	}
	a = p.send(ctx, del)
	p.check("DELETE the session again", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
	a = p.send(ctx, p.call("ping", "", ""))
	p.check("request on the deleted session", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
	a = p.send(ctx, req{method: http.MethodGet, h: map[string]string{"Accept": "text/event-stream", HeaderProtocolVersion: p.proto, HeaderSessionID: p.sid}, window: probeWindow})
	p.check("GET on the deleted session", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
}

// authCase reports the 401 challenge, when the server answered 401. The
// challenge is shown (it names the resource metadata); the Authorization
// header sent never is.
func (p *prober) authCase() {
	a := p.unauthorized
	if a == nil {
		return
	}
	const name, want = "401 carries a WWW-Authenticate challenge", "WWW-Authenticate (resource_metadata)"
	ch := a.hdr.Get("WWW-Authenticate")
	var detail string
	switch {
	case ch == "":
		detail = "401 to " + p.unauthWhat + " without WWW-Authenticate"
	case !strings.Contains(strings.ToLower(ch), "resource_metadata="):
		detail = "401 to " + p.unauthWhat + ": WWW-Authenticate: " + clip(ch, 200) + " (no resource_metadata: the metadata must then be at /.well-known/oauth-protected-resource)"
	default:
		detail = "401 to " + p.unauthWhat + ": WWW-Authenticate: " + clip(ch, 200)
	}
	p.check(name, want, spec401, *a, ch != "", detail)
}

// resumeCases checks resumability: a stream the server closed before its
// response (SSE polling), and a finished stream, with Last-Event-ID.
func (p *prober) resumeCases(ctx context.Context) {
	const (
		retryName  = "retry hint before the server closes a stream"
		pollName   = "resume a stream the server closed (SSE polling)"
		finishName = "resume with Last-Event-ID (exact replay)"
		retryWant  = "a retry field before the close"
		pollWant   = "the rest of the stream, then its end"
		finishWant = "the later events exactly, then the end"
	)
	if p.useModern {
		why := "2026-07-28 has no resumption (\"Resumable SSE streams via Last-Event-ID are not supported\")"
		p.r.Resumable = "no: " + why
		if p.stream != nil && len(p.stream.ids()) > 0 {
			p.r.Notes = append(p.r.Notes, "2026-07-28 SSE answer carried event ids, which no client can use")
		}
		p.na(retryName, retryWant, specRetry, why)
		p.na(pollName, pollWant, specPoll, why)
		p.na(finishName, finishWant, specResume, why)
		return
	}
	noStream := "no streaming answer: " + p.r.Streaming.Why
	if p.stream == nil {
		p.r.Resumable = "not checked: " + p.r.Streaming.Why
		if p.getIDs == nil {
			p.na(retryName, retryWant, specRetry, noStream)
			p.na(pollName, pollWant, specPoll, noStream)
			p.na(finishName, finishWant, specResume, noStream)
			return
		}
	}

	// SSE polling: make the reference progress tool close its stream.
	if p.closed == nil && p.stream != nil && p.tool.ref && p.tool.canClose && p.stream.sse && len(p.stream.ids()) > 0 {
		// Closing after the last progress leaves only the response to resume.
		const args = `{"count":2,"close_after":2,"retry_ms":250}`
		q := p.toolCall(args, probePollToken)
		a := p.send(ctx, q)
		p.note(&a, true)
		if a.sse && a.ended && a.response == nil {
			p.closed, p.closedBy, p.closedID, p.closedTk = &a, "progress"+args, q.id, probePollToken
		}
	}
	switch {
	case p.closed != nil:
		p.pollCases(ctx)
	case p.stream == nil:
		p.na(retryName, retryWant, specRetry, noStream)
		p.na(pollName, pollWant, specPoll, noStream)
	case !p.stream.sse:
		why := "the tool call was answered as " + mediaType2(p.stream.ct) + ": no stream to close"
		p.na(retryName, retryWant, specRetry, why)
		p.na(pollName, pollWant, specPoll, why)
	case len(p.stream.ids()) == 0:
		why := "no event ids: a stream closed early could not be resumed"
		p.na(retryName, retryWant, specRetry, why)
		p.na(pollName, pollWant, specPoll, why)
	default:
		why := "the server did not close a stream early; the probe can make only the reference progress tool do so (close_after)"
		p.na(retryName, retryWant, specRetry, why)
		p.na(pollName, pollWant, specPoll, why)
	}
	p.finishedCase(ctx, finishName, finishWant)
}

// pollCases checks the retry hint of a stream the server closed before its
// response, resumes it from its last event id, and checks the rest came.
func (p *prober) pollCases(ctx context.Context) {
	c := p.closed
	hint := -1
	for _, e := range c.events {
		if e.Retry >= 0 {
			hint = e.Retry
		}
	}
	detail := fmt.Sprintf("%s: closed after %d events", p.closedBy, len(c.events))
	if hint >= 0 {
		detail = fmt.Sprintf("%s: retry %d ms, then closed after %d events", p.closedBy, hint, len(c.events))
	}
	p.add(ProbeCase{Case: "retry hint before the server closes a stream", Expected: "a retry field before the close", Spec: specRetry,
		Result: result(hint >= 0), Detail: detail})

	const name, want = "resume a stream the server closed (SSE polling)", "the rest of the stream, then its end"
	ids := c.ids()
	if len(ids) == 0 {
		p.add(ProbeCase{Case: name, Expected: want, Spec: specPoll, Result: ProbeDiffers,
			Detail: "the server closed the stream before any event id: it cannot be resumed (the response is lost)"})
		return
	}
	seen := map[string]bool{}
	for _, e := range ids {
		seen[e.ID] = true
	}
	// Poll until the response: a server may close the resumed stream again.
	from := ids[len(ids)-1].ID
	last := from
	var rest []sseEvent
	var problems []string
	var a answer
	resumes := 0
	for resumes < probeMaxPolls {
		resumes++
		a = p.send(ctx, req{method: http.MethodGet, h: p.resumeH(last), id: p.closedID})
		p.note(&a, false)
		if a.status != http.StatusOK || !a.sse {
			p.check(name, want, specPoll, a, false, fmt.Sprintf("GET with Last-Event-ID %s: %s", last, a.describe()))
			return
		}
		for _, e := range a.events {
			if e.HasID && seen[e.ID] {
				problems = append(problems, "event "+e.ID+" again")
			}
			if e.HasID {
				seen[e.ID] = true
				last = e.ID
			}
			if other := foreign(e.Data, p.closedID, p.closedTk); other != "" {
				problems = append(problems, fmt.Sprintf("event %s: %s", cmpOr(e.ID, "without id"), other))
			}
		}
		rest = append(rest, a.events...)
		if a.response != nil || !a.ended || len(a.ids()) == 0 {
			break // the end, a stream left open, or one that cannot go on
		}
	}
	switch {
	case a.response == nil && a.ended:
		problems = append(problems, fmt.Sprintf("no response after %d resumes", resumes))
	case a.response == nil:
		problems = append(problems, "no response")
	case !a.ended:
		problems = append(problems, fmt.Sprintf("the stream stayed open %v after the response", probeGrace))
	}
	if len(problems) > 0 {
		p.check(name, want, specPoll, a, false, fmt.Sprintf("resumed from %s: %s", from, strings.Join(problems, "; ")))
		return
	}
	polls := ""
	if resumes > 1 {
		polls = fmt.Sprintf(" (%d resumes: the server closed the stream again)", resumes)
	}
	p.check(name, want, specPoll, a, true, fmt.Sprintf("resumed from %s: %s more, the response, then the end%s", from, plural(len(rest), "event"), polls))
	if c == p.stream {
		// The streaming answer is now whole: its events span the connections.
		joined := *c
		joined.events = append(slices.Clone(c.events), rest...)
		joined.response = a.response
		p.stream = &joined
		p.polled = true
	}
}

// foreign says what in an event's data belongs to another request than the
// one with id and progress token ("" when nothing does).
func foreign(data string, id int64, token string) string {
	if data == "" {
		return ""
	}
	m, err := ParseMessage([]byte(data))
	if err != nil {
		return ""
	}
	switch {
	case m.Kind == KindResponse && !IDEqual(m.ID, id):
		return "the response to request " + string(m.ID)
	case string(m.Method) == "notifications/progress":
		var tk string
		if json.Unmarshal(Field(m.Params, "progressToken"), &tk) == nil && tk != token {
			return "progress of another request (token " + strconv.Quote(tk) + ")"
		}
	}
	return ""
}

// resumeH returns the headers of a resuming GET.
func (p *prober) resumeH(lastID string) map[string]string {
	m := map[string]string{"Accept": "text/event-stream", HeaderProtocolVersion: p.proto, HeaderLastEventID: lastID}
	if p.sid != "" {
		m[HeaderSessionID] = p.sid
	}
	return m
}

// finishedCase resumes a finished stream from its first event id and checks
// the replay: exactly the later events (ids and data, in order), then the
// end. Without a finished POST stream it resumes the GET stream instead,
// which stays open after its replay.
func (p *prober) finishedCase(ctx context.Context, name, want string) {
	var src *answer
	kind := "a finished stream"
	switch {
	case p.stream != nil && p.stream.sse && p.stream.response != nil && len(p.stream.ids()) >= 2:
		src = p.stream
	case p.getIDs != nil && len(p.getIDs.ids()) >= 2:
		src, kind = p.getIDs, "the GET stream"
	}
	if src == nil {
		why, sum := p.unresumable()
		p.r.Resumable = sum
		p.na(name, want, specResume, why)
		return
	}
	ids := src.ids()
	from := ids[0].ID
	var later []sseEvent
	past := false
	for _, e := range src.events {
		if past && e.Data != "" {
			later = append(later, e)
		}
		if e.HasID && e.ID == from {
			past = true
		}
	}
	var a answer
	for attempt := range 3 {
		// A GET stream the probe just closed may still be attached on the
		// server's side for a moment: 409 then, so try again shortly.
		a = p.send(ctx, req{method: http.MethodGet, h: p.resumeH(from), window: probeResumeWait})
		if a.status != http.StatusConflict || src != p.getIDs {
			break
		}
		if sleepCtx(ctx, time.Duration(100<<attempt)*time.Millisecond) != nil {
			break
		}
	}
	p.note(&a, false)
	if a.status != http.StatusOK || !a.sse {
		detail := fmt.Sprintf("%s sent event ids, but GET with Last-Event-ID %s answered %s", kind, from, a.describe())
		if a.status == http.StatusNotFound && p.sid != "" {
			detail += " (404 tells the client its session is gone)"
		}
		p.r.Resumable = "no: " + detail
		p.check(name, want, specResume, a, false, detail)
		return
	}
	var got []sseEvent
	for _, e := range a.events {
		if e.Data != "" {
			got = append(got, e)
		}
	}
	diff := replayDiff(later, got, src == p.getIDs)
	if diff == "" && src != p.getIDs && !a.ended {
		diff = fmt.Sprintf("the replay did not end the stream (open after %v)", probeResumeWait)
	}
	if diff != "" {
		detail := fmt.Sprintf("%s resumed from %s: %s", kind, from, diff)
		p.r.Resumable = "no: " + detail
		p.check(name, want, specResume, a, false, detail)
		return
	}
	detail := fmt.Sprintf("%s resumed from %s: %s replayed exactly, then the end", kind, from, plural(len(later), "event"))
	if src == p.getIDs {
		detail = fmt.Sprintf("%s resumed from %s: %s replayed exactly (a GET stream stays open)", kind, from, plural(len(later), "event"))
	}
	if p.polled {
		detail += "; the stream spanned a server close"
	}
	p.r.Resumable = "yes: " + detail
	p.check(name, want, specResume, a, true, detail)
}

// unresumable says why no resume could be checked, and the summary.
func (p *prober) unresumable() (why, summary string) {
	s := p.stream
	switch {
	case s == nil:
		return "no streaming answer: " + p.r.Streaming.Why, "not checked: " + p.r.Streaming.Why
	case !s.sse && p.getIDs == nil:
		why = "the tool call was answered as " + mediaType2(s.ct) + " and the GET stream carried no event ids"
		if !p.r.EventIDs {
			return why, "not resumable (no event ids)"
		}
		return why, "not checked: " + why
	case len(s.ids()) == 0:
		return "no event ids on the streaming answer", "not resumable (no event ids)"
	case len(s.ids()) < 2:
		return "the streaming answer carried one event id: nothing to replay after it", "not checked: one event id only"
	}
	return "the streaming answer did not finish (no response)", "not checked: the stream did not finish"
}

// replayDiff compares a replay with the events it should repeat (messages
// only: priming and close events carry no data). open allows more events
// after them (a live GET stream). It returns "" when they match.
func replayDiff(want, got []sseEvent, open bool) string {
	var problems []string
	n := min(len(want), len(got))
	for i := range n {
		w, g := want[i], got[i]
		switch {
		case w.HasID && (!g.HasID || g.ID != w.ID):
			problems = append(problems, fmt.Sprintf("event %d has id %q, want %q", i+1, g.ID, w.ID))
		case g.Data != w.Data:
			problems = append(problems, fmt.Sprintf("event %s: data differs", cmpOr(w.ID, strconv.Itoa(i+1))))
		}
		if len(problems) >= 3 {
			break
		}
	}
	switch {
	case len(got) < len(want):
		problems = append(problems, fmt.Sprintf("%d of %d events missing (from %s)", len(want)-len(got), len(want), cmpOr(want[len(got)].ID, "event "+strconv.Itoa(len(got)+1))))
	case len(got) > len(want) && !open:
		problems = append(problems, fmt.Sprintf("%s more than the stream had (first: id %q)", plural(len(got)-len(want), "event"), got[len(want)].ID))
	}
	return strings.Join(problems, "; ")
}

// modernCases checks the 2026-07-28 header validation, GET and
// subscriptions/listen.
func (p *prober) modernCases(ctx context.Context) {
	meta := modernMeta(p.cfg, Protocol20260728)
	body := func(id int64, method, params string) string {
		return string(appendRequest(nil, id, method, []byte(params), meta))
	}
	post := func(h map[string]string, method, params string) answer {
		id := p.id()
		return p.send(ctx, req{method: http.MethodPost, h: h, body: body(id, method, params), id: id})
	}
	a := post(p.modernH("tools/list", HeaderMethod, "prompts/list"), "tools/list", "")
	code := a.rpcCode()
	p.check("2026-07-28: Mcp-Method header does not match the body", "400 with -32020", specMismatch, a, a.status == 400 && code == CodeHeaderMismatch, "")
	a = post(p.modernH("tools/list", HeaderMethod, ""), "tools/list", "")
	p.check("2026-07-28: Mcp-Method header missing", "400", specMissingHeader, a, a.status == 400, "")
	a = post(p.modernH("mcpbench/no-such-method"), "mcpbench/no-such-method", "")
	code = a.rpcCode()
	p.check("2026-07-28: unknown method", "404 with -32601", specUnknownMethod, a, a.status == 404 && code == CodeMethodNotFound, "")
	id := p.id()
	a = p.send(ctx, req{method: http.MethodPost, h: p.modernH("tools/list", HeaderProtocolVersion, "2099-01-01"),
		body: strings.Replace(body(id, "tools/list", ""), Protocol20260728, "2099-01-01", 1), id: id})
	code = a.rpcCode()
	p.check("2026-07-28: unsupported (future) protocol version", "400 with -32022", specFuture, a, a.status == 400 && code == CodeUnsupportedVersion, "")
	a = p.send(ctx, req{method: http.MethodGet, h: map[string]string{"Accept": "text/event-stream", HeaderProtocolVersion: Protocol20260728}, window: probeWindow})
	p.check("2026-07-28: GET on the endpoint", "405", specModernGET, a, a.status == 405, "")
	id = p.id()
	a = p.send(ctx, req{method: http.MethodPost, h: p.modernH("subscriptions/listen"),
		body: body(id, "subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`), window: probeWindow})
	p.r.Discover.ListenOK = a.status == http.StatusOK && a.sse
	for _, e := range a.events {
		p.r.Discover.ListenAck = p.r.Discover.ListenAck || strings.Contains(e.Data, "notifications/subscriptions/acknowledged")
	}
}
