package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// httpName renders a connection protocol for the header: "HTTP/2 (h2)",
// "HTTP/2 (h2c)", "HTTP/1.1".
func httpName(proto string) string {
	head, rest, _ := strings.Cut(proto, " ")
	switch head {
	case "h2", "h2c":
		head = "HTTP/2 (" + head + ")"
	case "http/1.1":
		head = "HTTP/1.1"
	}
	if rest != "" {
		return head + " " + rest
	}
	return head
}

// netHeader is the header line's part on connections: the HTTP version
// they speak and the proxy the load went through ("" when unknown).
func netHeader(n *results.NetSummary) string {
	if n == nil || n.Protocol == "" {
		return ""
	}
	out := "  ·  " + httpName(n.Protocol)
	if n.Proxy != "" {
		out += "  ·  through proxy " + n.Proxy + ": its latency is in the numbers"
	}
	return out
}

// net prints the connections when they are notable (connNotable), then
// TLS handshakes and OAuth token fetches, each apart from operations'
// latency.
func (p *printer) net(s *results.Summary) {
	n := s.Net
	if n == nil || n.Connections == 0 && n.OAuth == nil {
		return
	}
	if why := connNotable(s); why != "" {
		line := fmt.Sprintf("Connections (%s; --http %s): %d opened (%s)", n.Transport, n.HTTP, n.Connections, textfmt.Counts(n.ByProtocol))
		if n.Proxy != "" || n.Proxied > 0 {
			line += fmt.Sprintf(", %d through the proxy", n.Proxied)
		}
		if n.ProxyFailures > 0 {
			line += fmt.Sprintf(", %d proxy failures", n.ProxyFailures)
		}
		if why != "proxy" && why != "mixed" {
			line += "; " + why
		}
		p.F("%s\n", line)
	}
	if t := n.TLS; t != nil {
		p.F("TLS (apart from op latency): %d handshakes, %d resumed, %d failed (%s); handshake p50 %s p99 %s max %s ms\n",
			t.Handshakes, t.Resumed, t.Failed, textfmt.Counts(t.Versions), textfmt.MS(t.Handshake.P50), textfmt.MS(t.Handshake.P99), textfmt.MS(t.Handshake.Max))
	}
	if o := n.OAuth; o != nil {
		p.F("Authorization (OAuth client credentials, apart from op latency): %d token fetches (%d refreshes, %d failed) from %s; fetch p50 %s max %s ms; %d challenges (401) answered, %d tokens rejected\n",
			o.Fetches, o.Refreshes, o.Failures, cmp.Or(o.Issuer, "no authorization server found"), textfmt.MS(o.Fetch.P50), textfmt.MS(o.Fetch.Max), o.Challenges, o.Rejected)
		if o.LastError != "" {
			p.F("  last failure: %s\n", o.LastError)
		}
	}
}

// connNotable says why the Connections line is worth printing ("" when
// it is not: the header already names the HTTP version). Notable are:
//   - "proxy": a proxy carried the load or failed (the line counts both);
//   - "mixed": the connections speak more than one protocol (ALPN chose
//     differently for some);
//   - re-opened connections: more connections than the sessions keep —
//     (sessions opened + failed) × (requests in flight per session + 1
//     for the GET stream); the reason says so, since it means the server
//     (or a cut) closed connections the client would have kept.
func connNotable(s *results.Summary) string {
	n := s.Net
	switch {
	case n.Proxy != "" || n.Proxied > 0 || n.ProxyFailures > 0:
		return "proxy"
	case len(n.ByProtocol) > 1:
		return "mixed"
	}
	kept := (s.Sessions.Opened + s.Sessions.Failed) * int64(max(s.Concurrency, 1)+1)
	if n.Connections > kept {
		return fmt.Sprintf("more than the %d the sessions keep open (each session's requests in flight plus its GET stream): the server or cuts closed connections, which were opened again", kept)
	}
	return ""
}
