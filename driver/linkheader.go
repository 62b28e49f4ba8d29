package driver

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Stream links (SEP-1335, a draft the 2025-11-25 specification did not
// adopt: it chose priming events instead). A server that starts an SSE
// stream may send
//
//	Link: </mcp/streams/abc>; rel="stream"
//
// naming a same-origin URL where the stream is resumed: the client GETs
// that URL, with Last-Event-ID when it has one, instead of the MCP
// endpoint — so a stream cut before its first event can be resumed too.
// The header is parsed once per stream response, only when present; a
// cross-origin link is refused (never followed) and counted.

// errLinkSyntax is returned by parseLinks for a Link field value that does
// not follow RFC 8288 §3.
var errLinkSyntax = errors.New("malformed Link header")

// linkValue is one link-value of a Link header (RFC 8288 §3): its target
// as written (a URI-Reference, unresolved) and its rel parameter ("" when
// none; the first occurrence when repeated, §3.3).
type linkValue struct {
	Target string
	Rel    string
}

// parseLinks parses Link header field values (RFC 8288 §3: a comma
// separated list of `<URI-Reference> *( ";" link-param )`, link-param
// `token [ "=" ( token / quoted-string ) ]`, quoted-pairs unescaped) and
// calls yield for each link-value until yield returns false. It returns
// errLinkSyntax at the first malformed link-value (those before it have
// been yielded). Parameters other than rel are skipped; rel* (RFC 8187)
// is not decoded.
func parseLinks(values []string, yield func(linkValue) bool) error {
	for _, v := range values {
		p := linkParser{s: v}
		for {
			p.skipOWS()
			if p.i == len(p.s) {
				break
			}
			if p.s[p.i] == ',' { // empty list elements are allowed (RFC 9110 §5.6.1)
				p.i++
				continue
			}
			lv, err := p.link()
			if err != nil {
				return err
			}
			if !yield(lv) {
				return nil
			}
		}
	}
	return nil
}

type linkParser struct {
	s string
	i int
}

func (p *linkParser) skipOWS() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// link parses one link-value and the comma after it, if any.
func (p *linkParser) link() (linkValue, error) {
	var lv linkValue
	if p.s[p.i] != '<' {
		return lv, errLinkSyntax
	}
	end := strings.IndexByte(p.s[p.i+1:], '>')
	if end < 0 {
		return lv, errLinkSyntax
	}
	lv.Target = strings.TrimSpace(p.s[p.i+1 : p.i+1+end])
	if strings.IndexByte(lv.Target, '<') >= 0 { // not in a URI-Reference (RFC 3986)
		return lv, errLinkSyntax
	}
	p.i += end + 2
	relSeen := false
	for {
		p.skipOWS()
		if p.i == len(p.s) {
			return lv, nil
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			return lv, nil
		case ';':
			p.i++
		default:
			return lv, errLinkSyntax
		}
		p.skipOWS()
		name := p.token()
		if name == "" {
			if p.i == len(p.s) || p.s[p.i] == ',' || p.s[p.i] == ';' {
				continue // an empty parameter (a trailing ";") is tolerated
			}
			return lv, errLinkSyntax
		}
		p.skipOWS()
		val := ""
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			p.skipOWS()
			var err error
			if val, err = p.value(); err != nil {
				return lv, err
			}
		}
		if strings.EqualFold(name, "rel") && !relSeen {
			relSeen = true
			lv.Rel = val
		}
	}
}

// token reads an RFC 9110 token ("" when none).
func (p *linkParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// value reads a token or a quoted-string (unescaped).
func (p *linkParser) value() (string, error) {
	if p.i < len(p.s) && p.s[p.i] == '"' {
		p.i++
		var b strings.Builder
		for p.i < len(p.s) {
			c := p.s[p.i]
			p.i++
			switch c {
			case '"':
				return b.String(), nil
			case '\\':
				if p.i == len(p.s) {
					return "", errLinkSyntax
				}
				b.WriteByte(p.s[p.i])
				p.i++
			default:
				b.WriteByte(c)
			}
		}
		return "", errLinkSyntax // unterminated
	}
	if t := p.token(); t != "" {
		return t, nil
	}
	return "", errLinkSyntax
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// hasRel reports whether the space-separated relation types of rel include
// want (case-insensitive, RFC 8288 §2.1.1).
func hasRel(rel, want string) bool {
	for _, r := range strings.Fields(rel) {
		if strings.EqualFold(r, want) {
			return true
		}
	}
	return false
}

// streamLink finds a stream response's rel="stream" link (SEP-1335) and
// resolves it against base, the URL of the request it answers. It returns
// nil when there is none; refused reports a link that was not followed: to
// another origin (scheme, host or port), or not parseable.
func streamLink(h http.Header, base *url.URL) (target *url.URL, refused bool) {
	values := h["Link"]
	if len(values) == 0 {
		return nil, false
	}
	var raw string
	found := false
	// A malformed header: the link-values before the fault count, the rest
	// are ignored (nothing to follow).
	_ = parseLinks(values, func(lv linkValue) bool {
		if hasRel(lv.Rel, "stream") {
			raw, found = lv.Target, true
			return false
		}
		return true
	})
	if !found {
		return nil, false
	}
	u, perr := base.Parse(raw)
	if perr != nil || !sameOrigin(base, u) {
		return nil, true
	}
	u.Fragment, u.RawFragment = "", ""
	return u, false
}

// sameOrigin compares scheme, host and port (a default port written out
// matches it left out).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && originPort(a) == originPort(b)
}

func originPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}
