package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// The wire: sending requests, request timeouts, redirects, reading bodies
// within the size limits and the memory budget.

// ErrRequestTimeout: a request got no answer within RequestTimeout: its
// response headers (a GET stream, a resume, a POST answered with SSE) or
// its whole JSON answer did not arrive in time. It wraps
// context.DeadlineExceeded (errors.Is); the error of an operation names
// the limit (timeouts.go).
var ErrRequestTimeout error = &deadlineError{"request timeout: no answer in time (--timeout)"}

// opContext starts one operation: a cancellable context and the session's
// request timer (reused, no timer per op), armed for the first request.
// endOp must be called when the operation is done.
//
// The timeout rule (2025-11-25 transports; documented on
// Config.RequestTimeout): the timer runs while a request waits for its
// answer — until the response headers of an SSE answer (POST stream, GET
// stream, resume), or until the end of a JSON answer. An open stream is
// bounded by StreamIdleTimeout and the run's end only, so a stream that
// legitimately runs longer than RequestTimeout while events keep arriving
// is not cut.
func (s *Session) opContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	octx, cancel := context.WithCancelCause(ctx)
	s.opMu.Lock()
	s.opCancel = cancel
	s.opMu.Unlock()
	s.arm()
	return octx, cancel
}

// arm (re)starts the request timer of the current operation.
func (s *Session) arm() {
	d := s.cfg.requestTimeout()
	if d <= 0 {
		return
	}
	s.opMu.Lock()
	if s.opTimer == nil {
		s.opTimer = time.AfterFunc(d, s.onOpTimeout)
	} else {
		s.opTimer.Reset(d)
	}
	s.opMu.Unlock()
}

// disarm stops the request timer: the answer has begun (SSE headers) or
// ended (JSON).
func (s *Session) disarm() {
	s.opMu.Lock()
	if s.opTimer != nil {
		s.opTimer.Stop()
	}
	s.opMu.Unlock()
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
		c(requestTimeout(s.cfg.requestTimeout()))
	}
}

// headerTimeout bounds the wait for a request's response headers outside
// an operation (the GET stream's opens and reopens) without bounding the
// body: the returned context lives until cancel is called; only a timeout
// that fires before stop cancels it (with ErrRequestTimeout). stop reports
// whether the headers were in time.
func headerTimeout(ctx context.Context, d time.Duration) (hctx context.Context, stop func() bool, cancel context.CancelCauseFunc) {
	hctx, cancel = context.WithCancelCause(ctx)
	if d <= 0 {
		return hctx, func() bool { return true }, cancel
	}
	var state atomic.Int32 // 0 waiting, 1 headers arrived, 2 timed out
	t := time.AfterFunc(d, func() {
		if state.CompareAndSwap(0, 2) {
			cancel(requestTimeout(d))
		}
	})
	return hctx, func() bool {
		t.Stop()
		return state.CompareAndSwap(0, 1)
	}, cancel
}

// maxRedirects bounds the 307/308 redirects followed for one request.
const maxRedirects = 5

// send issues one HTTP request. lastEventID is set on resume GETs. With
// Config.FollowRedirects a 307 or 308 to the same origin is followed (the
// same method and body; a 308 is remembered for later requests) and
// counted (Session.Redirects); other 3xx are returned as they are.
func (s *Session) send(ctx context.Context, method string, body []byte, h http.Header, lastEventID string) (*http.Response, error) {
	return s.sendTo(ctx, nil, method, body, h, lastEventID)
}

// sendTo is send to target (a stream's rel="stream" URL, SEP-1335), or to
// the MCP endpoint when target is nil; a 308 is remembered only for the
// endpoint.
func (s *Session) sendTo(ctx context.Context, target *url.URL, method string, body []byte, h http.Header, lastEventID string) (*http.Response, error) {
	u := target
	if u == nil {
		u = s.u.Load()
	}
	for hop := 0; ; hop++ {
		req := &http.Request{
			Method:     method,
			URL:        u,
			Proto:      "HTTP/1.1",
			ProtoMajor: 1,
			ProtoMinor: 1,
			Header:     h,
			Host:       u.Host,
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
		resp, err := s.rt.RoundTrip(req.WithContext(ctx))
		if err != nil || !s.cfg.FollowRedirects || (resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect) {
			return resp, err
		}
		next, rerr := redirectTarget(u, resp)
		if rerr != nil || hop >= maxRedirects {
			return resp, nil // the caller reports the 3xx with its Location
		}
		drain(resp)
		s.redirects.Add(1)
		if resp.StatusCode == http.StatusPermanentRedirect && target == nil {
			s.u.Store(next)
		}
		u = next
	}
}

// redirectTarget resolves a redirect's Location against u; only the same
// origin (scheme and host) is followed, so credentials never leave it.
func redirectTarget(u *url.URL, resp *http.Response) (*url.URL, error) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, errors.New("no Location")
	}
	next, err := u.Parse(loc)
	if err != nil {
		return nil, err
	}
	if next.Scheme != u.Scheme || next.Host != u.Host {
		return nil, errors.New("another origin")
	}
	return next, nil
}

// Redirects returns the 307/308 redirects the session followed
// (Config.FollowRedirects). Safe for concurrent use.
func (s *Session) Redirects() int64 { return s.redirects.Load() }

// sendCopy POSTs a message (an answer) with its own body buffer, so it can
// run while s.body is in use.
func (s *Session) sendCopy(ctx context.Context, msg []byte) (*http.Response, error) {
	return s.sendBody(ctx, bytes.Clone(msg), s.hdr.Load().post)
}

// sendBody POSTs body (owned by the request) with headers h; for requests
// made outside the session's op goroutine.
func (s *Session) sendBody(ctx context.Context, body []byte, h http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.u.Load().String(), bytes.NewReader(body))
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

// oauthHint is StatusError.Hint of a 401 whose Bearer challenge names
// resource_metadata (MCP authorization) to a client without OAuth.
const oauthHint = "the server wants an OAuth token (MCP authorization): give --oauth-client-id (and the secret in $MCPBENCH_OAUTH_CLIENT_SECRET) to get one with the client-credentials grant, or send a token with -H 'Authorization: Bearer ${TOKEN}'"

// statusError builds the error of a non-2xx answer and closes its body: a
// JSON-RPC error in the body is returned as an *jsonrpc.Error (so a 2026-07-28
// -32020 or -32022 is classified as such) — under a legacy version only
// for MCP's own codes — else a *StatusError saying what the user needs:
// the Location of a redirect, WWW-Authenticate of a 401/403 (with MCP's
// resource_metadata), Retry-After of a 429/503, and the first line of the
// body.
func (s *Session) statusError(resp *http.Response, res *Result) error {
	defer resp.Body.Close()
	se := &StatusError{Code: resp.StatusCode}
	switch code := resp.StatusCode; {
	case code >= 300 && code < 400:
		se.Location = resp.Header.Get("Location")
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		se.Authenticate = resp.Header.Get("WWW-Authenticate")
		if code == http.StatusUnauthorized && httpclient.BearerResourceMetadata(resp.Header.Values("WWW-Authenticate")) != "" && s.cfg.OAuth == nil {
			se.Hint = oauthHint
		}
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	b, n, _ := readAll(resp.Body, s.jbuf[:0], 64<<10)
	s.keepJSONBuf(b)
	res.BytesIn += n
	if mediaType(resp.Header.Get("Content-Type")) == mtJSON {
		if m, err := jsonrpc.Parse(bytes.TrimSpace(b)); err == nil && m.Error != nil {
			if re, ok := rpcErrorOf(m.Error); ok {
				switch {
				case s.modern, re.Code == CodeHeaderMismatch, re.Code == CodeUnsupportedVersion, re.Code == CodeMissingCapability:
					return fmt.Errorf("%w (HTTP %d)", re, resp.StatusCode)
				}
				se.Body = re.Error()
				return se
			}
		}
	}
	se.Body = firstLine(b)
	return se
}

// firstLine returns the first non-blank line of a body, trimmed, printable
// and cut to 200 bytes ("" for an empty or binary body).
func firstLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	if len(b) > 200 {
		b = b[:200]
	}
	var sb strings.Builder
	for _, r := range string(b) {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return "" // binary: nothing useful to show
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP-date
// (RFC 9110 §10.2.3). 0 when absent or unreadable; capped at 10 minutes.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), 10*time.Minute)
}

// RetryAfter returns the Retry-After wait an error carries (a 429 or 503
// answer), 0 when none.
func RetryAfter(err error) time.Duration {
	var se *StatusError
	if errors.As(err, &se) {
		return se.RetryAfter
	}
	return 0
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

var _ httpclient.BytesBody = (*reqBody)(nil)

// Bytes lets the HTTP/1.1 transport write the body without copying it.
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

// readAll reads r into buf up to limit bytes (ErrResponseTooLarge beyond).
func readAll(r io.Reader, buf []byte, limit int64) ([]byte, int64, error) {
	var n int64
	for {
		if len(buf) == cap(buf) {
			grow := min(max(cap(buf), 512), int(limit-int64(len(buf))+1))
			buf = append(buf, make([]byte, max(grow, 1))...)[:len(buf)]
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
