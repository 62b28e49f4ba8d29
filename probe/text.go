package probe

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes r as `mcpbench probe --format json` prints it: the
// report's JSON (see Report's field tags), indented by two spaces, and a
// newline. It returns the marshalling or the writer's error.
func WriteJSON(w io.Writer, r *Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteText writes r as `mcpbench probe` prints it: the URL and request
// count; a line per era (2026-07-28, then each legacy initialize); unless
// r is not an MCP endpoint, the summary lines (sessions, answers,
// streaming, event ids, priming, retry hints, resumable, GET stream, auto
// picks) and notes; then a row per check (case, protocol, HTTP status,
// JSON-RPC code, expected, result: ok, DIFFERS or n/a) followed by what was
// got, seen or why it does not apply, and the sentence of the spec it
// cites; last, how many checks differ. The text is built whole, then
// written in one Write; it returns the writer's error.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	yes := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(&b, "mcpbench probe %s (%d requests)\n\n", r.URL, r.Requests)
	if r.Discover.Modern {
		fmt.Fprintf(&b, "2026-07-28 (stateless)   yes: server/discover lists %s; answers as %s; subscriptions/listen %s\n",
			strings.Join(r.Discover.Versions, ", "), cmp.Or(r.Discover.AnswerAs, "-"), cmp.Or(r.Discover.Listen, "-"))
	} else {
		fmt.Fprintf(&b, "2026-07-28 (stateless)   no: %s\n", r.Discover.Error)
	}
	for _, l := range r.Legacy {
		if l.Error != "" {
			fmt.Fprintf(&b, "initialize %-13s no: %s\n", l.Requested, l.Error)
			continue
		}
		fmt.Fprintf(&b, "initialize %-13s yes: negotiated %s, Mcp-Session-Id %s\n", l.Requested, l.Negotiated, yes(l.SessionID))
	}
	if !r.MCPEndpoint {
		for _, c := range r.Cases {
			writeCase(&b, c)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	priming := yes(r.Priming)
	if r.Priming && !strings.HasPrefix(r.Resumable, "yes") {
		priming += ", but " + r.Resumable
	}
	streaming := streamingLine(&r.Streaming)
	if r.LegacyStreaming != nil {
		streaming += "\n             " + streamingLine(r.LegacyStreaming)
	}
	fmt.Fprintf(&b, "\nsessions     %s\nanswers      %s\nstreaming    %s\nevent ids    %s\npriming      %s\nretry hints  %s\nresumable    %s\nGET stream   %s\nauto picks   %s\n",
		r.Sessions, r.Answers, streaming, yes(r.EventIDs), priming, hints(r.RetryHints), r.Resumable, r.GETStream, r.Recommended)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if v := legacyVersion(r); r.Discover.Modern && v != "" {
		fmt.Fprintf(&b, "note: the server speaks %s (%s) and 2026-07-28: the session checks ran in %s, the stateless ones in 2026-07-28 (the protocol column says which)\n", v, r.Sessions, v)
	}
	fmt.Fprintf(&b, "\n%-54s %-10s %6s %8s  %-40s %s\n", "check", "protocol", "status", "json-rpc", "expected", "result")
	for _, c := range r.Cases {
		writeCase(&b, c)
	}
	fmt.Fprintf(&b, "\n%d of %d checks differ from the spec", r.Differ, r.Checked)
	if na := len(r.Cases) - r.Checked; na > 0 {
		fmt.Fprintf(&b, " (%d did not apply)", na)
	}
	b.WriteString(".\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// legacyVersion is the version of the probe's legacy session: the first
// legacy version negotiated ("" when none was).
func legacyVersion(r *Report) string {
	for _, l := range r.Legacy {
		if l.Negotiated != "" {
			return l.Negotiated
		}
	}
	return ""
}

// writeCase prints one check: its row, what differed or why it does not
// apply, and the sentence it cites.
func writeCase(b *strings.Builder, c Case) {
	status, code := "-", ""
	if c.Status != 0 {
		status = fmt.Sprint(c.Status)
	}
	if c.RPCCode != 0 {
		code = fmt.Sprint(c.RPCCode)
	}
	mark := c.Result
	if c.Result == Differs {
		mark = "DIFFERS"
	}
	fmt.Fprintf(b, "%-54s %-10s %6s %8s  %-40s %s\n", c.Case, cmp.Or(c.Protocol, "-"), status, code, c.Expected, mark)
	if c.Detail != "" {
		label := "got"
		switch c.Result {
		case NA:
			label = "why"
		case OK:
			label = "saw"
		}
		fmt.Fprintf(b, "    %s: %s\n", label, c.Detail)
	}
	fmt.Fprintf(b, "    spec: %s\n", c.Spec)
}

// streamingLine sums up the streaming answer the probe triggered.
func streamingLine(s *Stream) string {
	if strings.HasPrefix(s.Why, "not run: ") {
		return s.Why
	}
	if s.Tool == "" || s.AnsweredAs == "" {
		return "not triggered: " + s.Why
	}
	head := fmt.Sprintf("tools/call %s%s (%s) with a progressToken: ", s.Tool, s.Args, s.Era)
	if s.AnsweredAs != "sse" {
		return head + "answered as application/json (no stream)"
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("SSE, %d events, %d progress", s.Events, s.Progress))
	if s.EventIDs {
		parts = append(parts, "event ids")
	} else {
		parts = append(parts, "no event ids")
	}
	if s.Priming {
		parts = append(parts, "priming event")
	}
	if len(s.RetryHints) > 0 {
		parts = append(parts, "retry "+hints(s.RetryHints))
	}
	switch {
	case s.Response && s.Ended:
		parts = append(parts, "response, then the end")
	case s.Response:
		parts = append(parts, "response, stream left open")
	case s.Ended:
		parts = append(parts, "closed before the response")
	default:
		parts = append(parts, "no response")
	}
	return head + strings.Join(parts, ", ")
}

// hints lists the retry hints a probe saw ("none seen" for none).
func hints(ms []int) string {
	if len(ms) == 0 {
		return "none seen"
	}
	parts := make([]string, len(ms))
	for i, v := range ms {
		parts[i] = fmt.Sprintf("%d ms", v)
	}
	return strings.Join(parts, ", ")
}
