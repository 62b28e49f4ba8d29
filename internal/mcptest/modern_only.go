package mcptest

import (
	"net/http"
	"sync/atomic"
)

// ModernOnly plants a server that speaks only 2026-07-28 and refuses
// every legacy request, as the TypeScript SDK v2 server
// (@modelcontextprotocol/server 2.x with legacy requests rejected) does:
// a request whose MCP-Protocol-Version header is not 2026-07-28 (a legacy
// initialize carries none) is answered 400 with an
// UnsupportedProtocolVersionError (-32022) whose data.supported lists
// only 2026-07-28; server/discover lists only 2026-07-28. Every other
// request goes to the wrapped Server (its handlers: tools/list,
// tools/call, …). Refused counts the legacy requests refused. Safe for
// concurrent use.
type ModernOnly struct {
	*Server
	refused atomic.Int64
}

// NewModernOnly wraps s (New's defaults plus the caller's handlers) as a
// 2026-07-28-only server, with server/discover set.
func NewModernOnly(s *Server) *ModernOnly {
	s.Handle(K("POST", Any, "server/discover", Any), func(w *Writer, r *Request) {
		w.Result(r, map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
			"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "modern-only", "version": "0"}})
	})
	return &ModernOnly{Server: s}
}

// Refused returns the legacy requests refused.
func (m *ModernOnly) Refused() int64 { return m.refused.Load() }

// ServeHTTP implements http.Handler.
func (m *ModernOnly) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Protocol-Version") != "2026-07-28" {
		m.refused.Add(1)
		(&Writer{ResponseWriter: w}).JSON(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
			"code": -32022, "message": "Unsupported protocol version: this server speaks only 2026-07-28",
			"data": map[string]any{"supported": []string{"2026-07-28"}}}})
		return
	}
	m.Server.ServeHTTP(w, r)
}
