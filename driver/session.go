package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
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
// and only touches its own state; StreamStats is safe to call from any
// goroutine.
type Session struct {
	cfg *Config
	rt  http.RoundTripper // the client's transport: no redirects or cookies to handle
	u   *url.URL
	num uint64

	hdr atomic.Pointer[sessHeaders] // replaced on (re-)initialize

	proto      string
	serverInfo []byte // raw initialize result
	nextID     int64
	body       *reqBody
	jbuf       []byte
	dec        *SSEDecoder
	ans        []byte
	rng        *rand.Rand

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

	// 2026-07-28 (modern, stateless) state.
	modern     bool
	metaModern []byte              // inside of the _meta of every request
	opHdr      map[*Op]http.Header // per-op request headers
	reqSeq     int64               // logical requests, for RequestPlaceholder
	listenSeq  atomic.Int64        // subscriptions/listen requests
	pbuf, mbuf []byte              // params and _meta render buffers

	hygiene Ledger

	// OnGETResume, when set before OpenStream, is called (from the GET
	// stream's goroutine) for every resume attempt of the GET stream, so
	// reconnects can be counted as they happen. It must be safe to call
	// concurrently with the session's other methods and must not block.
	OnGETResume func(Resume)
}

type sessHeaders struct {
	sid  string
	post http.Header
	get  http.Header
}

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
		u:       u,
		num:     uint64(num),
		body:    &reqBody{},
		dec:     NewSSEDecoder(nil),
		rng:     rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(num))),
		idleDur: cfg.streamIdleTimeout(),
	}
	if p := cfg.protocol(); p == ProtocolAuto {
		return nil, fmt.Errorf("protocol %q: call Negotiate first", p)
	} else if IsModern(p) {
		s.modern, s.proto = true, p
		s.metaModern = modernMeta(cfg, p)
	}
	s.setHeaders("", s.proto)
	return s, nil
}

// Modern reports whether the session speaks a modern (stateless) version.
func (s *Session) Modern() bool { return s.modern }

// ID returns the Mcp-Session-Id ("" when the server assigned none).
func (s *Session) ID() string { return s.hdr.Load().sid }

// Protocol returns the negotiated protocol version ("" before Initialize).
func (s *Session) Protocol() string { return s.proto }

// ServerInfo returns the raw JSON result of the last initialize.
func (s *Session) ServerInfo() []byte { return s.serverInfo }

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
	id       int64
	tool     bool
	progress bool
	init     bool
	expect   int

	gotResp  bool
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
// driver does not speak.
func (s *Session) Initialize(ctx context.Context, res *Result) error {
	res.Start = time.Now()
	if res.Intended.IsZero() {
		res.Intended = res.Start
	}
	ctx, cancel := s.opContext(ctx)
	err := s.initialize(ctx, res)
	s.endOp(cancel)
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
	supported := false
	for _, p := range SupportedProtocols {
		if p == got {
			supported = true
		}
	}
	if !supported {
		return fmt.Errorf("%w: server chose %q", ErrUnsupportedVersion, got)
	}
	s.proto = got
	s.serverInfo = c.result
	s.setHeaders(c.sid, got)

	// notifications/initialized: 202 expected (2025-11-25 transports
	// §Sending Messages, item 4); some servers answer 200/204.
	body = appendNotification(s.body.buf(), "notifications/initialized", nil)
	resp, err := s.send(ctx, http.MethodPost, body, s.hdr.Load().post, "")
	res.BytesOut += int64(len(body))
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	res.BytesIn += drain(resp)
	res.Status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notifications/initialized: %w", &StatusError{resp.StatusCode})
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

// ErrRequestTimeout: an operation ran past RequestTimeout. It wraps
// context.DeadlineExceeded.
var ErrRequestTimeout = fmt.Errorf("request timeout: %w", context.DeadlineExceeded)

// opContext bounds one operation by RequestTimeout with the session's
// reusable timer (no timer per op); endOp must be called when it is done.
func (s *Session) opContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	octx, cancel := context.WithCancelCause(ctx)
	if d := s.cfg.requestTimeout(); d > 0 {
		s.opMu.Lock()
		s.opCancel = cancel
		if s.opTimer == nil {
			s.opTimer = time.AfterFunc(d, s.onOpTimeout)
		} else {
			s.opTimer.Reset(d)
		}
		s.opMu.Unlock()
	}
	return octx, cancel
}

func (s *Session) endOp(cancel context.CancelCauseFunc) {
	s.opMu.Lock()
	if s.opTimer != nil {
		s.opTimer.Stop()
	}
	s.opCancel = nil
	s.opMu.Unlock()
	cancel(nil)
}

func (s *Session) onOpTimeout() {
	s.opMu.Lock()
	c := s.opCancel
	s.opMu.Unlock()
	if c != nil {
		c(ErrRequestTimeout)
	}
}

func (c *Config) maxReissues() int {
	if c.MaxReissues > 0 {
		return c.MaxReissues
	}
	return 3
}

// Do runs op as one JSON-RPC request and fills res (the caller sets
// res.Op and res.Intended; Start, FirstByte, End and the rest are set here).
// A 404 on the session re-initializes once and retries (res.Reinits); a
// response stream that breaks is resumed with GET + Last-Event-ID after the
// reconnect policy's wait (res.Resumes); a break before any event id is
// unresumable and, with Config.ReissueUnresumable, re-sent (res.Reissues).
// The outcome is res.Class/res.Err; Do never panics on bad input.
func (s *Session) Do(ctx context.Context, op *Op, res *Result) {
	res.Start = time.Now()
	if res.Intended.IsZero() {
		res.Intended = res.Start
	}
	ctx, cancel := s.opContext(ctx)
	defer s.endOp(cancel)
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
		c := call{id: s.next(), tool: op.isToolCall, progress: op.Progress, expect: op.ExpectProgress}
		meta := s.mbuf[:0]
		if op.Progress {
			meta = append(meta, `"progressToken":`...)
			meta = appendInt(meta, c.id)
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
		err := s.exchange(ctx, body, &c, res, hdr)
		switch {
		case errors.Is(err, errSession404) && res.Reinits == 0:
			res.Reinits++
			var scratch Result
			if ierr := s.initialize(ctx, &scratch); ierr != nil {
				res.BytesIn += scratch.BytesIn
				res.BytesOut += scratch.BytesOut
				res.fail(fmt.Errorf("re-initialize after 404: %w", ierr))
				res.End = time.Now()
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
		break
	}
	res.End = time.Now()
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
	if c.init {
		c.sid = resp.Header.Get(HeaderSessionID)
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case mtJSON:
		err = s.readJSON(ctx, resp, c, res)
	case mtSSE:
		err = s.readPOSTStream(ctx, resp, c, res)
	default:
		res.BytesIn += drain(resp)
		return fmt.Errorf("%w: content type %q", ErrBadResponse, resp.Header.Get("Content-Type"))
	}
	return err
}

// statusError reads a non-2xx answer: a JSON-RPC error in its body is
// returned as an *RPCError (so a 2026-07-28 -32020 or -32022 is classified
// as such) — under a legacy version only for MCP's own codes — else a
// *StatusError.
func (s *Session) statusError(resp *http.Response, res *Result) error {
	defer resp.Body.Close()
	se := &StatusError{Code: resp.StatusCode}
	if mediaType(resp.Header.Get("Content-Type")) != mtJSON {
		res.BytesIn += drain(resp)
		return se
	}
	b, n, _ := readAll(resp.Body, s.jbuf[:0], 64<<10)
	s.jbuf = b[:0]
	res.BytesIn += n
	m, err := ParseMessage(bytes.TrimSpace(b))
	if err != nil || m.Error == nil {
		return se
	}
	re := parseRPCError(m.Error)
	switch {
	case s.modern, re.Code == CodeHeaderMismatch, re.Code == CodeUnsupportedVersion, re.Code == CodeMissingCapability:
		return fmt.Errorf("%w (HTTP %d)", re, resp.StatusCode)
	}
	return se
}

// readJSON reads an application/json answer: one message or a batch.
func (s *Session) readJSON(ctx context.Context, resp *http.Response, c *call, res *Result) error {
	defer resp.Body.Close()
	b, n, err := readAll(resp.Body, s.jbuf[:0], s.cfg.maxResponse())
	s.jbuf = b[:0]
	res.BytesIn += n
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '[' {
		// A JSON-RPC batch (2025-03-26 allowed them): walk its elements.
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
			s.handle(ctx, t[i:e], c, res, nil)
			i = e
		}
	} else if err := s.handle(ctx, t, c, res, nil); err != nil {
		return err
	}
	if !c.gotResp {
		return ErrNoResponse
	}
	return nil
}

// handle processes one incoming message on a request's stream (led is the
// stream's ledger, nil for JSON answers). It returns an error only for a
// message that is not JSON-RPC.
func (s *Session) handle(ctx context.Context, data []byte, c *call, res *Result, led *Ledger) error {
	m, err := ParseMessage(data)
	if err != nil {
		perr := fmt.Errorf("%w: %v", ErrBadResponse, err)
		if c.err == nil {
			c.err = perr
		}
		return perr
	}
	switch m.Kind {
	case KindResponse:
		if !IDEqual(m.ID, c.id) {
			if led != nil {
				led.crossStream()
			}
			return nil
		}
		if c.gotResp {
			if led != nil {
				led.Counts[VerdictDuplicated]++
			}
			return nil
		}
		c.gotResp = true
		switch {
		case m.Error != nil:
			c.err = parseRPCError(m.Error)
		case s.modern && bytes.Equal(Field(m.Result, "resultType"), litInputRequired):
			c.inputReq = bytes.Clone(m.Result) // answered by a retry (Do)
		case c.tool && bytes.Equal(Field(m.Result, "isError"), litTrue):
			c.err = ErrToolError
		case c.init:
			c.result = bytes.Clone(m.Result)
		}
	case KindNotification:
		if string(m.Method) == "notifications/progress" {
			tok := Field(m.Params, "progressToken")
			if !c.progress || !IDEqual(tok, c.id) {
				if led != nil {
					led.crossStream()
				}
				return nil
			}
			res.Progress++
			if led != nil {
				v, _ := FieldNumber(m.Params, "progress")
				t, _ := FieldNumber(m.Params, "total")
				led.progressValue(v, t)
			}
		}
	case KindRequest:
		s.ans = s.answer(ctx, m, s.ans)
	}
	return nil
}

// answer POSTs the canned result for a server→client request (ping,
// sampling/createMessage, elicitation/create, roots/list), or -32601.
// Failures are ignored: the server sees them as a missing answer.
func (s *Session) answer(ctx context.Context, m Message, buf []byte) []byte {
	buf = buf[:0]
	if r, ok := s.cfg.canned(string(m.Method)); ok {
		buf = appendResponse(buf, m.ID, r)
	} else {
		buf = appendErrorResponse(buf, m.ID, -32601, "method not found: "+string(m.Method))
	}
	resp, err := s.sendCopy(ctx, buf)
	if err == nil {
		drain(resp)
	}
	return buf
}

// readPOSTStream reads the SSE answer to a request until its response,
// resuming the stream when it breaks.
func (s *Session) readPOSTStream(ctx context.Context, resp *http.Response, c *call, res *Result) error {
	led := &res.Ledger
	led.Checked = true
	dec := s.dec
	dec.Start(nil)
	var lastResumeID string
	fails := 0
	for {
		dec.Reset(s.watch(resp.Body, res, s.idleDur))
		err := s.readEvents(ctx, dec, c, res, led)
		brokeAt := time.Now()
		s.unwatch()
		if err == nil {
			// Response delivered; the stream should end now.
			// Unterminated means the server kept the stream open past its
			// response: the linger timed out. A stream broken under us (a
			// reset, our own idle timer) is not that.
			if !dec.AtEOF() && !s.idleFired.Load() && !s.linger(resp.Body, res) && s.idleFired.Load() {
				led.Counts[VerdictUnterminated]++
			}
			resp.Body.Close()
			led.finishOp(true, c.expect)
			return nil
		}
		resp.Body.Close()
		if errors.Is(err, ErrSSEMalformed) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			led.finishOp(false, 0)
			return s.ctxErr(ctx, cerr)
		}
		clean := errors.Is(err, io.EOF)
		if s.modern {
			// 2026-07-28: no resumption; the broken stream cancelled the
			// request (Do may re-issue it).
			if errors.Is(err, ErrStreamIdle) {
				return fmt.Errorf("%w: %w", ErrStreamIdle, ErrStreamCancelled)
			}
			return fmt.Errorf("%w (%v)", ErrStreamCancelled, breakCause(err))
		}
		if len(dec.LastEventID()) == 0 {
			led.Counts[VerdictUnresumable]++
			if errors.Is(err, ErrStreamIdle) {
				return fmt.Errorf("%w: %w", ErrStreamIdle, ErrUnresumable)
			}
			return fmt.Errorf("%w (%v)", ErrUnresumable, breakCause(err))
		}
		if s.cfg.maxResumes() == 0 {
			led.finishOp(false, 0)
			return fmt.Errorf("%w: resumption disabled (%v)", ErrStreamBroken, breakCause(err))
		}
		id := string(dec.LastEventID())
		if id == lastResumeID {
			fails++
		} else {
			fails = 0
			lastResumeID = id
		}
		resp, err = s.resume(ctx, dec, res, clean, &fails, brokeAt)
		if err != nil {
			led.finishOp(false, 0)
			return err
		}
	}
}

// readEvents reads events until the response arrives (nil) or the stream
// ends or breaks (the error: io.EOF for an orderly end).
func (s *Session) readEvents(ctx context.Context, dec *SSEDecoder, c *call, res *Result, led *Ledger) error {
	for {
		ev, err := dec.Next()
		if err != nil {
			switch {
			case errors.Is(err, ErrSSEMalformed):
			case s.idleFired.Load():
				return ErrStreamIdle
			case context.Cause(ctx) != nil:
				return context.Cause(ctx)
			}
			return err
		}
		if ev.HasID && !led.eventID(ev.ID) {
			continue // a replayed duplicate: counted once, not processed again
		}
		if len(ev.Data) == 0 {
			continue // priming event or SEP-1699 close event: id/retry only
		}
		res.Events++
		s.handle(ctx, ev.Data, c, res, led)
		if c.gotResp {
			return nil
		}
	}
}

// linger reads what follows the response for a short while so the
// connection can be reused; it reports whether the stream ended. When it
// did not, s.idleFired tells a timeout (the stream stayed open) from a
// broken connection.
func (s *Session) linger(body io.ReadCloser, res *Result) bool {
	var buf [512]byte
	r := s.watch(body, res, lingerTimeout)
	defer s.unwatch()
	for {
		_, err := r.Read(buf[:])
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// lingerTimeout bounds the wait for a stream's end after its response.
const lingerTimeout = 2 * time.Second

// resume waits per the reconnect policy and GETs the stream with
// Last-Event-ID until the server accepts (2025-11-25 transports
// §Resumability; SEP-1699 retry). fails counts consecutive attempts that
// brought no new event id; attempts stop at MaxResumes.
func (s *Session) resume(ctx context.Context, dec *SSEDecoder, res *Result, clean bool, fails *int, brokeAt time.Time) (*http.Response, error) {
	last := string(dec.LastEventID())
	for {
		if *fails >= s.cfg.maxResumes() {
			return nil, fmt.Errorf("%w: %d attempts without progress", ErrStreamBroken, *fails)
		}
		hint := dec.RetryMS
		wait := s.reconnectDelay(hint, *fails)
		r := Resume{Hint: hint, Waited: wait, Clean: clean}
		if err := sleepCtx(ctx, wait); err != nil {
			return nil, s.ctxErr(ctx, err)
		}
		h := s.hdr.Load()
		r.At = time.Now()
		r.Delay = r.At.Sub(brokeAt)
		resp, err := s.send(ctx, http.MethodGet, nil, h.get, last)
		r.TimeToResume = time.Since(brokeAt)
		if err != nil {
			res.Resumes = append(res.Resumes, r)
			if ctx.Err() != nil {
				return nil, s.ctxErr(ctx, err)
			}
			*fails++
			clean = false
			continue
		}
		r.Status = resp.StatusCode
		if resp.StatusCode == http.StatusOK && mediaType(resp.Header.Get("Content-Type")) == mtSSE {
			r.OK = true
			res.Resumes = append(res.Resumes, r)
			return resp, nil
		}
		res.BytesIn += drain(resp)
		res.Resumes = append(res.Resumes, r)
		switch {
		case resp.StatusCode == http.StatusNotFound && h.sid != "":
			return nil, fmt.Errorf("resume: %w", ErrSessionMissing)
		case resp.StatusCode == http.StatusMethodNotAllowed:
			return nil, fmt.Errorf("%w: server does not resume (%w)", ErrStreamBroken, &StatusError{resp.StatusCode})
		}
		*fails++
	}
}

// reconnectDelay is the wait before a resume attempt under the policy.
func (s *Session) reconnectDelay(hintMS, fails int) time.Duration {
	base := s.cfg.defaultRetry()
	if hintMS >= 0 {
		base = time.Duration(hintMS) * time.Millisecond
	}
	switch s.cfg.Reconnect {
	case ReconnectImmediate:
		return 0
	case ReconnectBackoff:
		ceil := base << min(fails, 16)
		if m := s.cfg.backoffMax(); ceil > m {
			ceil = m
		}
		d := base
		if ceil > base {
			d += time.Duration(s.rng.Int64N(int64(ceil - base + 1)))
		}
		return d
	}
	return base
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
	drain(resp)
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		if s.cfg.CheckDeleted {
			s.checkDeleted(ctx, h)
		}
		return nil
	case http.StatusMethodNotAllowed, http.StatusNotFound:
		return nil
	}
	return fmt.Errorf("DELETE: %w", &StatusError{resp.StatusCode})
}

// checkDeleted sends a ping on a deleted session: anything but 404 is a
// hygiene fault (2xx: the session lives on; another status: the wrong
// answer for a missing session).
func (s *Session) checkDeleted(ctx context.Context, h *sessHeaders) {
	body := appendRequest(s.body.buf(), s.next(), "ping", nil, nil)
	resp, err := s.send(ctx, http.MethodPost, body, h.post, "")
	if err != nil {
		return
	}
	drain(resp)
	s.hygiene.Checked = true
	switch {
	case resp.StatusCode == http.StatusNotFound:
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		s.hygiene.Counts[VerdictDeletedSessionAccepted]++
	default:
		s.hygiene.Counts[VerdictWrongMissingStatus]++
	}
}

// Hygiene returns the verdicts of the deleted-session check made by Close
// (Config.CheckDeleted); Checked is false when none was made.
func (s *Session) Hygiene() Ledger { return s.hygiene }

// send issues one HTTP request. lastEventID is set on resume GETs.
func (s *Session) send(ctx context.Context, method string, body []byte, h http.Header, lastEventID string) (*http.Response, error) {
	req := &http.Request{
		Method:     method,
		URL:        s.u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h,
		Host:       s.u.Host,
	}
	if lastEventID != "" {
		req.Header = h.Clone()
		req.Header[HeaderLastEventID] = []string{lastEventID}
	}
	if body != nil {
		rb := s.body
		rb.arm(body)
		req.Body = rb
		req.ContentLength = int64(len(body))
		req.GetBody = rb.getBody
	}
	return s.rt.RoundTrip(req.WithContext(ctx))
}

// sendCopy POSTs a message (an answer) with its own body buffer, so it can
// run while s.body is in use.
func (s *Session) sendCopy(ctx context.Context, msg []byte) (*http.Response, error) {
	return s.sendBody(ctx, bytes.Clone(msg), s.hdr.Load().post)
}

// sendBody POSTs body (owned by the request) with headers h; for requests
// made outside the session's op goroutine.
func (s *Session) sendBody(ctx context.Context, body []byte, h http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	return s.rt.RoundTrip(req)
}

// ctxErr prefers the context's cause (timeout, idle, run end) to the
// transport's rendering of it.
func (s *Session) ctxErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return err
}

func breakCause(err error) string {
	if errors.Is(err, io.EOF) {
		return "stream ended"
	}
	return err.Error()
}

// watch arms the session's idle timer for a stream body: a body silent for
// d is closed (unblocking the read) and the read reports ErrStreamIdle. It
// returns a reader that counts bytes and re-arms the timer on each read.
// One stream is watched at a time (the session's op goroutine).
func (s *Session) watch(body io.ReadCloser, res *Result, d time.Duration) io.Reader {
	s.sr = streamReader{s: s, rc: body, n: &res.BytesIn, d: d}
	s.idleFired.Store(false)
	if d > 0 {
		s.idleMu.Lock()
		s.idleBody = body
		if s.idle == nil {
			s.idle = time.AfterFunc(d, s.onIdle)
		} else {
			s.idle.Reset(d)
		}
		s.idleMu.Unlock()
	}
	return &s.sr
}

func (s *Session) unwatch() {
	s.idleMu.Lock()
	if s.idle != nil {
		s.idle.Stop()
	}
	s.idleBody = nil
	s.idleMu.Unlock()
}

func (s *Session) onIdle() {
	s.idleMu.Lock()
	b := s.idleBody
	s.idleBody = nil
	s.idleMu.Unlock()
	if b != nil {
		s.idleFired.Store(true)
		b.Close()
	}
}

// streamReader counts body bytes and re-arms the idle timer on each read.
type streamReader struct {
	s  *Session
	rc io.ReadCloser
	n  *int64
	d  time.Duration // idle timeout re-armed on each read (0: none)
}

func (r *streamReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	*r.n += int64(n)
	if n > 0 && r.d > 0 {
		r.s.idle.Reset(r.d)
	}
	return n, err
}

// reqBody is a reusable request body. The transport may close a body after
// Do returns; the buffer is reused only once the previous body was closed.
type reqBody struct {
	b      []byte
	r      bytes.Reader
	closed atomic.Bool
	used   bool
}

// buf returns an empty buffer to render the next request into.
func (rb *reqBody) buf() []byte {
	if rb.used && !rb.closed.Load() {
		rb.b = nil // still held by the transport: start a fresh buffer
	}
	return rb.b[:0]
}

func (rb *reqBody) arm(b []byte) {
	rb.b = b
	rb.r.Reset(b)
	rb.closed.Store(false)
	rb.used = true
}

func (rb *reqBody) Read(p []byte) (int, error) { return rb.r.Read(p) }

// Bytes lets H1Transport write the body without copying it.
func (rb *reqBody) Bytes() []byte { return rb.b }
func (rb *reqBody) Close() error  { rb.closed.Store(true); return nil }

func (rb *reqBody) getBody() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(bytes.Clone(rb.b))), nil
}

type mt uint8

const (
	mtOther mt = iota
	mtJSON
	mtSSE
)

// mediaType classifies a Content-Type without allocating.
func mediaType(ct string) mt {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	switch {
	case strings.EqualFold(ct, "application/json"):
		return mtJSON
	case strings.EqualFold(ct, "text/event-stream"):
		return mtSSE
	}
	return mtOther
}

// drain reads (up to 64 KiB of) a body and closes it, so the connection can
// be reused; it returns the bytes read.
func drain(resp *http.Response) int64 {
	n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return n
}

// readAll reads r into buf up to max bytes.
func readAll(r io.Reader, buf []byte, limit int64) ([]byte, int64, error) {
	var n int64
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		n += int64(m)
		if n > limit {
			return buf, n, ErrResponseTooLarge
		}
		if err == io.EOF {
			return buf, n, nil
		}
		if err != nil {
			return buf, n, err
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
