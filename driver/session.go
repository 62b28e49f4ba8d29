package driver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// Header names of the Streamable HTTP transport (2025-11-25 transports).
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderLastEventID     = "Last-Event-Id"
)

// Session is one MCP session over Streamable HTTP: initialize, operations,
// an optional standalone GET stream, DELETE on close.
//
// A Session value is one lane of its session: it has one request in flight
// at a time. Initialize, Do and Close of one lane must not be called
// concurrently. Lanes returns more lanes of the same session, for
// concurrent requests (each lane is then owned by one goroutine). What the
// lanes share: the session id and the negotiated protocol (the headers),
// the URL, the GET stream, the request ids (unique in the session), the
// redirect and hygiene tallies; each lane has its own request body,
// decoder, timers and response stream, with its own ledger. The GET stream
// runs in a goroutine of its own and only touches its own state and the
// lanes' in-flight mailboxes; StreamStats, Redirects and Hygiene are safe
// to call from any goroutine.
type Session struct {
	*core // shared by the session's lanes

	body  *reqBody
	jbuf  []byte
	dec   *sse.Decoder
	ans   []byte
	rng   *mrand.Rand
	opCtx context.Context // the operation in progress (for the decoder's budget hook)

	tokBuf []byte // the progress token of the request in flight
	mbuf   []byte // _meta render buffer
	pbuf   []byte // params of an op with Render

	opMu     sync.Mutex
	opTimer  *time.Timer
	opCancel context.CancelCauseFunc

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
	laneMore
}

// core is the state the lanes of a session share.
type core struct {
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

	lanes []*Session // every lane, the first included (fixed by Lanes)
	late  lateBoxes  // mailboxes of requests answered before their progress (late.go)

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
	get  http.Header
}

// runID tells this process's progress tokens from another's.
var runID = func() string {
	var b [3]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

var sessionSerial atomic.Uint64

// NewSession returns a session for cfg; num distinguishes sessions (the VU
// number) in seeds. It sends nothing until Initialize. cfg must be valid
// (Config.Validate).
func NewSession(cfg *Config, num int) (*Session, error) {
	u, err := url.Parse(cfg.URL)
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
	c := &core{cfg: cfg, rt: rt, ownRT: ownRT, num: uint64(num), budget: cfg.budget()}
	c.u.Store(u)
	c.tokPrefix = fmt.Appendf(nil, `"%s-%d-`, runID, sessionSerial.Add(1))
	if p := cfg.protocol(); p == ProtocolAuto {
		return nil, fmt.Errorf("protocol %q: call Negotiate first", p)
	} else if IsModern(p) {
		c.modern, c.proto = true, p
		c.metaModern = modernMeta(cfg, p)
	}
	s := c.newLane(0)
	c.lanes = []*Session{s}
	s.setHeaders("", s.proto)
	return s, nil
}

// newLane returns lane k of the session: its own request state.
func (c *core) newLane(k int) *Session {
	s := &Session{
		core:    c,
		lane:    k,
		body:    &reqBody{},
		dec:     sse.NewDecoder(nil),
		rng:     mrand.New(mrand.NewPCG(uint64(c.cfg.Seed), c.num|uint64(k)<<48)),
		idleDur: c.cfg.streamIdleTimeout(),
	}
	s.dec.MaxEvent = c.cfg.maxEvent()
	s.hookBudget(s.dec, func() context.Context { return s.opCtx })
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
func (s *Session) Lanes(n int) []*Session {
	c := s.core
	for k := len(c.lanes); k < n; k++ {
		c.lanes = append(c.lanes, c.newLane(k))
	}
	return c.lanes[:max(n, 1)]
}

// hookBudget makes dec reserve its large buffers from the session's
// budget, waiting under the context ctx returns.
func (s *Session) hookBudget(dec *sse.Decoder, ctx func() context.Context) {
	var held int64
	dec.Reserve = func() error {
		c := ctx()
		if c == nil {
			c = context.Background()
		}
		n, err := s.budget.acquire(c, 2*int64(dec.Limit()))
		held = n
		return err
	}
	dec.Release = func() {
		s.budget.release(held)
		held = 0
	}
}

// Modern reports whether the session speaks a modern (stateless) version.
func (s *Session) Modern() bool { return s.modern }

// ID returns the Mcp-Session-Id ("" when the server assigned none).
func (s *Session) ID() string { return s.hdr.Load().sid }

// Protocol returns the negotiated protocol version ("" before Initialize).
func (s *Session) Protocol() string { return s.proto }

// BadSessionID reports whether the server assigned a session id with
// characters outside visible ASCII (0x21–0x7E), which the spec forbids
// (2025-11-25 transports §Session Management, item 1: "The session ID
// MUST only contain visible ASCII characters").
func (s *Session) BadSessionID() bool { return s.badSID }

func (s *Session) setHeaders(sid, proto string) { s.hdr.Store(s.buildHeaders(sid, proto)) }

// buildHeaders returns the request headers of a session with id sid at
// protocol version proto ("" for none).
func (s *Session) buildHeaders(sid, proto string) *sessHeaders {
	h := &sessHeaders{sid: sid, post: make(http.Header, 6+len(s.cfg.Header)), get: make(http.Header, 4+len(s.cfg.Header))}
	for k, v := range s.cfg.Header {
		h.post[k] = v
		h.get[k] = v
	}
	h.post["Content-Type"] = []string{"application/json"}
	h.post["Accept"] = []string{"application/json, text/event-stream"}
	h.get["Accept"] = []string{"text/event-stream"}
	if sid != "" {
		h.post[HeaderSessionID] = []string{sid}
		h.get[HeaderSessionID] = []string{sid}
	}
	// The header exists since 2025-06-18 (transports §Protocol Version Header).
	if proto != "" && proto != Protocol20250326 {
		h.post[HeaderProtocolVersion] = []string{proto}
		h.get[HeaderProtocolVersion] = []string{proto}
	}
	return h
}

// call is the state of one request/response exchange.
type call struct {
	id     int64
	tool   bool
	init   bool
	expect int
	tok    []byte // raw JSON progress token, nil without one
	// a list op (more: its result had a nextCursor, in Session.cursor); a cancel is armed (Op.Cancel)
	list, more, cx bool

	gotResp  bool
	respAt   time.Time
	inputReq []byte // an input_required result to answer (2026-07-28)
	err      error  // outcome carried by the response (RPC error, isError)
	result   []byte // copy of the result (initialize only)
	sid      string // Mcp-Session-Id of the answer (initialize only)
}

var errSession404 = fmt.Errorf("%w", ErrSessionMissing)

// Initialize runs the initialization phase (2025-11-25 lifecycle):
// initialize → (Mcp-Session-Id) → notifications/initialized. It records the
// exchange in res (times, status, bytes) and returns the error also stored
// in res.Err. ErrUnsupportedVersion when the server picks a version this
// driver does not speak; ErrBadResponse when the session id holds control
// characters (it could not be sent back).
func (s *Session) Initialize(ctx context.Context, res *Result) error {
	res.Start = time.Now()
	if res.Intended.IsZero() {
		res.Intended = res.Start
	}
	ctx, cancel := s.opContext(ctx)
	s.opCtx = ctx
	err := s.initialize(ctx, res)
	s.endOp(cancel)
	s.opCtx = nil
	res.End = time.Now()
	if err != nil {
		res.fail(err)
	}
	return err
}

func (s *Session) next() int64 { return s.nextID.Add(1) }

func (c *Config) maxReissues() int {
	if c.MaxReissues > 0 {
		return c.MaxReissues
	}
	return 3
}

// Do runs op as one JSON-RPC request and fills res (the caller sets
// res.Op and res.Intended; Start, FirstByte, End and the rest are set
// here). End is when the response arrived; what the stream carried after
// it is judged by the ledger but is not latency. A 404 on the session
// re-initializes once and retries (res.Reinits); a response stream that
// breaks is resumed with GET + Last-Event-ID after the reconnect policy's
// wait (res.Resumes); a break before any event id is unresumable and,
// with Config.ReissueUnresumable, re-sent (res.Reissues). List ops follow
// nextCursor (paginate.go), Op.Cancel cancels (cancel.go), Op.Changes and
// resources/(un)subscribe feed the subscriptions (subscribe.go). The
// outcome is res.Class/res.Err; Do never panics on bad input.
func (s *Session) Do(ctx context.Context, op *Op, res *Result) {
	res.Start = time.Now()
	if res.Intended.IsZero() {
		res.Intended = res.Start
	}
	ctx, cancel := s.opContext(ctx)
	s.opCtx = ctx
	var changed time.Time // the pending change of a subscribed resource (Op.Changes)
	defer s.endDo(op, res, cancel, &changed)
	params := s.opParams(op, res)
	seen := s.hdr.Load()
	hdr := seen.post
	if s.modern {
		hdr = s.modernHeaders(op)
	}
	var extra []byte // retry fields of a multi round-trip request
	retried := false // after a 404 on the session
	for first := true; ; first = false {
		attempt := time.Now()
		c := call{id: s.next(), tool: op.isToolCall, list: op.list, expect: op.ExpectProgress}
		body := s.renderCall(&c, op, params, extra)
		res.Ledger.restart()
		s.begin(&c)
		if op.Cancel != nil || op.Changes != "" {
			changed = s.beforeSend(ctx, op, &c, first, attempt, changed)
		}
		s.arm()
		res.End = time.Time{}
		err := s.exchange(ctx, body, &c, res, hdr)
		if op.Cancel != nil {
			s.noteAnswer(op, &c, attempt, err)
		}
		switch {
		case c.cx && s.cancelling():
			res.Cancelled = true // what came after the cancel is judged; nothing more is sent
		case errors.Is(err, errSession404) && !retried:
			retried = true
			if !s.reinitialize(ctx, res, seen) {
				return
			}
			seen = s.hdr.Load()
			hdr = seen.post
			continue
		case s.reissuable(ctx, err, res):
			res.Reissues++
			res.Wasted += time.Since(attempt)
			continue
		case err == nil && c.inputReq != nil:
			x, ok := s.inputRound(&c, res)
			if !ok {
				break
			}
			extra = x
			continue
		case err == nil && c.err == nil && c.more:
			if x, ok := s.nextPage(op, res); ok {
				extra = x
				continue
			}
		case err != nil:
			res.fail(err)
		case c.err != nil:
			res.fail(c.err)
		}
		if c.gotResp && !res.Cancelled {
			res.End = c.respAt
		}
		if c.list && res.Err == nil && !res.Cancelled {
			res.Pages++
		}
		break
	}
}

// opParams returns op's params (rendered by op.Render, with res's VU and
// Iteration, when op has one), with RequestPlaceholder replaced by a key
// unique to this request ("s<session>-<n>") when op has one.
func (s *Session) opParams(op *Op, res *Result) []byte {
	p := op.Params
	if op.Render != nil {
		s.pbuf = op.Render(s.pbuf[:0], RenderContext{VU: res.VU, Iteration: res.Iteration})
		p = s.pbuf
	}
	if op.parts == nil {
		return p
	}
	var key [40]byte
	k := append(key[:0], 's')
	k = appendInt(k, int64(s.num))
	k = append(k, '-')
	k = appendInt(k, s.reqSeq.Add(1))
	if op.Render != nil {
		return bytes.ReplaceAll(p, []byte(RequestPlaceholder), k)
	}
	return bytes.Join(op.parts, k)
}

// renderCall renders the request of c into the session's body buffer:
// op's method with params, the extra params fields of a multi round-trip
// retry, and _meta (c's progressToken, set here when op asks for
// progress, and the modern _meta).
func (s *Session) renderCall(c *call, op *Op, params, extra []byte) []byte {
	meta := s.mbuf[:0]
	if op.Progress {
		s.tokBuf = appendInt(append(s.tokBuf[:0], s.tokPrefix...), c.id)
		s.tokBuf = append(s.tokBuf, '"')
		c.tok = s.tokBuf
		meta = append(meta, `"progressToken":`...)
		meta = append(meta, c.tok...)
	}
	if s.modern {
		if len(meta) > 0 {
			meta = append(meta, ',')
		}
		meta = append(meta, s.metaModern...)
	}
	s.mbuf = meta
	return jsonrpc.AppendRequestExtra(s.body.buf(), c.id, op.Method, params, extra, meta)
}

// reinitialize runs initialize again after a 404 on the session whose
// headers were seen (counted in res.Reinits, its bytes in res) and reopens
// the GET stream. One lane re-initializes at a time: a lane whose session
// another lane re-initialized meanwhile just retries with the new id. It
// reports false, with res failed, when initialize fails.
func (s *Session) reinitialize(ctx context.Context, res *Result, seen *sessHeaders) bool {
	s.reinitMu.Lock()
	defer s.reinitMu.Unlock()
	if s.hdr.Load() != seen {
		return true
	}
	res.Reinits++
	s.forgetSubscriptions() // the server lost the session, and its subscriptions
	var scratch Result
	s.arm()
	ierr := s.initialize(ctx, &scratch)
	res.BytesIn += scratch.BytesIn
	res.BytesOut += scratch.BytesOut
	if ierr != nil {
		res.fail(fmt.Errorf("re-initialize after 404: %w", ierr))
		return false
	}
	if s.wantGET {
		s.restartGET(ctx)
	}
	return true
}

// reissuable reports whether a request that failed with err is re-sent
// with a new id (Config.ReissueUnresumable, within MaxReissues): a stream
// broken before any event id, or (2026-07-28) a cancelled request.
func (s *Session) reissuable(ctx context.Context, err error, res *Result) bool {
	return s.cfg.ReissueUnresumable && res.Reissues < s.cfg.maxReissues() && ctx.Err() == nil &&
		(errors.Is(err, ErrUnresumable) || errors.Is(err, ErrStreamCancelled) ||
			// 2026-07-28: a connection lost before the answer is a cancelled request too.
			(s.modern && Classify(err) == ClassTransport))
}
