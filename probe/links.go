package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
)

// specStreamLink cites SEP-1335 (a draft; the 2025-11-25 specification
// adopted priming events instead).
const specStreamLink = `SEP-1335 (draft) rel="stream" URL: "When a server starts an SSE stream, it MAY send an HTTP Link header that includes a rel="stream" URL ... the URL MUST be same-origin"; "the client MUST send a GET request to the rel="stream" URL"; "the server MUST respect the Last-Event-ID header"`

// streamLinkCase says whether the server sends a rel="stream" link on its
// streaming answer (SEP-1335) and, when it does, whether a GET there with
// the stream's first event id replays the later events exactly, then ends.
// A server without links passes: the link is optional.
func (p *prober) streamLinkCase(ctx context.Context) {
	const (
		name = `rel="stream" resume URL (SEP-1335 draft)`
		want = `optional; same origin, exact replay`
	)
	s := p.stream
	switch {
	case !p.legacy:
		p.na(name, want, specStreamLink, "2026-07-28 has no resumption")
		return
	case s == nil || !s.sse:
		p.na(name, want, specStreamLink, "no streaming answer to carry a link")
		return
	}
	defer p.inEra(false)()
	base, err := url.Parse(p.u)
	if err != nil {
		p.na(name, want, specStreamLink, "the server URL does not parse")
		return
	}
	link, refused := driver.StreamLink(s.hdr, base)
	switch {
	case refused:
		p.check(name, want, specStreamLink, *s, false, "the link names another origin: "+strings.Join(s.hdr["Link"], ", ")+" (a load tool refuses it)")
		return
	case link == nil:
		p.check(name, want, specStreamLink, *s, true, "not sent (the server relies on priming events and the MCP endpoint to resume)")
		return
	}
	ids := s.ids()
	if s.response == nil || len(ids) < 2 {
		p.na(name, want, specStreamLink, "sent ("+link.String()+"), but the streaming answer did not finish with two event ids: no replay to check")
		return
	}
	from := ids[0].ID
	var later []sseEvent
	past := false
	for _, e := range s.events {
		if past && e.Data != "" {
			later = append(later, e)
		}
		if e.HasID && e.ID == from {
			past = true
		}
	}
	// p.do sends to p.u: point it at the link for this one request.
	endpoint := p.u
	p.u = link.String()
	a := p.send(ctx, req{method: http.MethodGet, h: p.resumeH(from), window: probeResumeWait})
	p.u = endpoint
	p.note(&a, false)
	if a.status != http.StatusOK || !a.sse {
		p.check(name, want, specStreamLink, a, false, fmt.Sprintf("sent (%s), but GET there with Last-Event-ID %s answered %s", link, from, a.describe()))
		return
	}
	var got []sseEvent
	for _, e := range a.events {
		if e.Data != "" {
			got = append(got, e)
		}
	}
	diff := replayDiff(later, got, false)
	if diff == "" && !a.ended {
		diff = fmt.Sprintf("the replay did not end the stream (open after %v)", probeResumeWait)
	}
	if diff != "" {
		p.check(name, want, specStreamLink, a, false, fmt.Sprintf("sent (%s); resumed there from %s: %s", link, from, diff))
		return
	}
	p.check(name, want, specStreamLink, a, true, fmt.Sprintf("sent (%s); resumed there from %s: %s replayed exactly, then the end", link, from, plural(len(later), "event")))
}
