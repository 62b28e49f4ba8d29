package probe

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

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/sse"
)

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
		if m := jsonrpc.Field([]byte(q.body), "method"); len(m) > 0 {
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
		if k == "Host" {
			hr.Host = v // the Host header is the request's Host field
			continue
		}
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
	if !isSSE(a.ct) {
		a.body, err = io.ReadAll(io.LimitReader(resp.Body, probeMaxBody+1))
		a.ended = err == nil && len(a.body) <= probeMaxBody
		if isJSON(a.ct) && q.id != 0 {
			if m, err := jsonrpc.Parse(bytes.TrimSpace(a.body)); err == nil && m.Kind == jsonrpc.KindResponse && jsonrpc.IDEqual(m.ID, q.id) {
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
	d := sse.NewDecoder(resp.Body)
	for range probeMaxEvents {
		ev, err := d.Next()
		if err != nil {
			a.ended = errors.Is(err, io.EOF) && !cut.Load()
			break
		}
		e := sseEvent{ID: string(ev.ID), HasID: ev.HasID, Type: string(ev.Type), Data: string(ev.Data), Retry: ev.Retry}
		a.events = append(a.events, e)
		if q.id != 0 && a.response == nil && e.Data != "" {
			if m, err := jsonrpc.Parse([]byte(e.Data)); err == nil && m.Kind == jsonrpc.KindResponse && jsonrpc.IDEqual(m.ID, q.id) {
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
func (a *answer) message() (jsonrpc.Message, bool) {
	if a.response != nil {
		m, err := jsonrpc.Parse(a.response)
		return m, err == nil
	}
	if !isJSON(a.ct) {
		return jsonrpc.Message{}, false
	}
	m, err := jsonrpc.Parse(bytes.TrimSpace(a.body))
	return m, err == nil && m.Kind != jsonrpc.KindInvalid
}

// rpcCode is the JSON-RPC error code of the answer (0 if none).
func (a *answer) rpcCode() int {
	m, ok := a.message()
	if !ok || m.Error == nil {
		return 0
	}
	return jsonrpc.ParseError(m.Error).Code
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
	case isJSON(a.ct):
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

func (p *prober) add(c Case) {
	c.OK = c.Result == OK
	if c.Protocol == "" {
		c.Protocol = p.era()
	}
	p.r.Cases = append(p.r.Cases, c)
}

// result is OK or Differs.
func result(ok bool) string {
	if ok {
		return OK
	}
	return Differs
}

// check adds a case judged on an answer.
func (p *prober) check(name, expected, spec string, a answer, ok bool, detail string) {
	res := result(ok)
	if a.err != nil && detail == "" {
		detail = a.describe()
	}
	p.add(Case{Case: name, Status: a.status, RPCCode: a.rpcCode(), Expected: expected, Result: res, Detail: detail, Spec: spec})
}

// na adds a case that does not apply, saying why.
func (p *prober) na(name, expected, spec, why string) {
	p.add(Case{Case: name, Expected: expected, Result: NA, Detail: why, Spec: spec})
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
		if c.Result != NA {
			r.Checked++
		}
		if c.Result == Differs {
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
	m := map[string]string{"Content-Type": "application/json", "Accept": probeAccept, driver.HeaderProtocolVersion: p.proto}
	if p.sid != "" {
		m[driver.HeaderSessionID] = p.sid
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// modernH returns the headers of a 2026-07-28 request; kv overrides them.
func (p *prober) modernH(method string, kv ...string) map[string]string {
	m := map[string]string{"Content-Type": "application/json", "Accept": probeAccept, driver.HeaderProtocolVersion: driver.Protocol20260728, driver.HeaderMethod: method}
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
		mm := p.cfg.ModernMeta(driver.Protocol20260728)
		if meta != "" {
			mm = append([]byte(meta+","), mm...)
		}
		h := p.modernH(method)
		if n := driver.NameHeader(method, []byte(params)); n != "" {
			h[driver.HeaderName] = n
		}
		return req{method: http.MethodPost, h: h, body: string(jsonrpc.AppendRequest(nil, id, method, []byte(params), mm)), id: id}
	}
	return req{method: http.MethodPost, h: p.legacyH(), body: string(jsonrpc.AppendRequest(nil, id, method, []byte(params), []byte(meta))), id: id}
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

// mediaType returns the media type of a Content-Type, for display.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.TrimSpace(ct)
}

// isJSON reports whether a Content-Type is application/json (parameters
// and case ignored).
func isJSON(ct string) bool { return strings.EqualFold(mediaType(ct), "application/json") }

// isSSE reports whether a Content-Type is text/event-stream (parameters and
// case ignored).
func isSSE(ct string) bool { return strings.EqualFold(mediaType(ct), "text/event-stream") }
