package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// ErrNotMCPEndpoint is wrapped by the error Run returns when neither era
// answers: no server/discover result and no initialize result carrying a
// protocolVersion. The message says what the endpoint answered instead
// (e.g. "HTTP 404 to every request").
var ErrNotMCPEndpoint = errors.New("not an MCP endpoint")

// Results of a Case.
const (
	OK      = "ok"      // the server does what the cited sentence asks
	Differs = "differs" // it does not; Detail says what it did
	NA      = "n/a"     // the check does not apply; Detail says why
)

// Report is what a server speaks and how it meets the transport's
// rules, from a few requests (Run). Marshalled as JSON it is the
// machine-readable form of `mcpbench probe`.
type Report struct {
	URL string `json:"url"`
	// MCPEndpoint reports that one era answered: a server/discover result,
	// or an initialize result with a protocolVersion.
	MCPEndpoint bool `json:"mcp_endpoint"`
	// Requests is the number of HTTP requests the probe sent (about 20 to
	// 50: it never loads the server).
	Requests int `json:"requests"`

	// Modern (2026-07-28) era.
	Discover struct {
		Status    int             `json:"status"`
		Modern    bool            `json:"modern"`
		Versions  []string        `json:"supported_versions,omitempty"`
		Error     string          `json:"error,omitempty"`
		Result    json.RawMessage `json:"result,omitempty"`
		AnswerAs  string          `json:"answer_as,omitempty"` // json or sse
		ListenOK  bool            `json:"listen_stream"`       // subscriptions/listen opened an SSE stream still open when the probe closed it
		ListenAck bool            `json:"listen_acknowledged"` // its first message was notifications/subscriptions/acknowledged
		Listen    string          `json:"listen,omitempty"`    // what it did, e.g. "open (acknowledged {…})", "ended at once: acknowledged nothing ({})"
	} `json:"discover"`

	// Legacy era: the version negotiated for each version requested.
	Legacy []Init `json:"legacy"`

	Sessions   string `json:"sessions"`    // "stateful" (Mcp-Session-Id), "stateless", or "none" (no legacy era)
	Answers    string `json:"answers"`     // "json", "sse", "mixed" or "-": how requests were answered
	EventIDs   bool   `json:"event_ids"`   // some SSE event carried an id
	Priming    bool   `json:"priming"`     // an SSE answer opened with an id and empty data
	RetryHints []int  `json:"retry_hints"` // retry fields seen (ms), in order
	GETStream  string `json:"get_stream"`  // "offered", "not offered (405)", "HTTP <n>", "-"
	// Resumable sums up the resume checks: "yes: …", "no: …", "not
	// resumable (no event ids)", or "not checked: …".
	Resumable string `json:"resumable"`
	// Streaming is the answer to a tool call made to stream (in 2026-07-28
	// when the server speaks it).
	Streaming   Stream   `json:"streaming"`
	Recommended string   `json:"recommended"` // what --protocol auto picks ("" when not an MCP endpoint)
	Notes       []string `json:"notes,omitempty"`

	// LegacyStreaming is the same call in the legacy session, made on a
	// server that speaks both eras (nil otherwise): the resume checks use
	// it, as 2026-07-28 has no resumption.
	LegacyStreaming *Stream `json:"legacy_streaming,omitempty"`

	// Cases are the checks, in the order they ran; each cites the sentence
	// of the spec it checks.
	Cases []Case `json:"checks"`
	// Checked counts the cases that applied; Differ those that differ.
	Checked int `json:"checked"`
	Differ  int `json:"differ"`
}

// Init is one legacy initialize attempt.
type Init struct {
	Requested  string `json:"requested"`
	Negotiated string `json:"negotiated,omitempty"`
	Status     int    `json:"status"`
	SessionID  bool   `json:"session_id"`
	Error      string `json:"error,omitempty"`
}

// Stream describes the answer to the tool call Run makes to get a
// streaming answer: the reference server's progress tool, or a read-only
// tool without required arguments, called with a progressToken and
// Accept listing both media types.
type Stream struct {
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

// Case is one check: what the server answered against what the cited
// sentence of the spec asks.
type Case struct {
	Case string `json:"case"`
	// Protocol is the protocol version the check's requests spoke: the
	// negotiated legacy version (in the legacy session) or 2026-07-28; ""
	// when no era applies. On a server that speaks both eras it says which
	// era a row belongs to.
	Protocol string `json:"protocol,omitempty"`
	Status   int    `json:"status,omitempty"` // HTTP status (0: none, or not an HTTP exchange)
	RPCCode  int    `json:"jsonrpc_code,omitempty"`
	Expected string `json:"expected"`
	// Result is OK, Differs or NA; OK is Result == OK.
	Result string `json:"result"`
	OK     bool   `json:"ok"`
	// Detail says what differed, why the case does not apply, or a remark.
	Detail string `json:"detail,omitempty"`
	// Spec quotes (shortly) the sentence checked, with its document and
	// section.
	Spec string `json:"spec"`
}

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

// Run sends a few requests (about 20 to 50, one at a time but for two GET
// streams and the concurrent calls; it never loads the server) to learn
// what a server speaks, and checks it against the Streamable HTTP transport (2025-11-25 transports;
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
//   - the status codes of the transport's error cases: unknown (a
//     malformed id, and one shaped like the server's own), missing and
//     deleted session ids (POST and GET), DELETE twice, an unsupported
//     MCP-Protocol-Version, malformed JSON, a wrong Accept or Content-Type,
//     a foreign Origin (403), PUT (405), a second concurrent GET, a GET with
//     an unknown Last-Event-ID, the 401 challenge; and the 2026-07-28 header
//     validation;
//   - DNS rebinding apart from Origin: a foreign Host without Origin (on a
//     local server), and the server's own origin (must be served); ping
//     ({}); and probeConcurrent calls of the streaming tool at once, none
//     of whose streams may carry a sibling's progress or response.
//
// On a server that speaks both eras, the session checks (session ids,
// the GET stream, DELETE, resumption) run in the legacy session and the
// stateless ones (header validation, GET 405, subscriptions/listen) in
// 2026-07-28; the streaming call is made in both. Each case records the
// protocol version it spoke (Case.Protocol).
//
// Each case cites the sentence it checks; cases that do not apply say why.
// cfg.Header is sent with every request and never appears in the report.
//
// opts names the tools it calls (the zero Options: the reference server's
// progress tool, or a read-only tool); it must be valid (Options.Validate).
//
// Run returns an error for a server that cannot be reached (a transport
// error on the first request), and an error wrapping ErrNotMCPEndpoint,
// with the report, when neither era answers. When ctx ends mid-way it
// returns context.Cause(ctx) and no report. It is safe to call
// concurrently; it does not change cfg.
func Run(ctx context.Context, cfg *driver.Config, opts Options) (*Report, error) {
	r := &Report{URL: cfg.URL, Sessions: "none", GETStream: "-", Answers: "-", RetryHints: []int{}}
	r.Streaming.RetryHints = []int{}
	c := *cfg
	hc := c.HTTPClient
	if hc == nil {
		hc = driver.NewHTTPClient(&c)
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	p := &prober{cfg: &c, rt: rt, u: c.URL, r: r, nextID: 900, opts: opts}

	first := p.discover(ctx)
	if first.err != nil {
		return nil, fmt.Errorf("server/discover: %w", first.err)
	}
	p.initialize(ctx)
	discovered := r.Discover.Modern || len(r.Discover.Result) > 0
	r.MCPEndpoint = discovered || p.legacy
	switch {
	case r.Discover.Modern:
		r.Recommended = driver.Protocol20260728
	case p.legacy:
		r.Recommended = p.proto
	}
	if !r.MCPEndpoint {
		p.authCase()
		p.finish()
		return r, fmt.Errorf("%w: %s", ErrNotMCPEndpoint, p.notMCP())
	}
	p.dual = r.Discover.Modern && p.legacy
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
	p.crossTalk(ctx)
	p.requestCases(ctx)
	if p.legacy {
		p.getCases(ctx)
	}
	p.resumeCases(ctx)
	p.streamLinkCase(ctx) // links.go
	if p.legacy {
		p.deleteCases(ctx)
	} else {
		restore := p.inEra(false) // no legacy version: the rows name none
		p.legacyNA()
		restore()
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
	cfg  *driver.Config
	opts Options
	rt   http.RoundTripper
	u    string
	r    *Report

	legacy    bool   // a legacy initialize succeeded
	proto     string // the version it negotiated
	sid       string // its Mcp-Session-Id ("" when none)
	useModern bool   // the streaming call and the era-independent cases use 2026-07-28
	dual      bool   // the server speaks 2026-07-28 and a legacy version
	modernIDs bool   // a 2026-07-28 SSE answer carried event ids
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

	streamRec *Stream // the record of stream: Streaming, or LegacyStreaming on a server of both eras
}

// inEra makes the requests built by call and the cases added use
// 2026-07-28 (modern) or the legacy session, until restore is called.
func (p *prober) inEra(modern bool) (restore func()) {
	was := p.useModern
	p.useModern = modern
	return func() { p.useModern = was }
}

// era is the protocol version the probe's requests speak now ("" with no
// legacy session outside 2026-07-28).
func (p *prober) era() string {
	if p.useModern {
		return driver.Protocol20260728
	}
	return p.proto
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
		return fmt.Sprintf("HTTP %d to every request (server/discover, initialize %s)", statuses[0], strings.Join(driver.LegacyProtocols, ", "))
	}
	return "no server/discover result and no initialize result: " + strings.Join(p.firstAns, "; ")
}
