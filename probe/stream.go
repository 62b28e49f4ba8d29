package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// probeTool is the tool the streaming call uses.
type probeTool struct {
	name      string
	ref       bool // the reference server's progress tool
	canClose  bool // it takes close_after
	retryMS   bool // and retry_ms
	interval  bool // and interval_ms
	schema    json.RawMessage
	available int // tools listed
}

// pickTool chooses the tool to call from a tools/list result: the one
// named (--stream-tool), else the reference server's progress tool, else a
// read-only tool without required arguments. Nothing else is ever called: a
// probe must not change state. A named tool not listed gets nil.
func pickTool(result []byte, named string) *probeTool {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return nil
	}

	type schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	var readOnly *probeTool
	for _, t := range res.Tools {
		var s schema
		json.Unmarshal(t.InputSchema, &s)
		if named != "" {
			if t.Name == named {
				return &probeTool{name: t.Name, schema: t.InputSchema, available: len(res.Tools)}
			}
			continue
		}
		if t.Name == "progress" && s.Properties["count"] != nil {
			_, ca := s.Properties["close_after"]
			_, rm := s.Properties["retry_ms"]
			_, iv := s.Properties["interval_ms"]
			return &probeTool{name: t.Name, ref: true, canClose: ca, retryMS: rm, interval: iv, schema: t.InputSchema, available: len(res.Tools)}
		}
		if readOnly == nil && t.Annotations.ReadOnly && len(s.Required) == 0 {
			readOnly = &probeTool{name: t.Name, schema: t.InputSchema}
		}
	}
	if named != "" {
		return nil
	}
	if readOnly != nil {
		readOnly.available = len(res.Tools)
		return readOnly
	}
	return &probeTool{available: len(res.Tools)}
}

// toolCall builds a tools/call with a progressToken.
func (p *prober) toolCall(args, token string) req {
	params := `{"name":` + strconv.Quote(p.tool.name) + `,"arguments":` + args + `}`
	q := p.call("tools/call", params, `"progressToken":`+strconv.Quote(token))
	if p.useModern {
		if hs, err := driver.ParamHeaders(p.tool.schema, []byte(args)); err == nil {
			for _, h := range hs {
				q.h[h[0]] = h[1]
			}
		}
	}
	return q
}

// streaming lists the tools, calls one with a progressToken to get a
// streaming answer, and records what the answer shows. On a server that
// speaks both eras it calls the tool again in the legacy session, whose
// answer the resume checks then use.
func (p *prober) streaming(ctx context.Context) {
	st := &p.r.Streaming
	st.Era = p.era()
	p.streamRec = st
	a := p.send(ctx, p.call("tools/list", "", ""))
	p.note(&a, true)
	if p.useModern && a.status == http.StatusOK {
		p.r.Discover.AnswerAs = "json"
		if a.sse {
			p.r.Discover.AnswerAs = "sse"
		}
	}
	m, ok := a.message()
	if !ok || m.Result == nil {
		st.Why = "tools/list: " + a.describe() + " without a result"
		return
	}
	p.tool = pickTool(m.Result, p.opts.StreamTool)
	if p.tool == nil && p.opts.StreamTool != "" {
		st.Why = "not run: no tool named " + strconv.Quote(p.opts.StreamTool) + " (--stream-tool); the server lists " + toolNames(m.Result)
		return
	}
	if p.tool == nil || p.tool.name == "" {
		n := 0
		if p.tool != nil {
			n = p.tool.available
		}
		p.tool = nil
		st.Why = fmt.Sprintf("could not trigger a streaming answer: of %d tools listed, none is the reference progress tool or read-only (annotations.readOnlyHint) without required arguments, and the probe calls no other", n)
		return
	}
	st.Tool = p.tool.name
	st.Args = "{}"
	switch {
	case p.opts.StreamArgs != "":
		st.Args = p.opts.StreamArgs
	case p.tool.ref:
		st.Args = `{"count":3}`
	}
	p.streamCall(ctx, st)
	if p.dual && p.useModern {
		defer p.inEra(false)()
		ls := &Stream{Tool: st.Tool, Args: st.Args, Era: p.proto, RetryHints: []int{}}
		p.r.LegacyStreaming = ls
		p.streamCall(ctx, ls)
	}
}

// streamCall calls the chosen tool in the probe's era, records the answer
// in st, and keeps it for the resume checks.
func (p *prober) streamCall(ctx context.Context, st *Stream) {
	p.stream, p.closed, p.streamRec = nil, nil, st
	q := p.toolCall(st.Args, probeToken)
	a := p.send(ctx, q)
	p.note(&a, true)
	st.Status = a.status
	switch {
	case a.status != http.StatusOK:
		st.Why = "tools/call " + p.tool.name + ": " + a.describe()
		return
	case a.sse:
		st.AnsweredAs = "sse"
	case isJSON(a.ct):
		st.AnsweredAs = "json"
	}
	st.Events = len(a.events)
	for i, e := range a.events {
		if e.HasID {
			st.EventIDs = true
			if i == 0 && e.Data == "" {
				st.Priming = true
			}
		}
		if e.Retry >= 0 {
			st.RetryHints = append(st.RetryHints, e.Retry)
		}
		if m, err := jsonrpc.Parse([]byte(e.Data)); err == nil && string(m.Method) == "notifications/progress" {
			st.Progress++
		}
	}
	st.Response, st.Ended = a.response != nil, a.ended
	p.modernIDs = p.modernIDs || (p.useModern && st.EventIDs)
	p.stream = &a
	if a.sse && a.ended && a.response == nil {
		p.closed, p.closedBy, p.closedID, p.closedTk = &a, "the streaming call", q.id, probeToken
	}
	p.terminateCase(&a)
}

// terminateCase checks that an SSE answer ends after its response.
func (p *prober) terminateCase(a *answer) {
	const name, want = "SSE answer ends after its response", "end of stream after the response"
	switch {
	case !a.sse:
		p.na(name, want, specTerminate, "the tool call was answered as "+cmp.Or(mediaType(a.ct), "-")+", not SSE")
	case a.response == nil && a.ended:
		p.na(name, want, specTerminate, "the server closed the stream before the response (SSE polling; checked below)")
	case a.response == nil:
		p.check(name, want, specTerminate, *a, false, fmt.Sprintf("no response within %v (%d events)", probeTimeout, len(a.events)))
	case !a.ended:
		p.check(name, want, specTerminate, *a, false, fmt.Sprintf("the stream stayed open %v after the response", probeGrace))
	default:
		p.check(name, want, specTerminate, *a, true, "")
	}
}

// toolNames lists the names of a tools/list result, for a message:
// "echo, progress" or "no tools".
func toolNames(result []byte) string {
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(result, &res)
	if len(res.Tools) == 0 {
		return "no tools"
	}
	names := make([]string, 0, len(res.Tools))
	for _, t := range res.Tools {
		names = append(names, strconv.Quote(t.Name))
	}
	return clip(strings.Join(names, ", "), 300)
}

// crossTalk runs the concurrent-calls check, in the legacy session when
// there is one (its streams share a session), else in 2026-07-28.
func (p *prober) crossTalk(ctx context.Context) {
	defer p.inEra(!p.legacy)()
	switch {
	case p.tool == nil:
		p.na(crossTalkName, crossTalkWant, specCrossTalk, "no streaming answer: "+p.streamRec.Why)
		return
	case !p.tool.ref && p.opts.StreamTool == "":
		p.na(crossTalkName, crossTalkWant, specCrossTalk, "needs a tool that sends progress: the reference progress tool, or the one --stream-tool names ("+p.tool.name+" is only read-only)")
		return
	case p.stream == nil || !p.stream.sse:
		p.na(crossTalkName, crossTalkWant, specCrossTalk, "the streaming call was not answered as SSE: no stream to share")
		return
	}
	args := p.r.Streaming.Args
	if p.opts.StreamArgs == "" && p.tool.ref && p.tool.interval {
		args = `{"count":3,"interval_ms":20}` // spread over time, so the calls overlap
	}
	p.concurrentCase(ctx, args)
}
