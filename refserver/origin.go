package refserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/mcpbench/mcpbench/internal/netutil"
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

// The rule itself is internal/netutil's (Guard, OriginPolicy): the one
// every listener of mcpbench applies (dashboard, /metrics, proxy).

// originPolicy is the compiled Options.AllowedOrigins.
type originPolicy struct{ netutil.OriginPolicy }

func newOriginPolicy(list []string) (originPolicy, error) {
	p, err := netutil.NewOriginPolicy(list)
	return originPolicy{p}, err
}

// allows reports whether r may be served, and the first Origin value that
// may not.
func (p originPolicy) allows(r *http.Request) (bool, string) { return p.Allows(r) }

// parseOrigin parses an Origin header value or an AllowedOrigins entry.
func parseOrigin(s string) (netutil.Origin, error) { return netutil.ParseOrigin(s) }

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
