package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/outcome"
)

// NetSummary describes a run's connections over the whole run (set-up
// included), each apart from operations' latency: the HTTP version they
// speak, the proxy, TLS handshakes and OAuth token fetches. A handshake or
// a token fetch made while an operation waited is also in that
// operation's latency; here it is seen on its own.
type NetSummary struct {
	// HTTP is the version asked for (auto, 1.1, 2); Protocol what the
	// connections speak ("h2", "h2c", "http/1.1"; others after the most
	// used one); Transport the transport(s) in use.
	HTTP      string `json:"http"`
	Protocol  string `json:"protocol"`
	Transport string `json:"transport"`
	// Connections counts TCP connections opened (to the target or a
	// proxy), by protocol in ByProtocol.
	Connections int64            `json:"connections"`
	ByProtocol  map[string]int64 `json:"connections_by_protocol,omitempty"`
	// Proxy is the proxy used and where it came from ("" direct),
	// without credentials; Proxied counts connections through it,
	// ProxyFailures failed proxy connections or CONNECTs.
	Proxy         string `json:"proxy,omitempty"`
	Proxied       int64  `json:"proxied_connections,omitempty"`
	ProxyFailures int64  `json:"proxy_failures,omitempty"`
	// TLS is nil without TLS.
	TLS *TLSSummary `json:"tls,omitempty"`
	// OAuth is nil without authorization.
	OAuth *OAuthSummary `json:"oauth,omitempty"`
}

// TLSSummary counts TLS handshakes: full, resumed (session tickets or
// ids: cheaper for both sides), failed, and their times.
type TLSSummary struct {
	Handshakes int64            `json:"handshakes"`
	Resumed    int64            `json:"resumed"`
	Failed     int64            `json:"failed,omitempty"`
	Versions   map[string]int64 `json:"versions,omitempty"`
	Handshake  Latency          `json:"handshake_ms"`
}

// OAuthSummary describes authorization: where tokens came from, how many
// were fetched (the first, then refreshes before expiry or after a
// rejection), how long a fetch took, the 401 challenges. Never a secret.
type OAuthSummary struct {
	Issuer        string   `json:"issuer,omitempty"`
	TokenEndpoint string   `json:"token_endpoint,omitempty"`
	Resource      string   `json:"resource,omitempty"`
	Scopes        []string `json:"scopes,omitempty"`
	Fetches       int64    `json:"token_fetches"`
	Refreshes     int64    `json:"refreshes"`
	Failures      int64    `json:"failures"`
	Fetch         Latency  `json:"fetch_ms"`
	Challenges    int64    `json:"challenges"`
	// Rejected counts 401s to requests that carried a token the client
	// held valid (a server revoking or mistiming tokens).
	Rejected  int64  `json:"rejected"`
	LastError string `json:"last_error,omitempty"`
}

// NetSummaryOf summarizes the driver's transport stats (nil for nil).
func NetSummaryOf(n *outcome.NetStats) *NetSummary {
	if n == nil {
		return nil
	}
	s := &NetSummary{HTTP: n.HTTP, Protocol: n.Protocol(), Transport: n.Transport, Connections: n.Connections,
		ByProtocol: n.Protocols, Proxy: ProxyText(n.Proxies), Proxied: n.Proxied, ProxyFailures: n.ProxyFailures}
	if len(s.ByProtocol) == 0 {
		s.ByProtocol = nil
	}
	if n.TLSHandshakes+n.TLSFailed > 0 {
		s.TLS = &TLSSummary{Handshakes: n.TLSHandshakes, Resumed: n.TLSResumed, Failed: n.TLSFailed,
			Versions: n.TLSVersions, Handshake: LatencyOf(n.Handshake)}
	}
	if o := n.OAuth; o != nil {
		s.OAuth = &OAuthSummary{Issuer: o.Issuer, TokenEndpoint: o.TokenEndpoint, Resource: o.Resource, Scopes: o.Scopes,
			Fetches: o.Fetches, Refreshes: o.Refreshes, Failures: o.Failures, Fetch: LatencyOf(o.Fetch),
			Challenges: o.Challenges, Rejected: o.Rejected, LastError: o.LastError}
	}
	return s
}

// ProxyText renders the proxies used: "http://127.0.0.1:3128 (--proxy)",
// several joined with ", "; "" for none.
func ProxyText(proxies map[string]string) string {
	var out []string
	for _, u := range slices.Sorted(maps.Keys(proxies)) {
		out = append(out, fmt.Sprintf("%s (%s)", u, proxies[u]))
	}
	return strings.Join(out, ", ")
}
