package netutil

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// DNS rebinding protection of every listener mcpbench opens (serve's MCP
// endpoint, the dashboard, the Prometheus /metrics, the proxy): one rule,
// after the go-sdk's and the 2025-11-25 transports §Security Warning
// ("Servers MUST validate the Origin header on all incoming connections
// to prevent DNS rebinding attacks"; "If the Origin header is present and
// invalid, servers MUST respond with HTTP 403 Forbidden").
//
//   - Host: a request that arrives on a loopback address (the connection's
//     local address is 127.0.0.0/8 or ::1, whatever address the listener
//     was given) must carry a loopback Host (localhost, a loopback IP) or
//     one of the guard's extra hosts; else 403. A web page that rebinds its
//     own name to 127.0.0.1 sends its own name as Host, so it is refused.
//     A request that arrives on another address (the user chose to listen
//     beyond loopback) is not held to a Host.
//   - Origin: a request without Origin comes from a non-browser client and
//     passes. One with Origin passes when every Origin value is the
//     request's own origin (scheme, host and port of its Host header, the
//     loopback names being one host on the same port) or an allowed origin
//     ("*" allows all); else 403, whatever the method.

// Origin is a normalised origin: lower-case scheme and host (no brackets),
// explicit port.
type Origin struct {
	Scheme, Host, Port string
}

// String returns scheme://host:port.
func (o Origin) String() string { return o.Scheme + "://" + net.JoinHostPort(o.Host, o.Port) }

// ParseOrigin parses an Origin header value or an allowed-origin entry:
// scheme://host[:port] with scheme http or https, no path (a lone "/" is
// tolerated), query, fragment or user info. "null" (an opaque origin) is
// not an origin. The error says what is wrong.
func ParseOrigin(s string) (Origin, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Origin{}, err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Origin{}, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return Origin{}, fmt.Errorf("%q is not scheme://host[:port]", s)
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(scheme)
	}
	return Origin{Scheme: scheme, Host: strings.ToLower(u.Hostname()), Port: port}, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// LoopbackName reports whether host (a name or an IP, brackets and port
// allowed) names the local machine: localhost or a loopback IP
// (127.0.0.0/8, ::1).
func LoopbackName(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackAddr reports whether a is a TCP address on a loopback IP.
func LoopbackAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// SameOrigin reports whether o is the origin of r: r's scheme (https
// with TLS) and its Host header, the loopback names being one host on the
// same port.
func SameOrigin(o Origin, r *http.Request) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, defaultPort(scheme)
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if o.Scheme != scheme || o.Port != port {
		return false
	}
	return o.Host == host || (LoopbackName(o.Host) && LoopbackName(host))
}

// OriginPolicy is a compiled list of allowed origins. The zero value
// allows same-origin requests (and those without Origin) only. Safe for
// concurrent use once made.
type OriginPolicy struct {
	any     bool
	allowed map[Origin]bool
}

// NewOriginPolicy compiles list: "scheme://host[:port]" entries and "*"
// (every origin). The error names the first bad entry.
func NewOriginPolicy(list []string) (OriginPolicy, error) {
	p := OriginPolicy{allowed: map[Origin]bool{}}
	for _, s := range list {
		if s == "*" {
			p.any = true
			continue
		}
		o, err := ParseOrigin(s)
		if err != nil {
			return p, fmt.Errorf("%q: %w (want scheme://host[:port] or \"*\")", s, err)
		}
		p.allowed[o] = true
	}
	return p, nil
}

// Allows reports whether r's Origin headers may be served, and the first
// value that may not.
func (p OriginPolicy) Allows(r *http.Request) (bool, string) {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 || p.any {
		return true, ""
	}
	for _, v := range vals {
		o, err := ParseOrigin(v)
		if err != nil || !(SameOrigin(o, r) || p.allowed[o]) {
			return false, v
		}
	}
	return true, ""
}

// HostAllowed reports whether r's Host header passes the Host rule: r did
// not arrive on a loopback address (or its local address is unknown), or
// its Host is a loopback name or one of hosts (names or IPs, compared
// case-insensitively, without port).
func HostAllowed(r *http.Request, hosts []string) bool {
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if la == nil || !LoopbackAddr(la) || LoopbackName(r.Host) {
		return true
	}
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	for _, a := range hosts {
		if strings.EqualFold(strings.Trim(a, "[]"), h) {
			return true
		}
	}
	return false
}

// Guard is the Host and Origin rule of one listener: Hosts are the names
// besides the loopback ones a request on a loopback address may carry as
// Host (e.g. the names of its TLS certificate), Origins the allowed
// origins besides its own. The zero value allows loopback Hosts and
// same-origin requests only. Safe for concurrent use.
type Guard struct {
	Hosts   []string
	Origins OriginPolicy
}

// Refusal is why a Guard refused a request: the header (Host or Origin)
// and its value. Its Error is the 403's text.
type Refusal struct {
	Header, Value string
}

func (e *Refusal) Error() string {
	if e.Header == "Host" {
		return "Forbidden: invalid Host header " + strconv.Quote(e.Value)
	}
	return "Forbidden: Origin " + strconv.Quote(e.Value) + " is not allowed"
}

// Check returns nil when r may be served, else the *Refusal.
func (g Guard) Check(r *http.Request) *Refusal {
	if !HostAllowed(r, g.Hosts) {
		return &Refusal{Header: "Host", Value: r.Host}
	}
	if ok, o := g.Origins.Allows(r); !ok {
		return &Refusal{Header: "Origin", Value: o}
	}
	return nil
}

// Wrap returns next behind the guard: a refused request gets 403 with the
// Refusal's text (text/plain) and never reaches next.
func (g Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e := g.Check(r); e != nil {
			http.Error(w, e.Error(), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
