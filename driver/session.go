package driver

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
// A Session is owned by one goroutine (a VU): Initialize, Do and Close must
// not be called concurrently. The GET stream runs in a goroutine of its own
// and only touches its own state and the in-flight request's mailbox;
// StreamStats, Redirects and Hygiene are safe to call from any goroutine.
type Session struct {
	cfg    *Config
	rt     http.RoundTripper // the client's transport: redirects are the session's business
	u      atomic.Pointer[url.URL]
	num    uint64
	budget *Budget

	hdr atomic.Pointer[sessHeaders] // replaced on (re-)initialize

	proto      string
	serverInfo []byte // raw initialize result
	nextID     int64
	body       *reqBody
	jbuf       []byte
	dec        *SSEDecoder
	ans        []byte
	rng        *mrand.Rand
	opCtx      context.Context // the operation in progress (for the decoder's budget hook)

	// Progress tokens are unique across the run: "<run>-<session>-<id>"
	// (a JSON string), so a token of another session is always recognised.
	tokPrefix []byte // `"<run>-<session>-`
	tokBuf    []byte

	opMu     sync.Mutex
	opTimer  *time.Timer
	opCancel context.CancelCauseFunc

	idleMu    sync.Mutex
	idle      *time.Timer
	idleBody  io.Closer
	idleFired atomic.Bool
	idleDur   time.Duration
	sr        streamReader

	wantGET bool
	get     *getStream
	lastGET *StreamStats // the stream's final stats once it stopped
	mbox    inflight
	cur     atomic.Pointer[inflight] // the request in flight, while a GET stream is open

	// 2026-07-28 (modern, stateless) state.
	modern     bool
	metaModern []byte              // inside of the _meta of every request
	opHdr      map[*Op]http.Header // per-op request headers
	reqSeq     int64               // logical requests, for RequestPlaceholder
	listenSeq  atomic.Int64        // subscriptions/listen requests
	pbuf, mbuf []byte              // params and _meta render buffers

	redirects atomic.Int64
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
	s := &Session{
		cfg:     cfg,
		rt:      rt,
		num:     uint64(num),
		budget:  cfg.budget(),
		body:    &reqBody{},
		dec:     NewSSEDecoder(nil),
		rng:     mrand.New(mrand.NewPCG(uint64(cfg.Seed), uint64(num))),
		idleDur: cfg.streamIdleTimeout(),
	}
	s.u.Store(u)
	s.dec.MaxEvent = cfg.maxEvent()
	s.hookBudget(s.dec, func() context.Context { return s.opCtx })
	s.tokPrefix = fmt.Appendf(nil, `"%s-%d-`, runID, sessionSerial.Add(1))
	if p := cfg.protocol(); p == ProtocolAuto {
		return nil, fmt.Errorf("protocol %q: call Negotiate first", p)
	} else if IsModern(p) {
		s.modern, s.proto = true, p
		s.metaModern = modernMeta(cfg, p)
	}
	s.setHeaders("", s.proto)
	return s, nil
}

// hookBudget makes dec reserve its large buffers from the session's
// budget, waiting under the context ctx returns.
func (s *Session) hookBudget(dec *SSEDecoder, ctx func() context.Context) {
	var held int64
	dec.Reserve = func() error {
		c := ctx()
		if c == nil {
			c = context.Background()
		}
		n, err := s.budget.acquire(c, 2*int64(dec.max()))
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

// ServerInfo returns the raw JSON result of the last initialize.
func (s *Session) ServerInfo() []byte { return s.serverInfo }

// BadSessionID reports whether the server assigned a session id with
// characters outside visible ASCII (0x21–0x7E), which the spec forbids
// (2025-11-25 transports §Session Management, item 1: "The session ID
// MUST only contain visible ASCII characters").
func (s *Session) BadSessionID() bool { return s.badSID }

func (s *Session) setHeaders(sid, proto string) {
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
	s.hdr.Store(h)
}

// call is the state of one request/response exchange.
type call struct {
	id     int64
	tool   bool
	init   bool
	expect int
	tok    []byte // raw JSON progress token, nil without one

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

func (s *Session) initialize(ctx context.Context, res *Result) error {
	if s.modern {
		return s.discover(ctx, res)
	}
	s.setHeaders("", "")
	proto := s.cfg.protocol()
	params := make([]byte, 0, 256)
	params = append(params, `{"protocolVersion":"`...)
	params = append(params, proto...)
	params = append(params, `","capabilities":{"roots":{"listChanged":false},"sampling":{}`...)
	if proto != Protocol20250326 {
		params = append(params, `,"elicitation":{}`...)
	}
	params = append(params, `},"clientInfo":{"name":`...)
	params = appendJSONString(params, cmpOr(s.cfg.ClientName, "mcpbench"))
	params = append(params, `,"version":`...)
	params = appendJSONString(params, cmpOr(s.cfg.ClientVersion, "dev"))
	params = append(params, "}}"...)

	c := call{id: s.next(), init: true}
	body := appendRequest(s.body.buf(), c.id, "initialize", params, nil)
	if err := s.exchange(ctx, body, &c, res, s.hdr.Load().post); err != nil {
		return err
	}
	if c.err != nil {
		return c.err
	}
	v := Field(c.result, "protocolVersion")
	if len(v) < 2 || v[0] != '"' {
		return fmt.Errorf("%w: initialize result has no protocolVersion", ErrBadResponse)
	}
	got := string(v[1 : len(v)-1])
	if !slices.Contains(SupportedProtocols, got) {
		return fmt.Errorf("%w: server chose %q", ErrUnsupportedVersion, got)
	}
	s.proto = got
	s.serverInfo = c.result
	s.setHeaders(c.sid, got)

	// notifications/initialized: 202 expected (2025-11-25 transports
	// §Sending Messages, item 4); some servers answer 200/204.
	body = appendNotification(s.body.buf(), "notifications/initialized", nil)
	s.arm()
	resp, err := s.send(ctx, http.MethodPost, body, s.hdr.Load().post, "")
	res.BytesOut += int64(len(body))
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	res.Status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notifications/initialized: %w", s.statusError(resp, res))
	}
	res.BytesIn += drain(resp)
	return nil
}

// checkSessionID flags a session id outside visible ASCII; one the driver
// cannot send back (control characters) is an error.
func (s *Session) checkSessionID(sid string) error {
	for i := 0; i < len(sid); i++ {
		if c := sid[i]; c < 0x21 || c > 0x7e {
			s.badSID = true
			if c < 0x20 || c == 0x7f {
				return fmt.Errorf("%w: Mcp-Session-Id holds control characters (it MUST be visible ASCII)", ErrBadResponse)
			}
		}
	}
	return nil
}

// discover starts a modern session: server/discover (2026-07-28 server
// §discover) must list the session's protocol version.
func (s *Session) discover(ctx context.Context, res *Result) error {
	c := call{id: s.next(), init: true}
	body := appendRequest(s.body.buf(), c.id, "server/discover", nil, s.metaModern)
	h := s.hdr.Load().post.Clone()
	h[HeaderMethod] = []string{"server/discover"}
	if err := s.exchange(ctx, body, &c, res, h); err != nil {
		return err
	}
	if c.err != nil {
		return c.err
	}
	var d struct {
		Supported []string `json:"supportedVersions"`
	}
	if json.Unmarshal(c.result, &d) != nil || !slices.Contains(d.Supported, s.proto) {
		return fmt.Errorf("%w: server/discover lists %v, not %s", ErrUnsupportedVersion, d.Supported, s.proto)
	}
	s.serverInfo = c.result
	return nil
}

func (s *Session) next() int64 {
	s.nextID++
	return s.nextID
}

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
// with Config.ReissueUnresumable, re-sent (res.Reissues). The outcome is
// res.Class/res.Err; Do never panics on bad input.
func (s *Session) Do(ctx context.Context, op *Op, res *Result) {
	res.Start = time.Now()
	if res.Intended.IsZero() {
		res.Intended = res.Start
	}
	ctx, cancel := s.opContext(ctx)
	s.opCtx = ctx
	defer func() {
		s.cur.Store(nil)
		s.endOp(cancel)
		s.opCtx = nil
		if res.End.IsZero() {
			res.End = time.Now()
		}
	}()
	params := op.Params
	if op.parts != nil {
		s.reqSeq++
		var key [40]byte
		k := append(key[:0], 's')
		k = appendInt(k, int64(s.num))
		k = append(k, '-')
		k = appendInt(k, s.reqSeq)
		params = bytes.Join(op.parts, k)
	}
	hdr := s.hdr.Load().post
	if s.modern {
		hdr = s.modernHeaders(op)
	}
	var extra []byte // retry fields of a multi round-trip request
	for {
		attempt := time.Now()
		c := call{id: s.next(), tool: op.isToolCall, expect: op.ExpectProgress}
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
		body := appendRequestExtra(s.body.buf(), c.id, op.Method, params, extra, meta)
		res.Ledger.restart()
		s.begin(&c)
		s.arm()
		res.End = time.Time{}
		err := s.exchange(ctx, body, &c, res, hdr)
		switch {
		case errors.Is(err, errSession404) && res.Reinits == 0:
			res.Reinits++
			var scratch Result
			s.arm()
			if ierr := s.initialize(ctx, &scratch); ierr != nil {
				res.BytesIn += scratch.BytesIn
				res.BytesOut += scratch.BytesOut
				res.fail(fmt.Errorf("re-initialize after 404: %w", ierr))
				return
			}
			res.BytesIn += scratch.BytesIn
			res.BytesOut += scratch.BytesOut
			hdr = s.hdr.Load().post
			if s.wantGET {
				s.restartGET(ctx)
			}
			continue
		case s.cfg.ReissueUnresumable && res.Reissues < s.cfg.maxReissues() && ctx.Err() == nil &&
			(errors.Is(err, ErrUnresumable) || errors.Is(err, ErrStreamCancelled) ||
				// 2026-07-28: a connection lost before the answer is a cancelled request too.
				(s.modern && Classify(err) == ClassTransport)):
			res.Reissues++
			res.Wasted += time.Since(attempt)
			continue
		case err == nil && c.inputReq != nil:
			if res.InputRounds >= maxInputRounds {
				res.fail(fmt.Errorf("%w: still input_required after %d rounds", ErrBadResponse, res.InputRounds))
				break
			}
			x, ierr := s.cfg.inputResponses(c.inputReq)
			if ierr != nil {
				res.fail(ierr)
				break
			}
			extra = x
			res.InputRounds++
			continue
		case err != nil:
			res.fail(err)
		case c.err != nil:
			res.fail(c.err)
		}
		if c.gotResp {
			res.End = c.respAt
		}
		break
	}
}

// exchange POSTs one request and reads its answer (JSON or SSE, resuming
// broken streams). Errors of the exchange itself are returned; errors the
// response carries are left in c.err.
func (s *Session) exchange(ctx context.Context, body []byte, c *call, res *Result, hdr http.Header) error {
	h := s.hdr.Load()
	resp, err := s.send(ctx, http.MethodPost, body, hdr, "")
	res.BytesOut += int64(len(body))
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	if res.FirstByte.IsZero() {
		res.FirstByte = time.Now()
	}
	res.Status = resp.StatusCode
	switch code := resp.StatusCode; {
	case code == http.StatusNotFound && h.sid != "":
		res.BytesIn += drain(resp)
		return errSession404
	case code == http.StatusAccepted:
		res.BytesIn += drain(resp)
		return fmt.Errorf("%w: 202 Accepted to a request", ErrBadResponse)
	case code < 200 || code > 299:
		return s.statusError(resp, res)
	}
	if c.init && !s.modern {
		// Known from the headers on: a resume of this stream carries it.
		c.sid = resp.Header.Get(HeaderSessionID)
		if err := s.checkSessionID(c.sid); err != nil {
			drain(resp)
			return err
		}
		s.setHeaders(c.sid, "")
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case mtJSON:
		err = s.readJSON(ctx, resp, c, res)
		s.disarm()
	case mtSSE:
		s.disarm() // the stream is open: StreamIdleTimeout bounds it now
		if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
			res.BytesIn += drain(resp)
			return fmt.Errorf("%w: SSE stream with Content-Encoding %q (a compressed event stream is buffered by the decompressor, so events would arrive late; mcpbench decodes compression on JSON answers only)", ErrBadResponse, ce)
		}
		err = s.readPOSTStream(ctx, resp, c, res)
	default:
		res.BytesIn += drain(resp)
		return fmt.Errorf("%w: content type %q", ErrBadResponse, resp.Header.Get("Content-Type"))
	}
	return err
}

// readJSON reads an application/json answer (one message or a batch)
// within MaxMessageBytes and the memory budget; gzip is decoded.
func (s *Session) readJSON(ctx context.Context, resp *http.Response, c *call, res *Result) error {
	defer resp.Body.Close()
	limit := s.cfg.maxMessage()
	if resp.ContentLength > limit {
		return fmt.Errorf("%w %s (Content-Length %s; not read)", ErrResponseTooLarge, FormatBytes(limit), FormatBytes(resp.ContentLength))
	}
	var r io.Reader = &countingReader{r: resp.Body, n: &res.BytesIn}
	size := resp.ContentLength
	switch ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); ce {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("%w: Content-Encoding gzip: %v", ErrBadResponse, err)
		}
		r, size = zr, -1
	default:
		return fmt.Errorf("%w: Content-Encoding %q not supported", ErrBadResponse, ce)
	}
	b, held, err := s.readMessage(ctx, r, size, limit)
	defer s.budget.release(held) // once the message is handled
	defer s.keepJSONBuf(b)
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	c.respAt = time.Now()
	led := &res.Ledger
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '[' {
		// A JSON-RPC batch (2025-03-26 allowed them): valid JSON as a whole,
		// then walk its elements.
		if e, err := skipValue(t, 0); err != nil || e != len(t) {
			return fmt.Errorf("%w: malformed JSON-RPC batch", ErrBadResponse)
		}
		i := 1
		for {
			i = skipWS(t, i)
			if i >= len(t) || t[i] == ']' {
				break
			}
			if t[i] == ',' {
				i++
				continue
			}
			e, err := skipValue(t, i)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrBadResponse, err)
			}
			if err := s.handle(ctx, t[i:e], c, res, led); err != nil {
				return err
			}
			i = e
		}
	} else if err := s.handle(ctx, t, c, res, led); err != nil {
		return err
	}
	if !c.gotResp {
		s.cur.Store(nil)
		return ErrNoResponse
	}
	s.finishCall(c, res, led, true)
	return nil
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// handle processes one incoming message of a request's answer (its
// stream, or its JSON body) and judges it in led: a response to another
// id is cross-stream, a second response duplicated; a progress
// notification of this request before the response is counted (and
// checked for duplicates and order), after it late; one of another request
// of this session misrouted, of another session (or of no request)
// cross-stream. It returns an error only for a message that is not
// JSON-RPC.
func (s *Session) handle(ctx context.Context, data []byte, c *call, res *Result, led *Ledger) error {
	m, err := ParseMessage(data)
	if err != nil {
		perr := fmt.Errorf("%w: %v", ErrBadResponse, err)
		if c.err == nil && !c.gotResp {
			c.err = perr
		}
		return perr
	}
	switch m.Kind {
	case KindResponse:
		if !IDEqual(m.ID, c.id) {
			led.fault(VerdictCrossStream, "a response to id "+quoteShort(m.ID)+" arrived on the stream of request "+strconv.FormatInt(c.id, 10))
			return nil
		}
		if c.gotResp {
			led.fault(VerdictDuplicated, "the response to request "+strconv.FormatInt(c.id, 10)+" arrived twice")
			return nil
		}
		c.gotResp = true
		c.respAt = time.Now()
		switch {
		case m.Error != nil:
			re, ok := rpcErrorOf(m.Error)
			if !ok {
				c.err = fmt.Errorf("%w: malformed JSON-RPC error object %s", ErrBadResponse, quoteShort(m.Error))
			} else {
				c.err = re
			}
		case s.modern && bytes.Equal(Field(m.Result, "resultType"), litInputRequired):
			c.inputReq = bytes.Clone(m.Result) // answered by a retry (Do)
		case c.tool && bytes.Equal(Field(m.Result, "isError"), litTrue):
			c.err = toolError(m.Result)
		case c.init:
			c.result = bytes.Clone(m.Result)
		}
	case KindNotification:
		if string(m.Method) != "notifications/progress" {
			return nil
		}
		tok := Field(m.Params, "progressToken")
		v, _ := FieldNumber(m.Params, "progress")
		switch {
		case c.tok != nil && bytes.Equal(tok, c.tok):
			t, _ := FieldNumber(m.Params, "total")
			if c.gotResp {
				if !slices.Contains(led.progress, v) {
					led.progress = append(led.progress, v) // it arrived: not lost
					led.total = max(led.total, t)
				}
				led.fault(VerdictLate, "progress "+fmtNum(v)+" arrived after the response")
				return nil
			}
			res.Progress++
			led.progressValue(v, t)
		case bytes.HasPrefix(tok, s.tokPrefix):
			led.fault(VerdictMisrouted, "progress "+fmtNum(v)+" of another request of this session (token "+quoteShort(tok)+")")
		default:
			led.fault(VerdictCrossStream, "progress "+fmtNum(v)+" for token "+quoteShort(tok)+", not this session's")
		}
	case KindRequest:
		s.ans = s.answer(ctx, m, s.ans)
	}
	return nil
}

// toolError is ErrToolError with the tool's own message (the first text
// content of the result, cut to 200 bytes).
func toolError(result []byte) error {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	json.Unmarshal(result, &r)
	for _, c := range r.Content {
		if c.Type == "text" && c.Text != "" {
			return fmt.Errorf("%w: %s", ErrToolError, firstLine([]byte(c.Text)))
		}
	}
	return ErrToolError
}

// answer POSTs the canned result for a server→client request (ping,
// sampling/createMessage, elicitation/create, roots/list), or -32601,
// within RequestTimeout. Failures are ignored: the server sees them as a
// missing answer.
func (s *Session) answer(ctx context.Context, m Message, buf []byte) []byte {
	buf = buf[:0]
	if r, ok := s.cfg.canned(string(m.Method)); ok {
		buf = appendResponse(buf, m.ID, r)
	} else {
		buf = appendErrorResponse(buf, m.ID, -32601, "method not found: "+string(m.Method))
	}
	if d := s.cfg.requestTimeout(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	resp, err := s.sendCopy(ctx, buf)
	if err == nil {
		drain(resp)
	}
	return buf
}

// Close ends the session: it stops the GET stream and sends DELETE with
// the session id (2025-11-25 transports §Session Management, item 5);
// 405 (the server does not allow it) and 404 (already gone) are fine. With
// Config.CheckDeleted, a deleted session is then probed: the server must
// answer 404 to its id (item 3); the verdict is in Hygiene.
func (s *Session) Close(ctx context.Context) error {
	s.stopGET()
	h := s.hdr.Load()
	if h.sid == "" || s.modern {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, durOr(s.cfg.RequestTimeout, 30*time.Second))
	defer cancel()
	resp, err := s.send(ctx, http.MethodDelete, nil, h.get, "")
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		drain(resp)
		if s.cfg.CheckDeleted {
			s.checkDeleted(ctx, h)
		}
		return nil
	case http.StatusMethodNotAllowed, http.StatusNotFound:
		drain(resp)
		return nil
	}
	var scratch Result
	return fmt.Errorf("DELETE: %w", s.statusError(resp, &scratch))
}

// Hygiene is the verdict of the deleted-session check (Config.CheckDeleted).
type Hygiene struct {
	// Checked reports whether the check was made.
	Checked bool
	// Verdict is VerdictDeletedSessionAccepted (the server still served
	// the deleted session: 2xx), VerdictWrongMissingStatus (another status
	// than 404), or NumVerdicts when the answer was the 404 required.
	Verdict Verdict
	// Status is the HTTP status of the request on the deleted session.
	Status int
	// SessionID is the deleted session's id.
	SessionID string
}

// Faulty reports whether the check found a fault.
func (h Hygiene) Faulty() bool { return h.Checked && h.Verdict != NumVerdicts }

// checkDeleted sends a ping on a deleted session: anything but 404 is a
// hygiene fault (2xx: the session lives on; another status: the wrong
// answer for a missing session; 2025-11-25 transports §Session Management,
// items 3 and 4).
func (s *Session) checkDeleted(ctx context.Context, h *sessHeaders) {
	body := appendRequest(s.body.buf(), s.next(), "ping", nil, nil)
	resp, err := s.send(ctx, http.MethodPost, body, h.post, "")
	if err != nil {
		return
	}
	drain(resp)
	hy := Hygiene{Checked: true, Verdict: NumVerdicts, Status: resp.StatusCode, SessionID: h.sid}
	switch {
	case resp.StatusCode == http.StatusNotFound:
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		hy.Verdict = VerdictDeletedSessionAccepted
	default:
		hy.Verdict = VerdictWrongMissingStatus
	}
	s.hygMu.Lock()
	s.hygiene = hy
	s.hygMu.Unlock()
}

// Hygiene returns the verdict of the deleted-session check made by Close
// (Config.CheckDeleted); Checked is false when none was made.
func (s *Session) Hygiene() Hygiene {
	s.hygMu.Lock()
	defer s.hygMu.Unlock()
	return s.hygiene
}
