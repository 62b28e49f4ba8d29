package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Origin validation (2025-11-25 transports §Security Warning: "Servers MUST
// validate the Origin header on all incoming connections to prevent DNS
// rebinding attacks"; "If the Origin header is present and invalid, servers
// MUST respond with HTTP 403 Forbidden").
//
// A request without Origin comes from a non-browser client and is served.
// A request with Origin is served when the Origin is the request's own
// origin (scheme, host and port of its Host header; localhost, 127.0.0.1
// and [::1] count as the same host on the same port) or one of
// Options.AllowedOrigins; any other gets 403, whatever its HTTP method.
// The SDK adds its own DNS rebinding check: on a loopback listener a Host
// header that is not a loopback name gets 403.

// origin is a normalised origin: lower-case scheme and host, explicit port.
type origin struct {
	scheme, host, port string
}

func (o origin) String() string { return o.scheme + "://" + net.JoinHostPort(o.host, o.port) }

// parseOrigin parses an Origin header value or an AllowedOrigins entry:
// scheme://host[:port], with no path (a lone "/" is tolerated), query,
// fragment or user info. "null" (an opaque origin) is not an origin.
func parseOrigin(s string) (origin, error) {
	u, err := url.Parse(s)
	if err != nil {
		return origin{}, err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return origin{}, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return origin{}, fmt.Errorf("%q is not scheme://host[:port]", s)
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(scheme)
	}
	return origin{scheme: scheme, host: strings.ToLower(u.Hostname()), port: port}, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// loopbackName reports whether host names the local machine: localhost or
// a loopback IP (127.0.0.0/8, ::1).
func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether o is the origin of r: the request's scheme and
// its Host header, loopback names being equivalent on the same port.
func sameOrigin(o origin, r *http.Request) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, defaultPort(scheme)
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if o.scheme != scheme || o.port != port {
		return false
	}
	return o.host == host || (loopbackName(o.host) && loopbackName(host))
}

// originPolicy is the compiled Options.AllowedOrigins.
type originPolicy struct {
	any     bool
	allowed map[origin]bool
}

func newOriginPolicy(list []string) (originPolicy, error) {
	p := originPolicy{allowed: map[origin]bool{}}
	for _, s := range list {
		if s == "*" {
			p.any = true
			continue
		}
		o, err := parseOrigin(s)
		if err != nil {
			return p, err
		}
		p.allowed[o] = true
	}
	return p, nil
}

// allows reports whether r may be served, and the first Origin value that
// may not.
func (p originPolicy) allows(r *http.Request) (bool, string) {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 || p.any {
		return true, ""
	}
	for _, v := range vals {
		o, err := parseOrigin(v)
		if err != nil || !(sameOrigin(o, r) || p.allowed[o]) {
			return false, v
		}
	}
	return true, ""
}

// writeJSONRPCError answers with status and a JSON-RPC error response that
// has no id (2025-11-25 transports allows one in a 403 or 400 body).
func writeJSONRPCError(w http.ResponseWriter, status, code int, msg string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// codeInvalidRequest is JSON-RPC's Invalid Request.
const codeInvalidRequest = -32600

// maxPeek bounds the bytes of a session-less POST read to find its method.
const maxPeek = 64 << 10

// sessionless checks a POST without Mcp-Session-Id in the stateful modes:
// only initialize (and server/discover, which a 2026-07-28 client sends
// first) may come without one; anything else gets 400 (2025-11-25
// transports §Session Management: "Servers that require a session ID SHOULD
// respond to requests without an MCP-Session-Id header (other than
// initialization) with HTTP 400 Bad Request"). Requests of 2026-07-28 and
// bodies it cannot read are left to the SDK. It returns the request to
// serve (its body restored), or nil when it has answered.
func sessionless(w http.ResponseWriter, r *http.Request) *http.Request {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= protocolVersion2026 {
		return r
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxPeek))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil {
		return r
	}
	var m struct {
		Method *string `json:"method"`
	}
	if json.Unmarshal(head, &m) != nil || m.Method == nil {
		return r // malformed, a batch, a response, or too long: the SDK answers
	}
	switch *m.Method {
	case "initialize", "server/discover":
		return r
	}
	writeJSONRPCError(w, http.StatusBadRequest, codeInvalidRequest,
		"Bad Request: Mcp-Session-Id header required (only initialize may come without one)")
	return nil
}

type readCloser struct {
	io.Reader
	io.Closer
}
