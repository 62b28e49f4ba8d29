package driver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// MCP 2026-07-28 (SEP-2575) pieces: per-request _meta, the Mcp-Method,
// Mcp-Name and Mcp-Param-* request headers, server/discover, multi
// round-trip requests (input_required results, SEP-2322), and era
// detection for ProtocolAuto.

// _meta keys of a modern request (2026-07-28 basic §_meta).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaLogLevel replaces logging/setLevel (SEP-2575): the level of the
	// notifications/message a request may cause.
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
)

// Request headers of 2026-07-28 (Streamable HTTP §Request Metadata).
const (
	HeaderMethod      = "Mcp-Method"
	HeaderName        = "Mcp-Name"
	headerParamPrefix = "Mcp-Param-"
)

// modernMeta renders the inside of a modern request's _meta object
// (without braces): protocol version, client info and capabilities.
func modernMeta(cfg *Config, proto string) []byte {
	var b []byte
	b = jsonrpc.AppendString(b, metaProtocolVersion)
	b = append(b, ':')
	b = jsonrpc.AppendString(b, proto)
	b = append(b, ',')
	b = jsonrpc.AppendString(b, metaClientInfo)
	b = append(b, `:{"name":`...)
	b = jsonrpc.AppendString(b, cmp.Or(cfg.ClientName, "mcpbench"))
	b = append(b, `,"version":`...)
	b = jsonrpc.AppendString(b, cmp.Or(cfg.ClientVersion, "dev"))
	b = append(b, "},"...)
	b = jsonrpc.AppendString(b, metaClientCapabilities)
	// The canned answers (defaultCanned) cover these input requests.
	b = append(b, `:{"elicitation":{},"sampling":{},"roots":{}}`...)
	if cfg.LogLevel != "" {
		b = append(b, ',')
		b = jsonrpc.AppendString(b, MetaLogLevel)
		b = append(b, ':')
		b = jsonrpc.AppendString(b, cfg.LogLevel)
	}
	return b
}

// encodeHeaderValue returns v as a header value: as it is when it is
// plain visible ASCII (spaces inside allowed), else the Base64 sentinel
// "=?base64?…?=" of its UTF-8 bytes (Streamable HTTP §Value Encoding). A
// plain value that looks like the sentinel is encoded too.
func encodeHeaderValue(v string) string {
	safe := v != "" && v[0] != ' ' && v[0] != '\t' && v[len(v)-1] != ' ' && v[len(v)-1] != '\t'
	for i := 0; safe && i < len(v); i++ {
		c := v[i]
		if c < 0x20 && c != '\t' || c > 0x7e {
			safe = false
		}
	}
	if safe && !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=")) {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// mcpName returns the value of the Mcp-Name header for a request: params
// name (tools/call, prompts/get) or uri (resources/read); "" for others.
func mcpName(method string, params []byte) string {
	var key string
	switch method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	default:
		return ""
	}
	var v string
	if raw := jsonrpc.Field(params, key); len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
		return v
	}
	return ""
}

// ParamHeaders returns the Mcp-Param-* headers of a tools/call: for each
// property of the tool's inputSchema annotated with "x-mcp-header"
// (reachable through "properties" only), the argument at that path,
// encoded (Streamable HTTP §Custom Headers from Tool Parameters). Absent
// and null arguments give no header. An invalid annotation is an error:
// the spec says to exclude such a tool.
func ParamHeaders(inputSchema, arguments []byte) ([][2]string, error) {
	var schema map[string]any
	if len(inputSchema) == 0 || json.Unmarshal(inputSchema, &schema) != nil {
		return nil, nil
	}
	var args map[string]any
	if len(arguments) > 0 {
		dec := json.NewDecoder(bytes.NewReader(arguments))
		dec.UseNumber()
		dec.Decode(&args)
	}
	var out [][2]string
	seen := map[string]bool{}
	var walk func(s map[string]any, path []string) error
	walk = func(s map[string]any, path []string) error {
		props, _ := s["properties"].(map[string]any)
		for name, raw := range props {
			prop, _ := raw.(map[string]any)
			if prop == nil {
				continue
			}
			p := append(slices.Clone(path), name)
			if h, ok := prop["x-mcp-header"]; ok {
				hs, _ := h.(string)
				if hs == "" || strings.ContainsAny(hs, " \t\r\n:()<>@,;\\\"/[]?={}") {
					return fmt.Errorf("property %s: x-mcp-header %q is not a header token", strings.Join(p, "."), h)
				}
				if seen[strings.ToLower(hs)] {
					return fmt.Errorf("x-mcp-header %q used twice", hs)
				}
				seen[strings.ToLower(hs)] = true
				switch prop["type"] {
				case "string", "integer", "boolean":
				default:
					return fmt.Errorf("property %s: x-mcp-header on type %v (want string, integer or boolean)", strings.Join(p, "."), prop["type"])
				}
				if v, ok := lookupPath(args, p); ok && v != nil {
					out = append(out, [2]string{headerParamPrefix + hs, encodeHeaderValue(headerString(v))})
				}
			}
			if err := walk(prop, p); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(schema, nil); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out, nil
}

func lookupPath(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, k := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func headerString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// inputResponses renders the retry fields of a multi round-trip request
// (SEP-2322) from an input_required result: "inputResponses" with a
// canned answer per input request, and "requestState" when given. It
// returns the fields without braces, for jsonrpc.AppendParams.
func (c *Config) inputResponses(result []byte) ([]byte, error) {
	var r struct {
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
		RequestState *string `json:"requestState"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("%w: input_required result: %v", ErrBadResponse, err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range r.InputRequests {
			if !yield(k) {
				return
			}
		}
	})
	b := []byte(`"inputResponses":{`)
	for i, k := range keys {
		ans, ok := c.canned(r.InputRequests[k].Method)
		if !ok {
			return nil, fmt.Errorf("%w: input request %q: no canned answer for %s", ErrBadResponse, k, r.InputRequests[k].Method)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, k)
		b = append(b, ':')
		b = append(b, ans...)
	}
	b = append(b, '}')
	if r.RequestState != nil {
		b = append(b, `,"requestState":`...)
		b = jsonrpc.AppendString(b, *r.RequestState)
	}
	return b, nil
}

// RemovedInModern reports methods 2026-07-28 no longer has (SEP-2575:
// ping, logging/setLevel — the level goes in each request's _meta, see
// Config.LogLevel — and resources/subscribe and resources/unsubscribe,
// replaced by subscriptions/listen's resourceSubscriptions).
func RemovedInModern(method string) bool {
	switch method {
	case "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return true
	}
	return false
}

// inputRound returns the extra params fields that answer the
// input_required result of c (2026-07-28 multi round-trip requests),
// counted in res.InputRounds. ok is false, with res failed, after
// maxInputRounds rounds or when the requests cannot be answered.
func (s *Lane) inputRound(c *call, res *Result) (extra []byte, ok bool) {
	if res.InputRounds >= maxInputRounds {
		res.fail(fmt.Errorf("%w: still input_required after %d rounds", ErrBadResponse, res.InputRounds))
		return nil, false
	}
	x, err := s.cfg.inputResponses(c.inputReq)
	if err != nil {
		res.fail(err)
		return nil, false
	}
	res.InputRounds++
	return x, true
}

// maxInputRounds bounds the retries of a multi round-trip request.
const maxInputRounds = 10

// Negotiation is what Negotiate learned about a server.
type Negotiation struct {
	// Protocol is the version to use: a modern one when the server speaks
	// it, else DefaultProtocol (the legacy sessions then negotiate their
	// own version in initialize).
	Protocol string
	// Modern reports that the server answered server/discover.
	Modern bool
	// Discover is the raw server/discover result (modern servers).
	Discover json.RawMessage
	// Why says how the era was decided (for reports).
	Why string
	// Status is the HTTP status of the server/discover answer.
	Status int
	// Versions are the versions the server listed (server/discover's
	// supportedVersions, or an UnsupportedProtocolVersionError's
	// data.supported), as it listed them; nil when it listed none.
	Versions []string
}

// ModernOnly reports whether the server listed versions and every one is
// a 2026-07-28-era version: it speaks no session-based version, so a
// legacy initialize would be refused.
func (n Negotiation) ModernOnly() bool {
	return n.Modern && len(n.Versions) > 0 && !slices.ContainsFunc(n.Versions, func(v string) bool { return !IsModern(v) })
}

// Negotiate decides which protocol era a server speaks (Versioning
// §Backward Compatibility; Streamable HTTP §Backward Compatibility): it
// sends a modern server/discover and uses 2026-07-28 when the server
// answers it or names a modern version it supports in an
// UnsupportedProtocolVersionError; any other answer (a 4xx without a
// recognized modern error body, a legacy error) means a legacy server and
// DefaultProtocol. Only transport failures are errors. The result should
// be cached per origin: the engine calls it once per run.
func Negotiate(ctx context.Context, cfg *Config) (Negotiation, error) {
	c := *cfg
	c.Protocol = Protocol20260728
	s, err := NewSession(&c, 0)
	if err != nil {
		return Negotiation{}, err
	}
	ctx, cancel := s.opContext(ctx)
	defer s.endOp(cancel, nil, false)
	body, status, ct, err := s.rawPOST(ctx, "server/discover", nil)
	if err != nil {
		return Negotiation{}, err
	}
	n := Negotiation{Protocol: DefaultProtocol, Status: status}
	var m jsonrpc.Message
	if mediaType(ct) == mtJSON || mediaType(ct) == mtSSE {
		m, _ = firstMessage(body, mediaType(ct) == mtSSE)
	}
	vs, code, v := discoverVersions(m)
	n.Versions = vs
	switch {
	case v != "" && m.Result != nil:
		n.Protocol, n.Modern, n.Discover = v, true, bytes.Clone(m.Result)
		n.Why = fmt.Sprintf("the server answers server/discover (supportedVersions %s)", strings.Join(vs, ", "))
	case v != "":
		n.Protocol, n.Modern = v, true
		n.Why = fmt.Sprintf("the server's UnsupportedProtocolVersionError lists %s", strings.Join(vs, ", "))
	case m.Kind == jsonrpc.KindResponse && m.Result != nil:
		n.Why = fmt.Sprintf("the server lists only session-based versions (server/discover: %s), so the newest of those", strings.Join(vs, ", "))
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		// Refused before the method was read: the answer says nothing of
		// the versions the server speaks.
		n.Why = fmt.Sprintf("the server refused server/discover with HTTP %d %s (authorization), which does not tell its version: trying the session-based versions (initialize negotiates one)", status, http.StatusText(status))
	case m.Kind == jsonrpc.KindResponse && m.Error != nil:
		n.Why = fmt.Sprintf("the server answers server/discover with HTTP %d and %s, not a 2026-07-28 answer: it does not speak 2026-07-28, so the session-based versions (initialize negotiates one)", status, rpcCodeText(code))
	default:
		n.Why = fmt.Sprintf("the server answers server/discover with HTTP %d and no 2026-07-28 answer: it does not speak 2026-07-28, so the session-based versions (initialize negotiates one)", status)
	}
	return n, nil
}

// rpcCodeText names a JSON-RPC error code for a sentence: "JSON-RPC
// error -32601 (method not found)", or "a JSON-RPC error without a code"
// for 0 (a code left out reads 0).
func rpcCodeText(code int) string {
	names := map[int]string{-32700: "parse error", -32600: "invalid request", -32601: "method not found", -32602: "invalid params", -32603: "internal error"}
	switch {
	case code == 0:
		return "a JSON-RPC error without a code"
	case names[code] != "":
		return fmt.Sprintf("JSON-RPC error %d (%s)", code, names[code])
	}
	return fmt.Sprintf("JSON-RPC error %d", code)
}

// discoverVersions reads the versions an answer to server/discover lists:
// a result's supportedVersions, or the data.supported of an
// UnsupportedProtocolVersionError (code is the JSON-RPC error code; 0 for
// a result). modern is the first of modernProtocols among them ("" when
// none is).
func discoverVersions(m jsonrpc.Message) (versions []string, code int, modern string) {
	switch {
	case m.Kind == jsonrpc.KindResponse && m.Result != nil:
		var d struct {
			Supported []string `json:"supportedVersions"`
		}
		json.Unmarshal(m.Result, &d)
		versions = d.Supported
	case m.Kind == jsonrpc.KindResponse && m.Error != nil:
		var e struct {
			Code int `json:"code"`
			Data struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		}
		json.Unmarshal(m.Error, &e)
		code = e.Code
		if e.Code == CodeUnsupportedVersion {
			versions = e.Data.Supported
		}
	}
	for _, v := range modernProtocols {
		if slices.Contains(versions, v) {
			return versions, code, v
		}
	}
	return versions, code, ""
}

// rawPOST sends one modern request and reads the whole answer (for probes).
func (s *Lane) rawPOST(ctx context.Context, method string, params []byte) (body []byte, status int, ct string, err error) {
	id := s.next()
	b := jsonrpc.AppendRequest(nil, id, method, params, s.metaModern)
	h := s.hdr.Load().post.Clone()
	h.Set(HeaderMethod, method)
	if n := mcpName(method, params); n != "" {
		h.Set(HeaderName, encodeHeaderValue(n))
	}
	resp, err := s.send(ctx, http.MethodPost, b, h, "")
	if err != nil {
		return nil, 0, "", s.ctxErr(ctx, err)
	}
	defer resp.Body.Close()
	data, _, err := readAll(resp.Body, nil, 1<<20)
	if err != nil && !errors.Is(err, ErrResponseTooLarge) {
		return data, resp.StatusCode, resp.Header.Get("Content-Type"), s.ctxErr(ctx, err)
	}
	return data, resp.StatusCode, resp.Header.Get("Content-Type"), nil
}

// firstMessage returns the first JSON-RPC message of a JSON body or an SSE
// stream that carries a response.
func firstMessage(body []byte, isSSE bool) (jsonrpc.Message, error) {
	if !isSSE {
		return jsonrpc.Parse(bytes.TrimSpace(body))
	}
	d := sse.NewDecoder(bytes.NewReader(body))
	for {
		ev, err := d.Next()
		if err != nil {
			return jsonrpc.Message{}, err
		}
		if len(ev.Data) == 0 {
			continue
		}
		if m, err := jsonrpc.Parse(ev.Data); err == nil && m.Kind == jsonrpc.KindResponse {
			return m, nil
		}
	}
}

// modernHeaders returns (and caches) the request headers of op under a
// modern protocol: the session's POST headers plus Mcp-Method, Mcp-Name
// and the op's Mcp-Param-* headers.
func (s *Lane) modernHeaders(op *Op) http.Header {
	if h, ok := s.opHdr[op]; ok {
		return h
	}
	h := s.hdr.Load().post.Clone()
	h[HeaderMethod] = []string{op.Method}
	if op.mcpName != "" {
		h[HeaderName] = []string{encodeHeaderValue(op.mcpName)}
	}
	for _, kv := range op.ParamHeaders {
		h[http.CanonicalHeaderKey(kv[0])] = []string{kv[1]}
	}
	if s.opHdr == nil {
		s.opHdr = map[*Op]http.Header{}
	}
	s.opHdr[op] = h
	return h
}

// PrepareOps readies ops for a modern protocol: it lists the server's tools
// (tools/list, every page) and sets each tools/call op's ParamHeaders from
// its tool's x-mcp-header annotations. A tool whose annotations are
// invalid must be excluded (Streamable HTTP §Schema Extension): ops
// calling it make PrepareOps fail, naming the tool and why. Legacy
// protocols need nothing.
func PrepareOps(ctx context.Context, cfg *Config, ops []*Op) error {
	if !IsModern(cfg.protocol()) {
		return nil
	}
	needed := map[string]bool{}
	for _, op := range ops {
		if op.isToolCall {
			needed[op.mcpName] = true
		}
	}
	if len(needed) == 0 {
		return nil
	}
	s, err := NewSession(cfg, 0)
	if err != nil {
		return err
	}
	schemas := map[string]json.RawMessage{}
	var cursor string
	for page := 0; page < 100; page++ {
		var params []byte
		if cursor != "" {
			params = jsonrpc.AppendString([]byte(`{"cursor":`), cursor)
			params = append(params, '}')
		}
		octx, cancel := s.opContext(ctx)
		body, status, ct, err := s.rawPOST(octx, "tools/list", params)
		s.endOp(cancel, octx, false)
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		m, err := firstMessage(body, mediaType(ct) == mtSSE)
		if err != nil || m.Result == nil {
			return fmt.Errorf("tools/list: HTTP %d, no result", status)
		}
		var r struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &r); err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range r.Tools {
			schemas[t.Name] = t.InputSchema
		}
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	for _, op := range ops {
		if !op.isToolCall {
			continue
		}
		h, err := ParamHeaders(schemas[op.mcpName], jsonrpc.Field(op.Params, "arguments"))
		if err != nil {
			return fmt.Errorf("tool %s has an invalid x-mcp-header annotation (a client must exclude it): %w", op.mcpName, err)
		}
		if op.Render != nil && len(h) > 0 {
			return fmt.Errorf("op %s: tool %s sends arguments as Mcp-Param-* headers (x-mcp-header), which rendered (templated) arguments cannot fill per request", op.Name, op.mcpName)
		}
		op.ParamHeaders = h
	}
	return nil
}
