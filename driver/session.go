package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/sse"
)

// Header names of the Streamable HTTP transport (2025-11-25 transports).
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderLastEventID     = "Last-Event-Id"
)

// Lane is one lane of an MCP session over Streamable HTTP: the handle
// one goroutine holds to send the session's requests, one in flight at a
// time. The session itself (sessionState: what its lanes share) has no
// handle of its own: NewSession returns its first lane, which also
// initializes it, opens its optional standalone GET stream and closes it
// (DELETE); Lanes returns more lanes of the same session, for concurrent
// requests.
//
// Initialize, Do and Close of one lane must not be called concurrently;
// each lane is owned by one goroutine. What the lanes share: the session
// id and the negotiated protocol (the headers), the URL, the GET stream,
// the request ids (unique in the session), the redirect and hygiene
// tallies; each lane has its own request body, decoder, timers and
// response stream, with its own ledger. The GET stream runs in a
// goroutine of its own and only touches its own state and the lanes'
// in-flight mailboxes; StreamStats, Redirects and Hygiene are safe to
// call from any goroutine.
type Lane struct {
	*sessionState // the session: what its lanes share

	// The rest is this lane's own: the request in flight and its buffers.
	body *reqBody // the request body, reused (the transports read it without copying)
	jbuf []byte   // a JSON answer's bytes, reused (read.go)
	// reserve and release are the budget hooks of the lane's SSE decoder
	// (a pooled one per answer, takeDecoder: an idle lane holds none).
	reserve func() error
	release func()
	ans     []byte          // the answer to a server→client request
	cr      countingReader  // a JSON answer's body, counted (answer.go: readJSON)
	rng     *mrand.Rand     // this lane's draws (cancel, jitter), seeded by Config.Seed
	opCtx   context.Context // the operation in progress (for the decoder's budget hook)

	tokBuf []byte // the progress token of the request in flight
	mbuf   []byte // _meta render buffer
	pbuf   []byte // params of an op with Render

	opMu     sync.Mutex
	opTimer  *time.Timer
	opCancel context.CancelCauseFunc
	// The context of the lane's last op, kept for the next one while it
	// is not cancelled (do.go: opContext, endOp); keptOf is its parent.
	kept       context.Context
	keptCancel context.CancelCauseFunc
	keptOf     context.Context

	idleMu    sync.Mutex
	idle      *time.Timer
	idleBody  io.Closer
	idleFired atomic.Bool
	idleDur   time.Duration
	sr        streamReader

	mbox  *inflight                // the lane's mailbox (nil: a fresh one at the next begin)
	cur   atomic.Pointer[inflight] // the request in flight, while others may carry its messages
	opHdr map[*Op]http.Header      // per-op request headers (modern)
	lane  int                      // 0 for the session's first lane

	cx                          canceller // the cancel of the op in flight (Op.Cancel)
	cursor, prevCursor, pageBuf []byte    // pagination of a list op
}

// Session is Lane under the name the tree calls it by: a *Session is a
// lane (NewSession's: the session's first). An alias, so the step that
// named the lane touched no caller; new code says Lane.
type Session = Lane

// sessionState is one MCP session: the state its lanes share, the session
// id and negotiated protocol (the headers), the URL, the GET stream, the
// request ids, the subscriptions, the redirect and hygiene tallies.
type sessionState struct {
	cfg    *Config
	rt     http.RoundTripper // the client's transport: redirects are the session's business
	ownRT  bool              // rt holds connections of this session only (HTTP/2): Close closes them
	u      atomic.Pointer[url.URL]
	num    uint64
	budget *Budget

	hdr atomic.Pointer[sessHeaders] // replaced on (re-)initialize

	proto    string
	nextID   atomic.Int64
	reinitMu sync.Mutex // one re-initialize at a time, for all lanes

	// Progress tokens are unique across the run: "<run>-<session>-<id>"
	// (a JSON string), so a token of another session is always recognised.
	tokPrefix []byte // `"<run>-<session>-`

	lanes []*Lane   // every lane, the first included (fixed by Lanes)
	late  lateBoxes // mailboxes of requests answered before their progress (late.go)

	wantGET bool
	get     atomic.Pointer[getStream]
	lastGET *StreamStats // the stream's final stats once it stopped

	// 2026-07-28 (modern, stateless) state.
	modern     bool
	metaModern []byte       // inside of the _meta of every request
	reqSeq     atomic.Int64 // logical requests, for RequestPlaceholder
	listenSeq  atomic.Int64 // subscriptions/listen requests

	redirects atomic.Int64
	subs      subscriptions // resource subscriptions and pending changes
	hygMu     sync.Mutex
	hygiene   Hygiene
	badSID    bool

	// OnGETResume, when set before OpenStream, is called (from the GET
	// stream's goroutine) for every reconnect attempt of the GET stream —
	// resumes with Last-Event-ID and re-opens without (Resume.Reopen) — so
	// reconnects can be counted as they happen. It must be safe to call
	// concurrently with the session's other methods and must not block.
	OnGETResume func(Resume)
}

type sessHeaders struct {
	sid  string
	post http.Header
}

// Header values every session sends: shared, never modified (a request
// that adds a header clones the map first).
var (
	hdrJSON      = []string{"application/json"}
	hdrAcceptAll = []string{"application/json, text/event-stream"}
	hdrAcceptSSE = []string{"text/event-stream"}
)

// forGET returns the headers of a GET (the stream, a resume with
// lastEventID when not "") or a DELETE: the POST's without Content-Type,
// accepting only SSE. Built per request (they are rare), so an idle
// session does not hold a second header map.
func (h *sessHeaders) forGET(lastEventID string) http.Header {
	g := make(http.Header, len(h.post)+1)
	for k, v := range h.post {
		g[k] = v
	}
	delete(g, "Content-Type")
	g["Accept"] = hdrAcceptSSE
	if lastEventID != "" {
		g[HeaderLastEventID] = []string{lastEventID}
	}
	return g
}

// runID tells this process's progress tokens from another's.
var runID = func() string {
	var b [3]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

var sessionSerial atomic.Uint64

// NewSession returns a new session for cfg as its first lane (Lanes
// gives more); num distinguishes sessions (the VU number) in seeds. It sends nothing until Initialize. cfg must be valid
// (Config.Validate).
func NewSession(cfg *Config, num int) (*Lane, error) {
	u, err := parseShared(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(cfg)
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	rt, ownRT := perSession(rt)
	c := &sessionState{cfg: cfg, rt: rt, ownRT: ownRT, num: uint64(num), budget: cfg.budget()}
	c.u.Store(u)
	c.tokPrefix = fmt.Appendf(nil, `"%s-%d-`, runID, sessionSerial.Add(1))
	if p := cfg.protocol(); p == ProtocolAuto {
		return nil, fmt.Errorf("protocol %q: call Negotiate first", p)
	} else if IsModern(p) {
		c.modern, c.proto = true, p
		c.metaModern = modernMeta(cfg, p)
	}
	s := c.newLane(0)
	c.lanes = []*Lane{s}
	s.setHeaders("", s.proto)
	return s, nil
}

// urlCache is parseShared's: the last URL parsed.
var urlCache atomic.Pointer[cachedURL]

type cachedURL struct {
	raw string
	u   *url.URL
}

// parseShared parses a session's URL once for all the sessions of a run:
// they share the result, which nothing modifies (a redirect stores a new
// one).
func parseShared(raw string) (*url.URL, error) {
	if c := urlCache.Load(); c != nil && c.raw == raw {
		return c.u, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	urlCache.Store(&cachedURL{raw: raw, u: u})
	return u, nil
}

// newLane returns lane k of the session: its own request state.
func (c *sessionState) newLane(k int) *Lane {
	s := &Lane{
		sessionState: c,
		lane:         k,
		body:         &reqBody{},
		rng:          mrand.New(mrand.NewPCG(uint64(c.cfg.Seed), c.num|uint64(k)<<48)),
		idleDur:      c.cfg.streamIdleTimeout(),
	}
	s.reserve, s.release = s.budgetHooks(func() context.Context { return s.opCtx })
	return s
}

// Lanes returns n lanes of the session (n ≥ 1; the first is s's first
// lane), for n requests in flight at once: each lane is owned by one
// goroutine, which calls Do on it. Call it once, after NewSession and
// before any lane is used concurrently; Initialize, OpenStream and Close
// belong to the first lane and must not run while another lane has a
// request in flight (re-initializing after a 404 is handled inside Do, one
// lane at a time). A notification of one lane's request that arrives on
// another lane's stream is judged misrouted there, with both request ids
// in the evidence, and is not lost for its own request.
func (s *Lane) Lanes(n int) []*Lane {
	c := s.sessionState
	for k := len(c.lanes); k < n; k++ {
		c.lanes = append(c.lanes, c.newLane(k))
	}
	return c.lanes[:max(n, 1)]
}

// budgetHooks returns an SSE decoder's Reserve and Release hooks (set
// on one decoder at a time) that reserve its large buffers from the
// session's memory budget (Config.Budget), waiting on ctx().
func (s *Lane) budgetHooks(ctx func() context.Context) (reserve func() error, release func()) {
	limit := s.cfg.maxEvent()
	if limit <= 0 {
		limit = sse.MaxEventBytes // the decoder's own default (Decoder.Limit)
	}
	var held int64
	reserve = func() error {
		c := ctx()
		if c == nil {
			c = context.Background()
		}
		n, err := s.budget.acquire(c, 2*int64(limit))
		held = n
		return err
	}
	release = func() {
		s.budget.release(held)
		held = 0
	}
	return reserve, release
}

// postDecoders holds the SSE decoders of POST answers between answers.
var postDecoders = sync.Pool{New: func() any { return sse.NewDecoder(nil) }}

// takeDecoder returns a decoder for one SSE answer of the lane, with the
// lane's event limit and budget hooks; giveDecoder returns it.
func (s *Lane) takeDecoder() *sse.Decoder {
	d := postDecoders.Get().(*sse.Decoder)
	d.MaxEvent = s.cfg.maxEvent()
	d.Reserve, d.Release = s.reserve, s.release
	return d
}

// giveDecoder parks d (its large buffers and any budget reservation go
// back: Reset) and pools it.
func (s *Lane) giveDecoder(d *sse.Decoder) {
	d.Reset(nil)
	d.Reserve, d.Release = nil, nil
	postDecoders.Put(d)
}

// Modern reports whether the session speaks a modern (stateless) version.
func (s *Lane) Modern() bool { return s.modern }

// ID returns the Mcp-Session-Id ("" when the server assigned none).
func (s *Lane) ID() string { return s.hdr.Load().sid }

// Protocol returns the negotiated protocol version ("" before Initialize).
func (s *Lane) Protocol() string { return s.proto }

// BadSessionID reports whether the server assigned a session id with
// characters outside visible ASCII (0x21–0x7E), which the spec forbids
// (2025-11-25 transports §Session Management, item 1: "The session ID
// MUST only contain visible ASCII characters").
func (s *Lane) BadSessionID() bool { return s.badSID }

func (s *Lane) setHeaders(sid, proto string) { s.hdr.Store(s.buildHeaders(sid, proto)) }

// buildHeaders returns the request headers of a session with id sid at
// protocol version proto ("" for none).
func (s *Lane) buildHeaders(sid, proto string) *sessHeaders {
	h := &sessHeaders{sid: sid, post: make(http.Header, 4+len(s.cfg.Header))}
	for k, v := range s.cfg.Header {
		h.post[k] = v
	}
	h.post["Content-Type"] = hdrJSON
	h.post["Accept"] = hdrAcceptAll
	if sid != "" {
		h.post[HeaderSessionID] = []string{sid}
	}
	// The header exists since 2025-06-18 (transports §Protocol Version Header).
	if proto != "" && proto != Protocol20250326 {
		h.post[HeaderProtocolVersion] = []string{proto}
	}
	return h
}

func (c *Config) maxReissues() int {
	if c.MaxReissues > 0 {
		return c.MaxReissues
	}
	return 3
}
