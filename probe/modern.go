package probe

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// discover sends server/discover (2026-07-28) and decides the era as
// driver.Negotiate does.
func (p *prober) discover(ctx context.Context) answer {
	id := p.id()
	body := string(jsonrpc.AppendRequest(nil, id, "server/discover", nil, p.cfg.ModernMeta(driver.Protocol20260728)))
	a := p.send(ctx, req{method: http.MethodPost, h: p.modernH("server/discover"), body: body, id: id})
	if a.err != nil {
		return a
	}
	d := &p.r.Discover
	d.Status = a.status
	p.firstAns = append(p.firstAns, "server/discover: "+a.describe())
	m, ok := a.message()
	vs, code, modern := driver.DiscoverVersions(m)
	d.Modern = ok && modern != ""
	switch {
	case ok && m.Kind == jsonrpc.KindResponse && m.Result != nil:
		d.Result = bytes.Clone(m.Result)
		d.Versions = vs
		if !d.Modern {
			d.Error = fmt.Sprintf("server/discover lists no modern version we speak (%v): legacy", vs)
		}
	case ok && m.Kind == jsonrpc.KindResponse && m.Error != nil:
		if d.Modern {
			d.Versions = vs
		} else {
			d.Error = fmt.Sprintf("server/discover: HTTP %d, JSON-RPC error %d: legacy", a.status, code)
		}
	default:
		d.Error = fmt.Sprintf("server/discover: %s without a modern JSON-RPC answer: legacy", a.describe())
	}
	return a
}

// modernCases checks the 2026-07-28 header validation, GET and
// subscriptions/listen.
func (p *prober) modernCases(ctx context.Context) {
	meta := p.cfg.ModernMeta(driver.Protocol20260728)
	body := func(id int64, method, params string) string {
		return string(jsonrpc.AppendRequest(nil, id, method, []byte(params), meta))
	}
	post := func(h map[string]string, method, params string) answer {
		id := p.id()
		return p.send(ctx, req{method: http.MethodPost, h: h, body: body(id, method, params), id: id})
	}
	a := post(p.modernH("tools/list", driver.HeaderMethod, "prompts/list"), "tools/list", "")
	code := a.rpcCode()
	p.check("2026-07-28: Mcp-Method header does not match the body", "400 with -32020", specMismatch, a, a.status == 400 && code == driver.CodeHeaderMismatch, "")
	a = post(p.modernH("tools/list", driver.HeaderMethod, ""), "tools/list", "")
	p.check("2026-07-28: Mcp-Method header missing", "400", specMissingHeader, a, a.status == 400, "")
	a = post(p.modernH("mcpbench/no-such-method"), "mcpbench/no-such-method", "")
	code = a.rpcCode()
	p.check("2026-07-28: unknown method", "404 with -32601", specUnknownMethod, a, a.status == 404 && code == driver.CodeMethodNotFound, "")
	id := p.id()
	a = p.send(ctx, req{method: http.MethodPost, h: p.modernH("tools/list", driver.HeaderProtocolVersion, "2099-01-01"),
		body: strings.Replace(body(id, "tools/list", ""), driver.Protocol20260728, "2099-01-01", 1), id: id})
	code = a.rpcCode()
	p.check("2026-07-28: unsupported (future) protocol version", "400 with -32022", specFuture, a, a.status == 400 && code == driver.CodeUnsupportedVersion, "")
	a = p.send(ctx, req{method: http.MethodGet, h: map[string]string{"Accept": "text/event-stream", driver.HeaderProtocolVersion: driver.Protocol20260728}, window: probeWindow})
	p.check("2026-07-28: GET on the endpoint", "405", specModernGET, a, a.status == 405, "")
	p.listenCase(ctx)
}

// listenCase opens subscriptions/listen for toolsListChanged and checks
// the stream: acknowledged first, and still open when the probe closes it
// after probeWindow.
func (p *prober) listenCase(ctx context.Context) {
	const name, want = "2026-07-28: subscriptions/listen stream", "SSE, acknowledged first, stays open"
	id := p.id()
	a := p.send(ctx, req{method: http.MethodPost, h: p.modernH("subscriptions/listen"),
		body:   string(jsonrpc.AppendRequest(nil, id, "subscriptions/listen", []byte(`{"notifications":{"toolsListChanged":true}}`), p.cfg.ModernMeta(driver.Protocol20260728))),
		window: probeWindow})
	d := &p.r.Discover
	var first jsonrpc.Message
	got := false // a message (an event with data) came
	for _, e := range a.events {
		if e.Data == "" {
			continue
		}
		got = true
		if m, err := jsonrpc.Parse([]byte(e.Data)); err == nil {
			first = m
		}
		break
	}
	d.ListenAck = string(first.Method) == "notifications/subscriptions/acknowledged"
	agreed := "-"
	if d.ListenAck {
		agreed = string(bytes.TrimSpace(jsonrpc.Field(first.Params, "notifications")))
	}
	nothing := agreed == "{}" || agreed == "null" || agreed == ""
	open := a.status == http.StatusOK && a.sse && !a.ended && a.err == nil
	d.ListenOK = open
	switch {
	case a.status == http.StatusNotFound && a.rpcCode() == driver.CodeMethodNotFound:
		d.Listen = "not implemented (404 with -32601)"
		p.na(name, want, specListen, "the server does not implement subscriptions/listen (404 with -32601)")
	case a.status != http.StatusOK || !a.sse:
		d.Listen = a.describe()
		p.check(name, want, specListen, a, false, a.describe()+": no SSE stream")
	case !d.ListenAck && !got:
		d.Listen = "no acknowledgment"
		p.check(name, want, specListen, a, false, fmt.Sprintf("no message within %v: no notifications/subscriptions/acknowledged", probeWindow))
	case !d.ListenAck:
		d.Listen = "no acknowledgment first"
		p.check(name, want, specListen, a, false, fmt.Sprintf("the first message is %s, not notifications/subscriptions/acknowledged", describeMessage(first)))
	case open:
		d.Listen = "open (acknowledged " + clip(agreed, 120) + ")"
		p.check(name, want, specListen, a, true, fmt.Sprintf("acknowledged %s; still open after %v", clip(agreed, 120), probeWindow))
	case nothing:
		d.Listen = "ended at once: acknowledged nothing (" + agreed + ")"
		p.na(name, want, specListen, fmt.Sprintf("the server acknowledged none of the requested notification types (toolsListChanged) and ended the subscription at once (%s): with nothing to deliver, whether a stream stays open could not be seen", plural(len(a.events), "event")))
	default:
		d.Listen = "ended at once after acknowledging " + clip(agreed, 120)
		p.check(name, want, specListen, a, false, fmt.Sprintf("acknowledged %s, then ended the stream at once (%s)", clip(agreed, 120), plural(len(a.events), "event")))
	}
}

// describeMessage names a message for display: its method, "a response",
// or "not a JSON-RPC message".
func describeMessage(m jsonrpc.Message) string {
	switch {
	case len(m.Method) > 0:
		return string(m.Method)
	case m.Kind == jsonrpc.KindResponse:
		return "a response"
	}
	return "not a JSON-RPC message"
}
