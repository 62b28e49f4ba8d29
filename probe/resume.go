package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/netutil"
)

// resumeCases checks resumability: a stream the server closed before its
// response (SSE polling), and a finished stream, with Last-Event-ID.
func (p *prober) resumeCases(ctx context.Context) {
	const (
		retryName  = "retry hint before the server closes a stream"
		pollName   = "resume a stream the server closed (SSE polling)"
		finishName = "resume with Last-Event-ID (exact replay)"
		retryWant  = "a retry field before the close"
		pollWant   = "the rest of the stream, then its end"
		finishWant = "the later events exactly, then the end"
	)
	const noResume = "2026-07-28 has no resumption (\"Resumable SSE streams via Last-Event-ID are not supported\")"
	if p.modernIDs {
		p.r.Notes = append(p.r.Notes, "2026-07-28 SSE answer carried event ids, which no client can use")
	}
	if !p.legacy {
		p.r.Resumable = "no: " + noResume
		p.na(retryName, retryWant, specRetry, noResume)
		p.na(pollName, pollWant, specPoll, noResume)
		p.na(finishName, finishWant, specResume, noResume)
		return
	}
	// Resumption is a legacy feature: it is checked in the legacy session,
	// on a server that speaks 2026-07-28 too.
	defer p.inEra(false)()
	if p.dual {
		defer func() { p.r.Resumable += ", in " + p.proto + " (2026-07-28 has no resumption)" }()
	}
	noStream := "no streaming answer: " + p.streamRec.Why
	if p.stream == nil {
		p.r.Resumable = "not checked: " + p.streamRec.Why
		if p.getIDs == nil {
			p.na(retryName, retryWant, specRetry, noStream)
			p.na(pollName, pollWant, specPoll, noStream)
			p.na(finishName, finishWant, specResume, noStream)
			return
		}
	}

	// SSE polling: make the tool close its stream (--close-args, or the
	// reference progress tool's close_after).
	if args := p.closeArgs(); p.closed == nil && p.stream != nil && args != "" && p.stream.sse && len(p.stream.ids()) > 0 {
		q := p.toolCall(args, probePollToken)
		a := p.send(ctx, q)
		p.note(&a, true)
		if a.sse && a.ended && a.response == nil {
			p.closed, p.closedBy, p.closedID, p.closedTk = &a, p.tool.name+args, q.id, probePollToken
		}
	}
	switch {
	case p.closed != nil:
		p.pollCases(ctx)
	case p.stream == nil:
		p.na(retryName, retryWant, specRetry, noStream)
		p.na(pollName, pollWant, specPoll, noStream)
	case !p.stream.sse:
		why := "the tool call was answered as " + mediaType(p.stream.ct) + ": no stream to close"
		p.na(retryName, retryWant, specRetry, why)
		p.na(pollName, pollWant, specPoll, why)
	case len(p.stream.ids()) == 0:
		why := "no event ids: a stream closed early could not be resumed"
		p.na(retryName, retryWant, specRetry, why)
		p.na(pollName, pollWant, specPoll, why)
	default:
		why := "the server did not close a stream early; the probe can make only a progress tool with close_after do so, or the tool named by --stream-tool with --close-args"
		if args := p.closeArgs(); args != "" {
			why = "the server did not close the stream of " + p.tool.name + args + " before its response"
		}
		p.na(retryName, retryWant, specRetry, why)
		p.na(pollName, pollWant, specPoll, why)
	}
	p.finishedCase(ctx, finishName, finishWant)
}

// pollCases checks the retry hint of a stream the server closed before its
// response, resumes it from its last event id, and checks the rest came.
func (p *prober) pollCases(ctx context.Context) {
	c := p.closed
	p.retryHintCase(c)
	const name, want = "resume a stream the server closed (SSE polling)", "the rest of the stream, then its end"
	ids := c.ids()
	if len(ids) == 0 {
		p.add(Case{Case: name, Expected: want, Spec: specPoll, Result: Differs,
			Detail: "the server closed the stream before any event id: it cannot be resumed (the response is lost)"})
		return
	}
	from := ids[len(ids)-1].ID
	pl, ok := p.pollToEnd(ctx, ids, name, want)
	if !ok {
		return
	}
	a := pl.last
	if len(pl.problems) > 0 {
		p.check(name, want, specPoll, a, false, fmt.Sprintf("resumed from %s: %s", from, strings.Join(pl.problems, "; ")))
		return
	}
	polls := ""
	if pl.resumes > 1 {
		polls = fmt.Sprintf(" (%d resumes: the server closed the stream again)", pl.resumes)
	}
	p.check(name, want, specPoll, a, true, fmt.Sprintf("resumed from %s: %s more, the response, then the end%s", from, plural(len(pl.rest), "event"), polls))
	if c == p.stream {
		// The streaming answer is now whole: its events span the connections.
		joined := *c
		joined.events = append(slices.Clone(c.events), pl.rest...)
		joined.response = a.response
		p.stream = &joined
		p.polled = true
	}
}

// retryHintCase checks that a stream the server closed carried a retry
// field before the close.
func (p *prober) retryHintCase(c *answer) {
	hint := -1
	for _, e := range c.events {
		if e.Retry >= 0 {
			hint = e.Retry
		}
	}
	detail := fmt.Sprintf("%s: closed after %d events", p.closedBy, len(c.events))
	if hint >= 0 {
		detail = fmt.Sprintf("%s: retry %d ms, then closed after %d events", p.closedBy, hint, len(c.events))
	}
	p.add(Case{Case: "retry hint before the server closes a stream", Expected: "a retry field before the close", Spec: specRetry,
		Result: result(hint >= 0), Detail: detail})
}

// polling is what resuming a closed stream until its end brought.
type polling struct {
	last     answer     // the last resume's answer
	rest     []sseEvent // the events of all the resumes
	problems []string   // what was wrong: repeated or foreign events, no response, no end
	resumes  int
}

// pollToEnd resumes the closed stream, whose events with ids are ids, from
// its last event id until the response, a stream left open, one that
// cannot go on, or probeMaxPolls resumes: a server may close the resumed
// stream again. ok is false when a resume was refused; the case (name,
// want) is then added.
func (p *prober) pollToEnd(ctx context.Context, ids []sseEvent, name, want string) (pl polling, ok bool) {
	seen := map[string]bool{}
	for _, e := range ids {
		seen[e.ID] = true
	}
	last := ids[len(ids)-1].ID
	a := &pl.last
	for pl.resumes < probeMaxPolls {
		pl.resumes++
		*a = p.send(ctx, req{method: http.MethodGet, h: p.resumeH(last), id: p.closedID})
		p.note(a, false)
		if a.status != http.StatusOK || !a.sse {
			p.check(name, want, specPoll, *a, false, fmt.Sprintf("GET with Last-Event-ID %s: %s", last, a.describe()))
			return pl, false
		}
		for _, e := range a.events {
			if e.HasID && seen[e.ID] {
				pl.problems = append(pl.problems, "event "+e.ID+" again")
			}
			if e.HasID {
				seen[e.ID] = true
				last = e.ID
			}
			if other := foreign(e.Data, p.closedID, p.closedTk); other != "" {
				pl.problems = append(pl.problems, fmt.Sprintf("event %s: %s", cmp.Or(e.ID, "without id"), other))
			}
		}
		pl.rest = append(pl.rest, a.events...)
		if a.response != nil || !a.ended || len(a.ids()) == 0 {
			break // the end, a stream left open, or one that cannot go on
		}
	}
	switch {
	case a.response == nil && a.ended:
		pl.problems = append(pl.problems, fmt.Sprintf("no response after %d resumes", pl.resumes))
	case a.response == nil:
		pl.problems = append(pl.problems, "no response")
	case !a.ended:
		pl.problems = append(pl.problems, fmt.Sprintf("the stream stayed open %v after the response", probeGrace))
	}
	return pl, true
}

// foreign says what in an event's data belongs to another request than the
// one with id and progress token ("" when nothing does).
func foreign(data string, id int64, token string) string {
	if data == "" {
		return ""
	}
	m, err := jsonrpc.Parse([]byte(data))
	if err != nil {
		return ""
	}
	switch {
	case m.Kind == jsonrpc.KindResponse && !jsonrpc.IDEqual(m.ID, id):
		return "the response to request " + string(m.ID)
	case string(m.Method) == "notifications/progress":
		var tk string
		if json.Unmarshal(jsonrpc.Field(m.Params, "progressToken"), &tk) == nil && tk != token {
			return "progress of another request (token " + strconv.Quote(tk) + ")"
		}
	}
	return ""
}

// resumeH returns the headers of a resuming GET.
func (p *prober) resumeH(lastID string) map[string]string {
	m := map[string]string{"Accept": "text/event-stream", driver.HeaderProtocolVersion: p.proto, driver.HeaderLastEventID: lastID}
	if p.sid != "" {
		m[driver.HeaderSessionID] = p.sid
	}
	return m
}

// finishedCase resumes a finished stream from its first event id and checks
// the replay: exactly the later events (ids and data, in order), then the
// end. Without a finished POST stream it resumes the GET stream instead,
// which stays open after its replay.
func (p *prober) finishedCase(ctx context.Context, name, want string) {
	var src *answer
	kind := "a finished stream"
	switch {
	case p.stream != nil && p.stream.sse && p.stream.response != nil && len(p.stream.ids()) >= 2:
		src = p.stream
	case p.getIDs != nil && len(p.getIDs.ids()) >= 2:
		src, kind = p.getIDs, "the GET stream"
	}
	if src == nil {
		why, sum := p.unresumable()
		p.r.Resumable = sum
		p.na(name, want, specResume, why)
		return
	}
	ids := src.ids()
	from := ids[0].ID
	var later []sseEvent
	past := false
	for _, e := range src.events {
		if past && e.Data != "" {
			later = append(later, e)
		}
		if e.HasID && e.ID == from {
			past = true
		}
	}
	var a answer
	for attempt := range 3 {
		// A GET stream the probe just closed may still be attached on the
		// server's side for a moment: 409 then, so try again shortly.
		a = p.send(ctx, req{method: http.MethodGet, h: p.resumeH(from), window: probeResumeWait})
		if a.status != http.StatusConflict || src != p.getIDs {
			break
		}
		if netutil.SleepCtx(ctx, time.Duration(100<<attempt)*time.Millisecond) != nil {
			break
		}
	}
	p.note(&a, false)
	if a.status != http.StatusOK || !a.sse {
		detail := fmt.Sprintf("%s sent event ids, but GET with Last-Event-ID %s answered %s", kind, from, a.describe())
		if a.status == http.StatusNotFound && p.sid != "" {
			detail += " (404 tells the client its session is gone)"
		}
		p.r.Resumable = "no: " + detail
		p.check(name, want, specResume, a, false, detail)
		return
	}
	var got []sseEvent
	for _, e := range a.events {
		if e.Data != "" {
			got = append(got, e)
		}
	}
	diff := replayDiff(later, got, src == p.getIDs)
	if diff == "" && src != p.getIDs && !a.ended {
		diff = fmt.Sprintf("the replay did not end the stream (open after %v)", probeResumeWait)
	}
	if diff != "" {
		detail := fmt.Sprintf("%s resumed from %s: %s", kind, from, diff)
		p.r.Resumable = "no: " + detail
		p.check(name, want, specResume, a, false, detail)
		return
	}
	detail := fmt.Sprintf("%s resumed from %s: %s replayed exactly, then the end", kind, from, plural(len(later), "event"))
	if src == p.getIDs {
		detail = fmt.Sprintf("%s resumed from %s: %s replayed exactly (a GET stream stays open)", kind, from, plural(len(later), "event"))
	}
	if p.polled {
		detail += "; the stream spanned a server close"
	}
	p.r.Resumable = "yes: " + detail
	p.check(name, want, specResume, a, true, detail)
}

// unresumable says why no resume could be checked, and the summary.
func (p *prober) unresumable() (why, summary string) {
	s := p.stream
	switch {
	case s == nil:
		return "no streaming answer: " + p.streamRec.Why, "not checked: " + p.streamRec.Why
	case !s.sse && p.getIDs == nil:
		why = "the tool call was answered as " + mediaType(s.ct) + " and the GET stream carried no event ids"
		if !p.r.EventIDs {
			return why, "not resumable (no event ids)"
		}
		return why, "not checked: " + why
	case len(s.ids()) == 0:
		return "no event ids on the streaming answer", "not resumable (no event ids)"
	case len(s.ids()) < 2:
		return "the streaming answer carried one event id: nothing to replay after it", "not checked: one event id only"
	}
	return "the streaming answer did not finish (no response)", "not checked: the stream did not finish"
}

// replayDiff compares a replay with the events it should repeat (messages
// only: priming and close events carry no data). open allows more events
// after them (a live GET stream). It returns "" when they match.
func replayDiff(want, got []sseEvent, open bool) string {
	var problems []string
	n := min(len(want), len(got))
	for i := range n {
		w, g := want[i], got[i]
		switch {
		case w.HasID && (!g.HasID || g.ID != w.ID):
			problems = append(problems, fmt.Sprintf("event %d has id %q, want %q", i+1, g.ID, w.ID))
		case g.Data != w.Data:
			problems = append(problems, fmt.Sprintf("event %s: data differs", cmp.Or(w.ID, strconv.Itoa(i+1))))
		}
		if len(problems) >= 3 {
			break
		}
	}
	switch {
	case len(got) < len(want):
		problems = append(problems, fmt.Sprintf("%d of %d events missing (from %s)", len(want)-len(got), len(want), cmp.Or(want[len(got)].ID, "event "+strconv.Itoa(len(got)+1))))
	case len(got) > len(want) && !open:
		problems = append(problems, fmt.Sprintf("%s more than the stream had (first: id %q)", plural(len(got)-len(want), "event"), got[len(want)].ID))
	}
	return strings.Join(problems, "; ")
}

// closeArgs returns the arguments of the call that makes the stream tool
// close its stream early: --close-args, or for a progress tool that takes
// close_after, close_after (and retry_ms when it takes it); "" when none.
// Closing after the last progress leaves only the response to resume.
func (p *prober) closeArgs() string {
	switch {
	case p.opts.CloseArgs != "":
		return p.opts.CloseArgs
	case !p.tool.ref || !p.tool.canClose:
		return ""
	case p.tool.retryMS:
		return `{"count":2,"close_after":2,"retry_ms":250}`
	}
	return `{"count":2,"close_after":2}`
}
