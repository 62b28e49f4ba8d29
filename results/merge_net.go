package results

import (
	"slices"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/outcome"
)

// Tags of summary.hlog for the net block's times (over the whole run, as
// the block itself): TLS handshakes and OAuth token fetches, in µs.
const (
	tagNetHandshake = "net.tls.handshake"
	tagNetFetch     = "net.oauth.fetch"
)

// NetHistograms returns the histograms behind the net block of n (the
// successful TLS handshakes' and token fetches' times), tagged as
// summary.hlog tags them, for exact merges; empty ones are left out.
// Nil for nil.
func NetHistograms(n *outcome.NetStats) map[string]*Hist {
	out := map[string]*Hist{}
	put := func(tag string, h *hdr.Histogram) {
		if h != nil && h.TotalCount() > 0 {
			out[tag] = HistOf(h)
		}
	}
	if n != nil {
		put(tagNetHandshake, n.Handshake)
		if n.OAuth != nil {
			put(tagNetFetch, n.OAuth.Fetch)
		}
	}
	return out
}

// net merges the segments' net blocks (nil when none has one): counts
// summed, the protocol recomputed from the summed connections by
// protocol, the HTTP setting, transport and proxy of every segment (each
// once), the handshake and fetch times from the merged histograms (a
// segment written before they were kept leaves them out: said in a note).
func (m *Merged) net() (*NetSummary, []string) {
	var out *NetSummary
	var https, transports, proxies []string
	var notes []string
	for _, r := range m.segs {
		x := r.Summary.Net
		if x == nil {
			continue
		}
		if out == nil {
			out = &NetSummary{}
		}
		https, transports = appendNew(https, x.HTTP), appendNew(transports, x.Transport)
		if x.Proxy != "" {
			proxies = appendNew(proxies, x.Proxy)
		}
		out.Connections += x.Connections
		out.ByProtocol = addCounts(out.ByProtocol, x.ByProtocol)
		out.Proxied += x.Proxied
		out.ProxyFailures += x.ProxyFailures
		if t := x.TLS; t != nil {
			if out.TLS == nil {
				out.TLS = &TLSSummary{}
			}
			out.TLS.Handshakes += t.Handshakes
			out.TLS.Resumed += t.Resumed
			out.TLS.Failed += t.Failed
			out.TLS.Versions = addCounts(out.TLS.Versions, t.Versions)
			if t.Handshakes > 0 && r.Totals[tagNetHandshake] == nil {
				notes = appendNew(notes, segLabel(r)+": its TLS handshake times are not in its summary.hlog (left out of the merged ones)")
			}
		}
		if o := x.OAuth; o != nil {
			if out.OAuth == nil {
				out.OAuth = &OAuthSummary{Issuer: o.Issuer, TokenEndpoint: o.TokenEndpoint, Resource: o.Resource}
			}
			a := out.OAuth
			a.Scopes = appendNew(a.Scopes, o.Scopes...)
			a.Fetches += o.Fetches
			a.Refreshes += o.Refreshes
			a.Failures += o.Failures
			a.Challenges += o.Challenges
			a.Rejected += o.Rejected
			if o.LastError != "" {
				a.LastError = o.LastError
			}
			if o.Fetches > 0 && r.Totals[tagNetFetch] == nil {
				notes = appendNew(notes, segLabel(r)+": its token fetch times are not in its summary.hlog (left out of the merged ones)")
			}
		}
	}
	if out == nil {
		return nil, nil
	}
	out.HTTP = strings.Join(slices.DeleteFunc(https, isEmpty), ", ")
	out.Transport = strings.Join(slices.DeleteFunc(transports, isEmpty), ", ")
	out.Proxy = strings.Join(proxies, ", ")
	out.Protocol = (&outcome.NetStats{Protocols: out.ByProtocol}).Protocol()
	if out.TLS != nil {
		out.TLS.Handshake = m.latency(tagNetHandshake)
	}
	if out.OAuth != nil {
		out.OAuth.Fetch = m.latency(tagNetFetch)
	}
	return out, notes
}

func isEmpty(s string) bool { return s == "" }
