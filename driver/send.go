package driver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/netutil"
)

// Sending a request: the session's headers and body, redirects (307/308,
// same origin), the request body the transports read without copying.

// maxRedirects bounds the 307/308 redirects followed for one request.
const maxRedirects = 5

// send issues one HTTP request. lastEventID is set on resume GETs. With
// Config.FollowRedirects a 307 or 308 to the same origin is followed (the
// same method and body; a 308 is remembered for later requests) and
// counted (Session.Redirects); other 3xx are returned as they are.
func (s *Lane) send(ctx context.Context, method string, body []byte, h http.Header, lastEventID string) (*http.Response, error) {
	return s.sendTo(ctx, nil, method, body, h, lastEventID)
}

// sendTo is send to target (a stream's rel="stream" URL, SEP-1335), or to
// the MCP endpoint when target is nil; a 308 is remembered only for the
// endpoint.
func (s *Lane) sendTo(ctx context.Context, target *url.URL, method string, body []byte, h http.Header, lastEventID string) (*http.Response, error) {
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
			if rb.used && !rb.closed.Load() {
				// The transport may still read the previous body (net/http's
				// write loop after an early answer or a cut connection, the
				// request before a redirect): a new one, not a reset of it.
				rb = &reqBody{}
				s.body = rb
			}
			rb.arm(body)
			req.Body = rb
			req.ContentLength = int64(len(body))
			if rb.gb == nil {
				rb.gb = rb.getBody // a method value allocates: made once per body
			}
			req.GetBody = rb.gb
		}
		resp, err := s.rt.RoundTrip(req.WithContext(ctx))
		if err != nil || !s.cfg.FollowRedirects || (resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect) {
			return resp, err
		}
		next, rerr := redirectTarget(u, resp)
		if rerr != nil || hop >= maxRedirects {
			return resp, nil // the caller reports the 3xx with its Location
		}
		netutil.Drain(resp)
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
func (s *Lane) Redirects() int64 { return s.redirects.Load() }

// sendCopy POSTs a message (an answer) with its own body buffer, so it can
// run while s.body is in use.
func (s *Lane) sendCopy(ctx context.Context, msg []byte) (*http.Response, error) {
	return s.sendBody(ctx, bytes.Clone(msg), s.hdr.Load().post)
}

// sendBody POSTs body (owned by the request) with headers h; for requests
// made outside the session's op goroutine.
func (s *Lane) sendBody(ctx context.Context, body []byte, h http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.u.Load().String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	return s.rt.RoundTrip(req)
}

// ctxErr prefers the context's cause (timeout, idle, run end) to the
// transport's rendering of it.
func (s *Lane) ctxErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return err
}

// reqBody is a reusable request body. The transport may read and close a
// body after RoundTrip returned; a body (its reader and its buffer) is
// reused only once the transport closed it, else the next request gets a
// new one (send, buf).
type reqBody struct {
	b      []byte
	r      bytes.Reader
	closed atomic.Bool
	used   bool
	gb     func() (io.ReadCloser, error) // getBody, for http.Request.GetBody
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
