package driver

import (
	"net/http"
	"net/url"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// The pieces of the session's wire format that a client building its own
// requests needs to speak as a Session does: the conformance probe
// (package probe) sends raw requests, some deliberately malformed, and
// must render and read the parts it does not test exactly as a Session
// would. Each is a thin front over what Session uses itself, so the two
// cannot drift apart.

// ModernMeta returns the inside (without braces) of the _meta object a
// Session sends with every 2026-07-28 request (basic §_meta): the protocol
// version proto (metaProtocolVersion), clientInfo from c.ClientName and
// c.ClientVersion ("mcpbench" and "dev" when empty), clientCapabilities,
// and c.LogLevel (MetaLogLevel) when set. The bytes are fresh: callers may
// append to them. It reads c only.
func (c *Config) ModernMeta(proto string) []byte { return modernMeta(c, proto) }

// NameHeader returns the value of the Mcp-Name request header (HeaderName,
// 2026-07-28 Streamable HTTP §Request Metadata) for a request of method
// with params (a JSON object, or empty): params.name for tools/call and
// prompts/get, params.uri for resources/read, encoded as encodeHeaderValue
// does. It returns "" for other methods and when the member is missing or
// not a string: the request then carries no Mcp-Name.
func NameHeader(method string, params []byte) string {
	if n := mcpName(method, params); n != "" {
		return encodeHeaderValue(n)
	}
	return ""
}

// DiscoverVersions reads the protocol versions an answer to server/discover
// lists, as Negotiate does: a result's supportedVersions, or the
// data.supported of an UnsupportedProtocolVersionError
// (CodeUnsupportedVersion). code is the JSON-RPC error code of an error
// answer (0 for a result); modern is the first of modernProtocols the
// versions include ("" when none does: the server speaks only the
// session-based versions). A message that is not a response gives no
// versions.
func DiscoverVersions(m jsonrpc.Message) (versions []string, code int, modern string) {
	return discoverVersions(m)
}

// StreamLink finds the rel="stream" link (SEP-1335, a draft) in the Link
// header fields (RFC 8288) of an SSE answer, resolved against base, the
// URL of the request it answers, as a Session does before resuming a
// stream there. It returns nil when there is none; refused reports a link
// that must not be followed: to another origin (scheme, host or port), or
// not parseable. The URL returned has no fragment.
func StreamLink(h http.Header, base *url.URL) (target *url.URL, refused bool) {
	return streamLink(h, base)
}
