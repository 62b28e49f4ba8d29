package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// initialize tries each legacy version; the first that succeeds (newest
// first) is the session the legacy cases use, the others are deleted.
func (p *prober) initialize(ctx context.Context) {
	for _, v := range driver.LegacyProtocols {
		pi := Init{Requested: v}
		id := p.id()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcpbench-probe","version":%q}}}`,
			id, v, cmp.Or(p.cfg.ClientVersion, "dev"))
		a := p.send(ctx, req{method: http.MethodPost, h: map[string]string{"Content-Type": "application/json", "Accept": probeAccept}, body: body, id: id})
		pi.Status = a.status
		p.firstAns = append(p.firstAns, "initialize "+v+": "+a.describe())
		p.note(&a, true)
		var res struct {
			V string `json:"protocolVersion"`
		}
		m, ok := a.message()
		switch {
		case a.err != nil:
			pi.Error = a.describe()
		case !ok || m.Kind != jsonrpc.KindResponse:
			pi.Error = a.describe() + " without a JSON-RPC response"
		case m.Error != nil:
			e := jsonrpc.ParseError(m.Error)
			pi.Error = fmt.Sprintf("%s: JSON-RPC error %d: %s", a.describe(), e.Code, e.Message)
		case json.Unmarshal(m.Result, &res) != nil || res.V == "":
			pi.Error = a.describe() + ": the result has no protocolVersion"
		}
		if pi.Error == "" {
			pi.Negotiated = res.V
			sid := a.hdr.Get(driver.HeaderSessionID)
			pi.SessionID = sid != ""
			if !p.legacy {
				p.legacy, p.proto, p.sid = true, res.V, sid
			} else if sid != "" {
				p.send(ctx, req{method: http.MethodDelete, h: map[string]string{driver.HeaderSessionID: sid, driver.HeaderProtocolVersion: res.V}})
			}
		}
		p.r.Legacy = append(p.r.Legacy, pi)
	}
}

func (p *prober) sessionIDCase() {
	const name, want = "session id characters", "visible ASCII 0x21-0x7E"
	if p.sid == "" {
		p.na(name, want, specSessionChars, "server has no sessions")
		return
	}
	for i := 0; i < len(p.sid); i++ {
		if c := p.sid[i]; c < 0x21 || c > 0x7e {
			p.add(Case{Case: name, Expected: want, Result: Differs, Spec: specSessionChars,
				Detail: fmt.Sprintf("byte %d of the %d-byte Mcp-Session-Id is 0x%02X", i, len(p.sid), c)})
			return
		}
	}
	p.add(Case{Case: name, Expected: want, Result: OK, Spec: specSessionChars, Detail: fmt.Sprintf("%d characters", len(p.sid))})
}

// notificationCase sends notifications/initialized, which the legacy
// session needs anyway, and checks its 202.
func (p *prober) notificationCase(ctx context.Context) {
	a := p.send(ctx, req{method: http.MethodPost, h: p.legacyH(), body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
	detail := ""
	if a.status == http.StatusAccepted && len(a.body) > 0 {
		detail = fmt.Sprintf("202 with a %d-byte body", len(a.body))
	} else if a.status != http.StatusAccepted {
		detail = a.describe()
	}
	p.check("notification", "202, no body", specNotification, a, a.status == http.StatusAccepted && len(a.body) == 0 && !a.sse, detail)
}

// sessionCases checks requests with an unknown and without a session id,
// and an unsupported MCP-Protocol-Version, on the legacy session.
func (p *prober) sessionCases(ctx context.Context) {
	if p.sid != "" {
		a := p.send(ctx, p.harmless().with(driver.HeaderSessionID, "mcpbench-no-such-session"))
		p.check("request with an unknown session id", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
		a = p.send(ctx, p.harmless().with(driver.HeaderSessionID, lookalikeID(p.sid)))
		p.check(unknownShaped, "404", specSessionGone, a, a.status == http.StatusNotFound, lookalikeDetail(a))
		a = p.send(ctx, p.harmless().with(driver.HeaderSessionID, ""))
		p.check("request without the session id", "400", specNoSession, a, a.status == http.StatusBadRequest, "")
	} else {
		p.na("request with an unknown session id", "404", specSessionGone, "server has no sessions")
		p.na(unknownShaped, "404", specSessionGone, "server has no sessions")
		p.na("request without the session id", "400", specNoSession, "server has no sessions")
	}
	a := p.send(ctx, p.harmless().with(driver.HeaderProtocolVersion, "1999-01-01"))
	p.check("unsupported MCP-Protocol-Version header", "400", specVersion, a, a.status == http.StatusBadRequest, "")
}

// legacyNA adds the cases of the legacy era as not applying, for a server
// that refused every legacy initialize.
func (p *prober) legacyNA() {
	why := "no 2025-11-25 era: initialize was refused (2026-07-28 has no sessions and no GET stream)"
	for _, c := range []struct{ name, want, spec string }{
		{"session id characters", "visible ASCII 0x21-0x7E", specSessionChars},
		{"notification", "202, no body", specNotification},
		{"request with an unknown session id", "404", specSessionGone},
		{unknownShaped, "404", specSessionGone},
		{"request without the session id", "400", specNoSession},
		{"unsupported MCP-Protocol-Version header", "400", specVersion},
		{"GET: SSE stream or 405", "200 text/event-stream, or 405", specGET},
		{"second concurrent GET", "409, or a second stream", specSecondGET},
		{"GET without the session id", "400", specNoSession},
		{"GET with an unknown session id", "404", specSessionGone},
		{getUnknownShaped, "404", specSessionGone},
		{"GET with an unknown Last-Event-ID", "400, or a stream replaying nothing", specUnknownLastID},
		{"DELETE the session", "200/204, or 405", specDelete},
		{"DELETE the session again", "404", specSessionGone},
		{"request on the deleted session", "404", specSessionGone},
		{"GET on the deleted session", "404", specSessionGone},
	} {
		p.na(c.name, c.want, c.spec, why)
	}
}

// getCases checks the standalone GET stream: offered or 405, a second
// concurrent GET, GET without, with an unknown and with a deleted session
// id, and an unknown Last-Event-ID.
func (p *prober) getCases(ctx context.Context) {
	defer p.inEra(false)()
	first, second := p.twoGETs(ctx)
	offered := p.getStreamCase(first)
	p.secondGETCase(offered, first, second)
	if first.status == http.StatusMethodNotAllowed {
		p.na("GET without the session id", "400", specNoSession, "no GET stream (405)")
		p.na("GET with an unknown session id", "404", specSessionGone, "no GET stream (405)")
		p.na(getUnknownShaped, "404", specSessionGone, "no GET stream (405)")
		p.na("GET with an unknown Last-Event-ID", "400, or a stream replaying nothing", specUnknownLastID, "no GET stream (405)")
		return
	}
	p.getSessionCases(ctx)
	p.unknownLastIDCase(ctx)
}

// getH returns the headers of a GET in the legacy session; kv overrides
// them ("" deletes one).
func (p *prober) getH(kv ...string) map[string]string {
	m := map[string]string{"Accept": "text/event-stream", driver.HeaderProtocolVersion: p.proto}
	if p.sid != "" {
		m[driver.HeaderSessionID] = p.sid
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// twoGETs opens a GET stream and, once it answered 200, a second one while
// the first stays open. second is the zero answer when it was not sent.
// Both are counted; first is noted.
func (p *prober) twoGETs(ctx context.Context) (first *answer, second answer) {
	p.r.Requests++
	firstCh := make(chan answer, 1)
	opened := make(chan struct{})
	firstStatus := 0 // written before opened is closed
	var once sync.Once
	signal := func(status int) { once.Do(func() { firstStatus = status; close(opened) }) }
	pr := *p // do reads only cfg, rt and u
	pr.rt = notifyRT{p.rt, signal}
	go func() {
		defer signal(0)
		firstCh <- pr.do(ctx, req{method: http.MethodGet, h: p.getH(), window: probeWindow})
	}()
	select {
	case <-opened:
		if firstStatus == http.StatusOK {
			second = p.send(ctx, req{method: http.MethodGet, h: p.getH(), window: probeWindow})
		}
	case <-ctx.Done():
	}
	a := <-firstCh
	p.seen(&a, req{method: http.MethodGet})
	p.note(&a, false)
	return &a, second
}

// getStreamCase records whether the first GET opened a stream (or got
// 405) and keeps it when it carried event ids; it reports whether a stream
// is offered.
func (p *prober) getStreamCase(first *answer) (offered bool) {
	offered = first.status == http.StatusOK && first.sse
	switch {
	case offered:
		p.r.GETStream = "offered"
	case first.status == http.StatusMethodNotAllowed:
		p.r.GETStream = "not offered (405)"
	default:
		p.r.GETStream = first.describe()
	}
	detail := ""
	if !offered && first.status != http.StatusMethodNotAllowed {
		detail = first.describe()
	}
	p.check("GET: SSE stream or 405", "200 text/event-stream, or 405", specGET, *first, offered || first.status == http.StatusMethodNotAllowed, detail)
	if len(first.ids()) > 0 {
		p.getIDs = first
	}
	return offered
}

// secondGETCase judges the GET sent while the first stream was open.
func (p *prober) secondGETCase(offered bool, first *answer, second answer) {
	const second409 = "409, or a second stream"
	switch {
	case !offered:
		p.na("second concurrent GET", second409, specSecondGET, "no GET stream ("+first.describe()+")")
	case second.status == http.StatusConflict:
		p.check("second concurrent GET", second409, specSecondGET, second, true, "")
	case second.status == http.StatusOK && second.sse:
		p.note(&second, false)
		p.check("second concurrent GET", second409, specSecondGET, second, true, "a second stream was opened: the server must send each message on one stream only")
	default:
		p.check("second concurrent GET", second409, specSecondGET, second, false, second.describe())
	}
}

// getSessionCases checks GET without and with an unknown session id.
func (p *prober) getSessionCases(ctx context.Context) {
	if p.sid == "" {
		p.na("GET without the session id", "400", specNoSession, "server has no sessions")
		p.na("GET with an unknown session id", "404", specSessionGone, "server has no sessions")
		p.na(getUnknownShaped, "404", specSessionGone, "server has no sessions")
		return
	}
	a := p.send(ctx, req{method: http.MethodGet, h: p.getH(driver.HeaderSessionID, ""), window: probeWindow})
	p.check("GET without the session id", "400", specNoSession, a, a.status == http.StatusBadRequest, "")
	a = p.send(ctx, req{method: http.MethodGet, h: p.getH(driver.HeaderSessionID, "mcpbench-no-such-session"), window: probeWindow})
	p.check("GET with an unknown session id", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
	a = p.send(ctx, req{method: http.MethodGet, h: p.getH(driver.HeaderSessionID, lookalikeID(p.sid)), window: probeWindow})
	p.check(getUnknownShaped, "404", specSessionGone, a, a.status == http.StatusNotFound, lookalikeDetail(a))
}

// unknownLastIDCase checks a GET with a Last-Event-ID the server never
// issued: an error status, or a stream that replays nothing.
func (p *prober) unknownLastIDCase(ctx context.Context) {
	a := p.send(ctx, req{method: http.MethodGet, h: p.getH(driver.HeaderLastEventID, "mcpbench-probe-no-such-event"), window: probeWindow})
	const want = "400, or a stream replaying nothing"
	switch {
	case a.status == http.StatusNotFound && p.sid != "":
		p.check("GET with an unknown Last-Event-ID", want, specUnknownLastID, a, false, "404 tells the client its session is gone")
	case a.status >= 400 && a.status < 500:
		p.check("GET with an unknown Last-Event-ID", want, specUnknownLastID, a, true, "")
	case a.status == http.StatusOK && a.sse:
		n := 0
		for _, e := range a.events {
			if e.Data != "" {
				n++
			}
		}
		detail := "a stream that replayed nothing"
		if n > 0 {
			detail = fmt.Sprintf("replayed %d messages after an id it never issued", n)
		}
		p.check("GET with an unknown Last-Event-ID", want, specUnknownLastID, a, n == 0, detail)
	default:
		p.check("GET with an unknown Last-Event-ID", want, specUnknownLastID, a, false, a.describe())
	}
}

// notifyRT calls f with the status (0 on failure) once RoundTrip has
// returned.
type notifyRT struct {
	http.RoundTripper
	f func(status int)
}

func (n notifyRT) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := n.RoundTripper.RoundTrip(r)
	if err != nil {
		n.f(0)
	} else {
		n.f(resp.StatusCode)
	}
	return resp, err
}

// deleteCases ends the session and checks that it is gone.
func (p *prober) deleteCases(ctx context.Context) {
	defer p.inEra(false)() // the ping below goes to the legacy session
	const okDelete = "200/204, or 405"
	if p.sid == "" {
		for _, c := range []struct{ name, want, spec string }{
			{"DELETE the session", okDelete, specDelete},
			{"DELETE the session again", "404", specSessionGone},
			{"request on the deleted session", "404", specSessionGone},
			{"GET on the deleted session", "404", specSessionGone},
		} {
			p.na(c.name, c.want, c.spec, "server has no sessions")
		}
		return
	}
	del := req{method: http.MethodDelete, h: map[string]string{driver.HeaderSessionID: p.sid, driver.HeaderProtocolVersion: p.proto}}
	a := p.send(ctx, del)
	deleted := a.status >= 200 && a.status < 300
	p.check("DELETE the session", okDelete, specDelete, a, deleted || a.status == http.StatusMethodNotAllowed, "")
	if !deleted {
		why := "the session was not deleted (" + a.describe() + ")"
		p.na("DELETE the session again", "404", specSessionGone, why)
		p.na("request on the deleted session", "404", specSessionGone, why)
		p.na("GET on the deleted session", "404", specSessionGone, why)
		return
	}
	a = p.send(ctx, del)
	p.check("DELETE the session again", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
	a = p.send(ctx, p.call("ping", "", ""))
	p.check("request on the deleted session", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
	a = p.send(ctx, req{method: http.MethodGet, h: map[string]string{"Accept": "text/event-stream", driver.HeaderProtocolVersion: p.proto, driver.HeaderSessionID: p.sid}, window: probeWindow})
	p.check("GET on the deleted session", "404", specSessionGone, a, a.status == http.StatusNotFound, "")
}

// The cases with an unknown session id that is well-formed: the server
// cannot tell it from its own ids by their shape, only by looking it up.
const (
	unknownShaped    = "request with an unknown well-formed session id"
	getUnknownShaped = "GET with an unknown well-formed session id"
)

// lookalikeID returns a session id the server never issued, shaped like
// its own id sid: the same length and characters, with the last letters
// and digits (up to 8, back to the first separator) rotated by one place,
// so the id keeps its alphabet (hex, base32, …), its prefix
// ("mcp-session-") and its layout (a UUID's groups). When rotating changes
// nothing (one character, or all alike) they are changed within their kind
// instead (a digit stays a digit, hex stays hex). A server that checks ids
// by their format only takes it for a live session. A sid without letters
// or digits gets a fixed UUID.
func lookalikeID(sid string) string {
	b := []byte(sid)
	var at []int // positions of the changed part, last first
	for i := len(b) - 1; i >= 0 && len(at) < 8; i-- {
		if isAlnum(b[i]) {
			at = append(at, i)
		} else if len(at) > 0 {
			break // a separator ends the changed part
		}
	}
	if len(at) == 0 {
		return "6f1c2a8e-3b4d-4e5f-9a7b-1c2d3e4f5a6b"
	}
	first := b[at[len(at)-1]]
	for k := len(at) - 1; k > 0; k-- {
		b[at[k]] = b[at[k-1]]
	}
	b[at[0]] = first
	if string(b) != sid {
		return string(b)
	}
	for _, i := range at {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+5)%10
		case c >= 'a' && c <= 'f':
			b[i] = 'a' + (c-'a'+3)%6
		case c >= 'A' && c <= 'F':
			b[i] = 'A' + (c-'A'+3)%6
		case c >= 'g' && c <= 'z':
			b[i] = 'g' + (c-'g'+10)%20
		default: // G-Z
			b[i] = 'G' + (c-'G'+10)%20
		}
	}
	return string(b)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// lookalikeDetail says what a request with lookalikeID got, when it was
// served.
func lookalikeDetail(a answer) string {
	if a.status < 200 || a.status > 299 {
		return ""
	}
	return fmt.Sprintf("HTTP %d: an id the server never issued, shaped like its own (its last letters and digits rotated), was served as a live session: the server checks ids by their format only", a.status)
}
