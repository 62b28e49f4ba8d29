package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ProbeReport is what a server speaks, from a few requests (Probe).
type ProbeReport struct {
	URL string `json:"url"`

	// Modern (2026-07-28) era.
	Discover struct {
		Status    int             `json:"status"`
		Modern    bool            `json:"modern"`
		Versions  []string        `json:"supported_versions,omitempty"`
		Error     string          `json:"error,omitempty"`
		Result    json.RawMessage `json:"result,omitempty"`
		AnswerAs  string          `json:"answer_as,omitempty"` // json or sse
		ListenOK  bool            `json:"listen_stream"`
		ListenAck bool            `json:"listen_acknowledged"`
	} `json:"discover"`

	// Legacy era: the version negotiated for each version requested.
	Legacy []ProbeInit `json:"legacy"`

	Sessions    string   `json:"sessions"`    // "stateful" (Mcp-Session-Id), "stateless", or "none" (no legacy era)
	Answers     string   `json:"answers"`     // "json", "sse" or "mixed"
	EventIDs    bool     `json:"event_ids"`   // SSE events carry ids
	Priming     bool     `json:"priming"`     // an SSE answer starts with an id and empty data
	RetryHints  []int    `json:"retry_hints"` // retry fields seen (ms)
	GETStream   string   `json:"get_stream"`  // "offered", "not offered (405)", "HTTP <n>", "-"
	Recommended string   `json:"recommended"` // what --protocol auto picks
	Notes       []string `json:"notes,omitempty"`

	Cases []ProbeCase `json:"error_cases"`
}

// ProbeInit is one legacy initialize attempt.
type ProbeInit struct {
	Requested  string `json:"requested"`
	Negotiated string `json:"negotiated,omitempty"`
	Status     int    `json:"status"`
	SessionID  bool   `json:"session_id"`
	Error      string `json:"error,omitempty"`
}

// ProbeCase is one error case of the transport and the status the server
// answered.
type ProbeCase struct {
	Case     string `json:"case"`
	Status   int    `json:"status"`
	RPCCode  int    `json:"jsonrpc_code,omitempty"`
	Expected string `json:"expected"`
	OK       bool   `json:"ok"`
}

// Probe sends a few requests to learn what a server speaks: the eras and
// versions (server/discover; initialize with each legacy version),
// sessions, JSON or SSE answers, event ids, priming events, retry hints,
// a GET or subscriptions/listen stream, and the status codes it gives for
// the transport's error cases (2025-11-25 transports; 2026-07-28
// Streamable HTTP). It sends at most about twenty requests and never
// loads the server. Errors are for a server that cannot be reached.
func Probe(ctx context.Context, cfg *Config) (*ProbeReport, error) {
	r := &ProbeReport{URL: cfg.URL, Sessions: "none", GETStream: "-", RetryHints: []int{}}
	c := *cfg
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 10 * time.Second
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(&c)
	}
	p := &prober{cfg: &c, hc: hc, u: c.URL, r: r}

	// Modern era.
	n, err := Negotiate(ctx, &c)
	if err != nil {
		return nil, err
	}
	r.Discover.Modern, r.Discover.Status = n.Modern, n.Status
	if n.Modern {
		r.Discover.Result = n.Discover
		var d struct {
			Supported []string `json:"supportedVersions"`
		}
		json.Unmarshal(n.Discover, &d)
		r.Discover.Versions = d.Supported
	} else {
		r.Discover.Error = n.Why
	}
	r.Recommended = n.Protocol
	if n.Modern {
		p.modernCases(ctx)
	}

	// Legacy era: which versions initialize accepts.
	for _, v := range LegacyProtocols {
		pi := ProbeInit{Requested: v}
		cc := c
		cc.Protocol = v
		s, _ := NewSession(&cc, 0)
		var res Result
		if err := s.Initialize(ctx, &res); err != nil {
			pi.Error = Classify(err).String() + ": " + err.Error()
		} else {
			pi.Negotiated = s.Protocol()
			pi.SessionID = s.ID() != ""
			if v == DefaultProtocol {
				p.legacy = s
			} else {
				s.Close(ctx)
			}
		}
		pi.Status = res.Status
		r.Legacy = append(r.Legacy, pi)
	}
	if p.legacy != nil {
		if p.legacy.ID() != "" {
			r.Sessions = "stateful"
		} else {
			r.Sessions = "stateless"
		}
		p.legacyCases(ctx)
		if !n.Modern {
			r.Recommended = p.legacy.Protocol()
		}
	}
	switch {
	case p.json > 0 && p.sse > 0:
		r.Answers = "mixed"
	case p.sse > 0:
		r.Answers = "sse"
	case p.json > 0:
		r.Answers = "json"
	default:
		r.Answers = "-"
	}
	if len(r.RetryHints) == 0 {
		r.Notes = append(r.Notes, "no retry hint seen (servers send one before closing a stream on purpose)")
	}
	return r, nil
}

type prober struct {
	cfg       *Config
	hc        *http.Client
	u         string
	r         *ProbeReport
	legacy    *Session
	json, sse int
}

// do sends one raw request and reads up to 64 KiB of the answer (or the
// first events of a stream, within a second).
func (p *prober) do(ctx context.Context, method string, h map[string]string, body string) (status int, ct string, data []byte, hdr http.Header) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.u, rd)
	if err != nil {
		return 0, "", nil, nil
	}
	for k, v := range p.cfg.Header {
		req.Header[k] = v
	}
	for k, v := range h {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := p.hc.Transport.RoundTrip(req)
	if err != nil {
		return 0, "", nil, nil
	}
	defer resp.Body.Close()
	ct = resp.Header.Get("Content-Type")
	if mediaType(ct) == mtSSE {
		// Read the stream's first events only (it may stay open).
		timer := time.AfterFunc(time.Second, func() { resp.Body.Close() })
		defer timer.Stop()
	}
	data, _, _ = readAll(resp.Body, nil, 64<<10)
	return resp.StatusCode, ct, data, resp.Header
}

// note records what an answer shows: JSON or SSE, ids, priming, retry.
func (p *prober) note(ct string, data []byte) {
	switch mediaType(ct) {
	case mtJSON:
		p.json++
	case mtSSE:
		p.sse++
		d := NewSSEDecoder(bytes.NewReader(data))
		first := true
		for {
			ev, err := d.Next()
			if err != nil {
				break
			}
			if ev.HasID {
				p.r.EventIDs = true
				if first && len(ev.Data) == 0 {
					p.r.Priming = true
				}
			}
			if ev.Retry >= 0 {
				p.r.RetryHints = append(p.r.RetryHints, ev.Retry)
			}
			first = false
		}
	}
}

func rpcCode(ct string, data []byte) int {
	if mediaType(ct) != mtJSON {
		return 0
	}
	m, err := ParseMessage(bytes.TrimSpace(data))
	if err != nil || m.Error == nil {
		return 0
	}
	return parseRPCError(m.Error).Code
}

func (p *prober) add(name, expected string, status int, code int, ok bool) {
	p.r.Cases = append(p.r.Cases, ProbeCase{Case: name, Status: status, RPCCode: code, Expected: expected, OK: ok})
}

const probeAccept = "application/json, text/event-stream"

func (p *prober) legacyCases(ctx context.Context) {
	s := p.legacy
	proto := s.Protocol()
	sid := s.ID()
	base := map[string]string{"Content-Type": "application/json", "Accept": probeAccept, HeaderProtocolVersion: proto}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ping := `{"jsonrpc":"2.0","id":901,"method":"ping"}`
	if sid != "" {
		st, ct, data, _ := p.do(ctx, "POST", with(HeaderSessionID, sid), `{"jsonrpc":"2.0","id":900,"method":"tools/list"}`)
		if st == 200 {
			p.note(ct, data)
		}
		st, ct, data, _ = p.do(ctx, "POST", with(HeaderSessionID, "mcpbench-no-such-session"), ping)
		p.add("request with an unknown session id", "404", st, rpcCode(ct, data), st == 404)
		st, ct, data, _ = p.do(ctx, "POST", base, ping)
		p.add("request without the session id", "400", st, rpcCode(ct, data), st == 400)
	} else {
		st, ct, data, _ := p.do(ctx, "POST", base, `{"jsonrpc":"2.0","id":900,"method":"tools/list"}`)
		if st == 200 {
			p.note(ct, data)
		}
	}
	sh := map[string]string{HeaderSessionID: sid}
	if sid == "" {
		sh = nil
	}
	kv := func(m map[string]string, more ...string) []string {
		var out []string
		for k, v := range m {
			out = append(out, k, v)
		}
		return append(out, more...)
	}
	st, ct, data, _ := p.do(ctx, "POST", with(kv(sh, HeaderProtocolVersion, "1999-01-01")...), ping)
	p.add("unsupported MCP-Protocol-Version header", "400", st, rpcCode(ct, data), st == 400)
	st, ct, data, _ = p.do(ctx, "POST", with(kv(sh)...), `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	p.add("notification", "202", st, rpcCode(ct, data), st == 202)
	st, ct, data, _ = p.do(ctx, "POST", with(kv(sh)...), `{"jsonrpc":"2.0","id":`)
	p.add("malformed JSON", "400", st, rpcCode(ct, data), st == 400)
	st, _, _, _ = p.do(ctx, "POST", with(kv(sh, "Accept", "text/html")...), ping)
	p.add("Accept without application/json and text/event-stream", "400 or 406", st, 0, st == 400 || st == 406)
	// GET stream.
	st, ct, data, _ = p.do(ctx, "GET", map[string]string{"Accept": "text/event-stream", HeaderProtocolVersion: proto, HeaderSessionID: sid}, "")
	switch {
	case st == 200 && mediaType(ct) == mtSSE:
		p.r.GETStream = "offered"
		p.note(ct, data)
	case st == 405:
		p.r.GETStream = "not offered (405)"
	default:
		p.r.GETStream = fmt.Sprintf("HTTP %d", st)
	}
	if sid != "" {
		st, _, _, _ = p.do(ctx, "DELETE", map[string]string{HeaderSessionID: sid, HeaderProtocolVersion: proto}, "")
		p.add("DELETE the session", "200/204, or 405", st, 0, st == 200 || st == 204 || st == 202 || st == 405)
		if st >= 200 && st < 300 {
			st, ct, data, _ = p.do(ctx, "POST", with(HeaderSessionID, sid), ping)
			p.add("request on the deleted session", "404", st, rpcCode(ct, data), st == 404)
		}
	}
}

func (p *prober) modernCases(ctx context.Context) {
	meta := modernMeta(p.cfg, Protocol20260728)
	req := func(id int, method, params string) string {
		return string(appendRequest(nil, int64(id), method, []byte(params), meta))
	}
	h := func(method string, kv ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json", "Accept": probeAccept, HeaderProtocolVersion: Protocol20260728, HeaderMethod: method}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	st, ct, data, _ := p.do(ctx, "POST", h("tools/list"), req(910, "tools/list", ""))
	if st == 200 {
		p.note(ct, data)
		if mediaType(ct) == mtSSE {
			p.r.Discover.AnswerAs = "sse"
		} else {
			p.r.Discover.AnswerAs = "json"
		}
	}
	st, ct, data, _ = p.do(ctx, "POST", h("tools/list", HeaderMethod, "prompts/list"), req(911, "tools/list", ""))
	code := rpcCode(ct, data)
	p.add("2026-07-28: Mcp-Method header does not match the body", "400 with -32020", st, code, st == 400 && code == CodeHeaderMismatch)
	st, ct, data, _ = p.do(ctx, "POST", h("tools/list", HeaderMethod, ""), req(912, "tools/list", ""))
	code = rpcCode(ct, data)
	p.add("2026-07-28: Mcp-Method header missing", "400", st, code, st == 400)
	st, ct, data, _ = p.do(ctx, "POST", h("mcpbench/no-such-method"), req(913, "mcpbench/no-such-method", ""))
	code = rpcCode(ct, data)
	p.add("2026-07-28: unknown method", "404 with -32601", st, code, st == 404 && code == CodeMethodNotFound)
	st, ct, data, _ = p.do(ctx, "POST", h("tools/list", HeaderProtocolVersion, "2099-01-01"), strings.Replace(req(914, "tools/list", ""), Protocol20260728, "2099-01-01", 1))
	code = rpcCode(ct, data)
	p.add("2026-07-28: unsupported (future) protocol version", "400 with -32022", st, code, st == 400 && code == CodeUnsupportedVersion)
	st, _, _, _ = p.do(ctx, "GET", map[string]string{"Accept": "text/event-stream", HeaderProtocolVersion: Protocol20260728}, "")
	p.add("2026-07-28: GET on the endpoint", "405", st, 0, st == 405)
	// subscriptions/listen.
	st, ct, data, _ = p.do(ctx, "POST", h("subscriptions/listen"), req(915, "subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`))
	p.r.Discover.ListenOK = st == 200 && mediaType(ct) == mtSSE
	p.r.Discover.ListenAck = bytes.Contains(data, []byte("notifications/subscriptions/acknowledged"))
}
