package probe

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// requestCases checks the error cases of POST (and PUT) in the probe's era.
func (p *prober) requestCases(ctx context.Context) {
	// On the legacy session when there is one, else in 2026-07-28.
	modern := p.useModern
	p.useModern = !p.legacy
	defer func() { p.useModern = modern }()
	if p.legacy {
		p.sessionCases(ctx)
	}
	q := p.harmless()
	q.body = `{"jsonrpc":"2.0","id":`
	a := p.send(ctx, q)
	p.check("malformed JSON", "400 (an error status)", specBadInput, a, a.status >= 400 && a.status < 500, "")
	a = p.send(ctx, p.harmless().with("Accept", "text/html"))
	p.check("Accept without application/json and text/event-stream", "400 or 406", specAccept, a, a.status == 400 || a.status == 406, "")
	a = p.send(ctx, p.harmless().with("Content-Type", "text/plain"))
	switch {
	case a.status == http.StatusUnsupportedMediaType:
		p.check("wrong Content-Type (text/plain)", "415", specContentType, a, true, "")
	case a.status >= 400 && a.status < 500:
		p.check("wrong Content-Type (text/plain)", "415", specContentType, a, true, fmt.Sprintf("HTTP %d: an error status, as the MCP spec asks; 415 is the precise one", a.status))
	default:
		p.check("wrong Content-Type (text/plain)", "415", specContentType, a, false, a.describe()+": a text/plain body was accepted")
	}
	a = p.send(ctx, p.harmless().with("Origin", probeOrigin))
	detail := ""
	if a.status != http.StatusForbidden {
		detail = a.describe() + " to Origin " + probeOrigin
	}
	p.check("foreign Origin (DNS rebinding)", "403", specOrigin, a, a.status == http.StatusForbidden, detail)
	p.hostCases(ctx)
	if p.legacy {
		p.pingCase(ctx)
	}
	put := p.harmless()
	put.method = http.MethodPut
	a = p.send(ctx, put)
	switch allow := a.hdr.Get("Allow"); {
	case a.status != http.StatusMethodNotAllowed:
		detail = a.describe()
	case allow != "":
		detail = "Allow: " + allow
	default:
		detail = "no Allow header (RFC 9110 §15.5.6 requires one)"
	}
	p.check("PUT on the endpoint", "405 with Allow", specMethods, a, a.status == http.StatusMethodNotAllowed, detail)
}

// authCase reports the 401 challenge, when the server answered 401. The
// challenge is shown (it names the resource metadata); the Authorization
// header sent never is.
func (p *prober) authCase() {
	a := p.unauthorized
	if a == nil {
		return
	}
	const name, want = "401 carries a WWW-Authenticate challenge", "WWW-Authenticate (resource_metadata)"
	ch := a.hdr.Get("WWW-Authenticate")
	var detail string
	switch {
	case ch == "":
		detail = "401 to " + p.unauthWhat + " without WWW-Authenticate"
	case !strings.Contains(strings.ToLower(ch), "resource_metadata="):
		detail = "401 to " + p.unauthWhat + ": WWW-Authenticate: " + clip(ch, 200) + " (no resource_metadata: the metadata must then be at /.well-known/oauth-protected-resource)"
	default:
		detail = "401 to " + p.unauthWhat + ": WWW-Authenticate: " + clip(ch, 200)
	}
	p.check(name, want, spec401, *a, ch != "", detail)
}
