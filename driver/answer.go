package driver

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/units"
)

// JSON literals the answer's classification compares raw values against.
var (
	litTrue          = []byte("true")
	litInputRequired = []byte(`"input_required"`)
)

// exchange POSTs one request and reads its answer (JSON or SSE, resuming
// broken streams). Errors of the exchange itself are returned; errors the
// response carries are left in c.err.
func (s *Lane) exchange(ctx context.Context, body []byte, c *call, res *Result, hdr http.Header) error {
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
	case code == http.StatusNotFound && h.sid != "" && !c.init:
		res.BytesIn += netutil.Drain(resp)
		return errSession404
	case code == http.StatusAccepted:
		res.BytesIn += netutil.Drain(resp)
		return fmt.Errorf("%w: 202 Accepted to a request", ErrBadResponse)
	case code < 200 || code > 299:
		return s.statusError(resp, res)
	}
	if c.init && !s.modern {
		// Known from the headers on: a resume of this stream carries it.
		c.sid = resp.Header.Get(HeaderSessionID)
		if err := s.checkSessionID(c.sid); err != nil {
			netutil.Drain(resp)
			return err
		}
		s.setHeaders(c.sid, s.proto) // the version negotiated before, if any
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case mtJSON:
		err = s.readJSON(ctx, resp, c, res)
		s.disarm()
	case mtSSE:
		s.disarm() // the stream is open: StreamIdleTimeout bounds it now
		if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
			res.BytesIn += netutil.Drain(resp)
			return fmt.Errorf("%w: SSE stream with Content-Encoding %q (a compressed event stream is buffered by the decompressor, so events would arrive late; mcpbench decodes compression on JSON answers only)", ErrBadResponse, ce)
		}
		err = s.readPOSTStream(ctx, resp, c, res)
	default:
		res.BytesIn += netutil.Drain(resp)
		return fmt.Errorf("%w: content type %q", ErrBadResponse, resp.Header.Get("Content-Type"))
	}
	// The readers point at this answer's body and res: an idle session
	// keeps neither.
	s.cr, s.sr = countingReader{}, streamReader{}
	return err
}

// readJSON reads an application/json answer (one message or a batch)
// within MaxMessageBytes and the memory budget; gzip is decoded.
func (s *Lane) readJSON(ctx context.Context, resp *http.Response, c *call, res *Result) error {
	defer resp.Body.Close()
	limit := s.cfg.maxMessage()
	if resp.ContentLength > limit {
		return tooLarge(fmt.Sprintf("%v %s (Content-Length %s; not read)", ErrResponseTooLarge, units.Size(limit), units.Size(resp.ContentLength)))
	}
	s.cr = countingReader{r: resp.Body, n: &res.BytesIn} // the lane's: no allocation per answer
	defer func() { s.cr = countingReader{} }()
	var r io.Reader = &s.cr
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
	defer s.doneMessage(b, held) // once the message is handled
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	c.respAt = time.Now()
	led := &res.Ledger
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '[' {
		// A JSON-RPC batch (2025-03-26 allowed them): valid JSON as a whole,
		// then walk its elements.
		if e, err := jsonrpc.SkipValue(t, 0); err != nil || e != len(t) {
			return fmt.Errorf("%w: malformed JSON-RPC batch", ErrBadResponse)
		}
		i := 1
		for {
			i = jsonrpc.SkipWS(t, i)
			if i >= len(t) || t[i] == ']' {
				break
			}
			if t[i] == ',' {
				i++
				continue
			}
			e, err := jsonrpc.SkipValue(t, i)
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
func (s *Lane) handle(ctx context.Context, data []byte, c *call, res *Result, led *Ledger) error {
	m, err := jsonrpc.Parse(data)
	if err != nil {
		perr := fmt.Errorf("%w: %v", ErrBadResponse, err)
		if c.err == nil && !c.gotResp {
			c.err = perr
		}
		return perr
	}
	if c.cx && s.judgeAfterCancel(m, c, res, led) {
		return nil
	}
	switch m.Kind {
	case jsonrpc.KindResponse:
		if !jsonrpc.IDEqual(m.ID, c.id) {
			if id, ok := s.toSibling(m); ok {
				led.fault(VerdictMisrouted, "the response to request "+strconv.FormatInt(id, 10)+" (in flight on another lane) arrived on the stream of request "+strconv.FormatInt(c.id, 10))
				return nil
			}
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
		case s.modern && bytes.Equal(jsonrpc.Field(m.Result, "resultType"), litInputRequired):
			c.inputReq = bytes.Clone(m.Result) // answered by a retry (Do)
		case c.tool && bytes.Equal(jsonrpc.Field(m.Result, "isError"), litTrue):
			c.err = toolError(m.Result)
		case c.init:
			c.result = bytes.Clone(m.Result)
		case c.list:
			s.takeCursor(c, m.Result)
		}
		if c.inspect != nil && m.Error == nil && c.inputReq == nil && len(m.Result) > 0 {
			c.inspect(m.Result, res)
		}
	case jsonrpc.KindNotification:
		if string(m.Method) != "notifications/progress" {
			s.countNotification(m, &res.Notifications)
			return nil
		}
		tok := jsonrpc.Field(m.Params, "progressToken")
		v, _ := jsonrpc.FieldNumber(m.Params, "progress")
		switch {
		case c.tok != nil && bytes.Equal(tok, c.tok):
			t, _ := jsonrpc.FieldNumber(m.Params, "total")
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
			on := " arrived on the stream of request " + strconv.FormatInt(c.id, 10)
			if id, ok := s.toSibling(m); ok {
				led.fault(VerdictMisrouted, "progress "+fmtNum(v)+" of request "+strconv.FormatInt(id, 10)+" (in flight on another lane)"+on)
			} else {
				led.fault(VerdictMisrouted, "progress "+fmtNum(v)+" of request "+tokenRequest(tok, s.tokPrefix)+" of this session (no longer in flight)"+on)
			}
		default:
			led.fault(VerdictCrossStream, "progress "+fmtNum(v)+" for token "+quoteShort(tok)+", not this session's")
		}
	case jsonrpc.KindRequest:
		s.ans = s.answer(ctx, m, s.ans)
	}
	return nil
}

// tokenRequest returns the request id a progress token of this session
// names (tokens are `"<run>-<session>-<id>"`).
func tokenRequest(tok, prefix []byte) string {
	id := bytes.TrimSuffix(tok[len(prefix):], []byte{'"'})
	return string(id)
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
			return fmt.Errorf("%w: %s", ErrToolError, netutil.FirstLine([]byte(c.Text)))
		}
	}
	return ErrToolError
}

// answer POSTs the canned result for a server→client request (ping,
// sampling/createMessage, elicitation/create, roots/list), or -32601,
// within RequestTimeout. Failures are ignored: the server sees them as a
// missing answer.
func (s *Lane) answer(ctx context.Context, m jsonrpc.Message, buf []byte) []byte {
	buf = buf[:0]
	if r, ok := s.cfg.canned(string(m.Method)); ok {
		buf = jsonrpc.AppendResponse(buf, m.ID, r)
	} else {
		buf = jsonrpc.AppendErrorResponse(buf, m.ID, -32601, "method not found: "+string(m.Method))
	}
	if d := s.cfg.requestTimeout(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	resp, err := s.sendCopy(ctx, buf)
	if err == nil {
		netutil.Drain(resp)
	}
	return buf
}
