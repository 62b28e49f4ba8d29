package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// Sentinel errors of the driver. Errors returned by a Session wrap one of
// these (or a *StatusError, *jsonrpc.Error, net error or context error) with %w;
// Classify maps any of them to a Class.
var (
	// ErrSessionMissing: the server answered 404 to a request carrying an
	// Mcp-Session-Id (2025-11-25 transports §Session Management, item 4) and
	// re-initializing did not help.
	ErrSessionMissing = errors.New("session not found (HTTP 404)")
	// ErrBadResponse: the answer is not what the transport allows (a request
	// answered with a content type other than application/json or
	// text/event-stream, a body that is not JSON-RPC, 202 to a request).
	ErrBadResponse = errors.New("bad response")
	// ErrNoResponse: a JSON answer or a terminated SSE stream that did not
	// carry the response to the request.
	ErrNoResponse = errors.New("stream ended without the response")
	// ErrStreamBroken: a response stream broke and resuming it failed or ran
	// out of attempts (MaxResumes).
	ErrStreamBroken = errors.New("stream broken, resume failed")
	// ErrUnresumable: a stream broke before any event id was seen, so it
	// cannot be resumed with Last-Event-ID (the window SEP-1335 describes).
	ErrUnresumable = errors.New("stream broken before any event id (unresumable)")
	// ErrStreamIdle: a response stream completed no event and no
	// keep-alive for StreamIdleTimeout.
	ErrStreamIdle = errors.New("stream idle timeout")
	// ErrToolError: tools/call returned a result with isError true.
	ErrToolError = errors.New("tool returned isError")
	// ErrNoGETStream: the server answered 405 to GET: it offers no
	// standalone stream (2025-11-25 transports §Listening, item 3).
	ErrNoGETStream = errors.New("server offers no GET stream (405)")
	// ErrGETStreamConflict: 409 to GET: a standalone stream is already open.
	ErrGETStreamConflict = errors.New("GET stream already open (409)")
	// ErrUnsupportedVersion: the server negotiated a protocol version this
	// driver does not speak.
	ErrUnsupportedVersion = errors.New("unsupported protocol version")
	// ErrStreamLinkMissing: a resume sent to a stream's rel="stream" URL
	// (SEP-1335) was answered 404: the server no longer has the stream at
	// the URL it named. Not the session: its MCP endpoint was not asked.
	ErrStreamLinkMissing = errors.New(`stream link not found (HTTP 404 at the stream's rel="stream" URL)`)
	// ErrResponseTooLarge: a JSON answer exceeded Config.MaxMessageBytes;
	// the error wrapping it names the limit.
	ErrResponseTooLarge = errors.New("response larger than max_message_bytes")
)

// JSON-RPC error codes of MCP 2026-07-28 (Streamable HTTP §Server
// Validation; Versioning §Protocol Version Negotiation).
const (
	CodeHeaderMismatch     = -32020
	CodeMissingCapability  = -32021
	CodeUnsupportedVersion = -32022
	CodeMethodNotFound     = -32601
)

// ErrStreamCancelled: under 2026-07-28 a response stream broke before its
// response; closing a stream cancels its request (no resumption), so the
// request is lost unless it is re-issued (Config.ReissueUnresumable).
var ErrStreamCancelled = errors.New("response stream broke: request cancelled (2026-07-28 has no resumption)")

// StatusError is an unexpected HTTP status, with what the answer said
// that the user needs to act on it.
type StatusError struct {
	Code int
	// Location is the Location header of a 3xx answer.
	Location string
	// Authenticate is the WWW-Authenticate header of a 401 or 403 (MCP
	// authorization puts resource_metadata there).
	Authenticate string
	// RetryAfter is the Retry-After of a 429 or 503 (0: none given).
	RetryAfter time.Duration
	// Body is the first line of the body (or the JSON-RPC error it held),
	// printable and cut to 200 bytes.
	Body string
	// Hint says what to do, when the answer makes it clear: a 401 whose
	// Bearer challenge names resource_metadata (MCP authorization) to a
	// client without OAuth gets the flags that obtain a token.
	Hint string
}

func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString("HTTP status ")
	b.WriteString(strconv.Itoa(e.Code))
	if t := http.StatusText(e.Code); t != "" {
		b.WriteString(" " + t)
	}
	if e.Location != "" {
		b.WriteString(" to " + e.Location)
		if e.Code == http.StatusTemporaryRedirect || e.Code == http.StatusPermanentRedirect {
			b.WriteString(setting.Say(" (not followed: %s follows it on the same origin)", setting.FollowRedirects))
		}
	}
	if e.Authenticate != "" {
		b.WriteString("; WWW-Authenticate: " + e.Authenticate)
	}
	if e.RetryAfter > 0 {
		b.WriteString("; Retry-After " + e.RetryAfter.String())
	}
	if e.Body != "" {
		b.WriteString("; body: " + e.Body)
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// errRunCanceled marks a context canceled by the caller (end of run), as
// opposed to a deadline of the driver's own.
var errRunCanceled = context.Canceled

// Classify maps an error returned by the driver to its class. nil is ClassOK.
func Classify(err error) Class {
	if err == nil {
		return ClassOK
	}
	var se *StatusError
	var re *jsonrpc.Error
	var ne net.Error
	switch {
	case errors.Is(err, ErrStreamIdle), errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, errRunCanceled):
		return ClassCanceled
	case errors.Is(err, ErrSessionMissing):
		return ClassSessionMissing
	case errors.Is(err, ErrUnresumable):
		return ClassUnresumable
	case errors.Is(err, ErrStreamBroken), errors.Is(err, ErrStreamCancelled):
		return ClassStreamBroken
	case errors.Is(err, sse.ErrMalformed):
		return ClassSSEMalformed
	case errors.Is(err, ErrToolError):
		return ClassToolError
	case errors.Is(err, ErrUnsupportedVersion):
		return ClassVersion
	case errors.Is(err, ErrMissingValue):
		return ClassMissingValue
	case errors.Is(err, ErrResumeLimit):
		return ClassResumeLimit
	case errors.Is(err, ErrStreamLinkMissing):
		return ClassLinkMissing
	case errors.As(err, &re):
		switch re.Code {
		case CodeHeaderMismatch:
			return ClassHeaderMismatch
		case CodeUnsupportedVersion:
			return ClassVersion
		}
		return ClassJSONRPC
	case errors.As(err, &se), errors.Is(err, httpclient.ErrAuthorization): // a 401 that authorization could not answer
		return ClassHTTPStatus
	case errors.Is(err, ErrBadResponse), errors.Is(err, ErrNoResponse),
		errors.Is(err, ErrResponseTooLarge), errors.Is(err, ErrNoGETStream), errors.Is(err, ErrGETStreamConflict):
		return ClassBadResponse
	case errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	case errors.Is(err, httpclient.ErrConnClosedAfterWrite), errors.Is(err, httpclient.ErrHTTP2Only),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return ClassTransport
	}
	return ClassTransport
}

// rpcErrorOf decodes a JSON-RPC error object (JSON-RPC 2.0 §5.1: an object
// with an integer code and a string message). ok is false for anything
// else: a malformed error is a bad response, not a JSON-RPC error.
func rpcErrorOf(raw []byte) (*jsonrpc.Error, bool) {
	var e struct {
		Code    *json.Number `json:"code"`
		Message *string      `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Code == nil || e.Message == nil {
		return nil, false
	}
	code, err := strconv.Atoi(e.Code.String())
	if err != nil {
		return nil, false
	}
	return &jsonrpc.Error{Code: code, Message: *e.Message}, true
}

// oauthHint is StatusError.Hint of a 401 whose Bearer challenge names
// resource_metadata (MCP authorization) to a client without OAuth: it
// names the settings that get a token (Config.OAuth's ClientID and
// ClientSecret) or send one (Config.Header), as the front end says them.
func oauthHint() string {
	return setting.Say("the server wants an OAuth token (MCP authorization): give %s (and %s) to get one with the client-credentials grant, or send a token with %s 'Authorization: Bearer ${TOKEN}'",
		setting.OAuthClientID, setting.OAuthClientSecret, setting.Header)
}

// statusError builds the error of a non-2xx answer and closes its body: a
// JSON-RPC error in the body is returned as an *jsonrpc.Error (so a 2026-07-28
// -32020 or -32022 is classified as such) — under a legacy version only
// for MCP's own codes — else a *StatusError saying what the user needs:
// the Location of a redirect, WWW-Authenticate of a 401/403 (with MCP's
// resource_metadata), Retry-After of a 429/503, and the first line of the
// body.
func (s *Lane) statusError(resp *http.Response, res *Result) error {
	defer resp.Body.Close()
	se := &StatusError{Code: resp.StatusCode}
	switch code := resp.StatusCode; {
	case code >= 300 && code < 400:
		se.Location = resp.Header.Get("Location")
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		se.Authenticate = resp.Header.Get("WWW-Authenticate")
		if code == http.StatusUnauthorized && httpclient.BearerResourceMetadata(resp.Header.Values("WWW-Authenticate")) != "" && s.cfg.OAuth == nil {
			se.Hint = oauthHint()
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
	se.Body = netutil.FirstLine(b)
	return se
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
