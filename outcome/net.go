package outcome

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// over its whole life (set-up included): the HTTP version, the proxy,
// TLS handshakes and OAuth token fetches, each apart from operations'
// latency. Times are in microseconds in the histograms.
type NetStats struct {
	// HTTP is the version asked for: auto, 1.1 or 2.
	HTTP string
	// Transport names the transport(s) in use.
	Transport string
	// Protocols counts connections by the protocol they speak: "h2",
	// "h2c", "http/1.1".
	Protocols map[string]int64
	// Connections counts TCP connections opened (to the target or to a
	// proxy); Proxied those through a proxy; ProxyFailures the proxy
	// connections or CONNECTs that failed.
	Connections, Proxied, ProxyFailures int64
	// Proxies maps each proxy used (URL without credentials) to where it
	// came from: "--proxy" or "environment".
	Proxies map[string]string
	// TLS handshakes made, of which resumed (session tickets or ids), and
	// failed; TLSVersions counts the versions negotiated ("TLS 1.3").
	TLSHandshakes, TLSResumed, TLSFailed int64
	TLSVersions                          map[string]int64
	// Handshake holds the successful handshakes' times in µs.
	Handshake *hdr.Histogram
	// OAuth describes authorization (nil without OAuth).
	OAuth *OAuthStats
}

// Protocol names the protocol most connections speak ("h2", "h2c",
// "http/1.1"; "" before any connection), with the others after it:
// "h2 (+ http/1.1)".
func (n *NetStats) Protocol() string {
	if n == nil || len(n.Protocols) == 0 {
		return ""
	}
	ps := slices.SortedFunc(maps.Keys(n.Protocols), func(a, b string) int {
		return cmp.Or(cmp.Compare(n.Protocols[b], n.Protocols[a]), strings.Compare(a, b))
	})
	if len(ps) == 1 {
		return ps[0]
	}
	return ps[0] + " (+ " + strings.Join(ps[1:], ", ") + ")"
}

// OAuthStats describes authorization over a client's life: discovery,
// token fetches (their times in µs in Fetch), 401 challenges.
type OAuthStats struct {
	// Issuer is the authorization server, TokenEndpoint its token
	// endpoint, Resource the protected resource (RFC 8707) tokens are for.
	Issuer, TokenEndpoint, Resource string
	Scopes                          []string
	// Challenges counts 401 answers with a Bearer challenge; Rejected
	// those to a request that carried a token the client held valid.
	Challenges, Rejected int64
	// Fetches counts tokens obtained, Refreshes the fetches after the
	// first (a token due to expire, or rejected), Failures the token
	// requests or discoveries that failed.
	Fetches, Refreshes, Failures int64
	// Fetch holds the successful fetches' times in µs (discovery apart).
	Fetch *hdr.Histogram
	// LastError is the last failure ("" none).
	LastError string
}
