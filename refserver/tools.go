package refserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of tool arguments.
const (
	// MaxPayloadBytes is the largest payload the payload tool returns:
	// 16 MiB less 4 KiB, so that its answer with the JSON-RPC envelope
	// and the SSE fields fits one event of mcpbench's default
	// max_event_bytes (16 MiB).
	MaxPayloadBytes = 16<<20 - 4<<10
	// MaxCount bounds the count arguments of progress and notify.
	MaxCount = 1_000_000
)

// Resource URIs.
const (
	SmallResourceURI = "mcpbench://static/small" // text, 100 bytes
	LargeResourceURI = "mcpbench://static/large" // text, 64 KiB
)

// Input request IDs and request state of the multi round-trip tools.
const (
	inputSample = "sample"
	inputElicit = "elicit"
	inputRoots  = "roots"
	inputAsk    = "confirm"
)

var (
	errStateless   = errors.New("needs a session that can receive server→client requests (modes stateful and json, or protocol 2026-07-28 through input_required)")
	errNoGETStream = errors.New("needs a session with a standalone GET stream (modes stateful and json)")
)

type echoIn struct {
	Text string `json:"text" jsonschema:"text to return"`
}

type slowIn struct {
	MS int `json:"ms" jsonschema:"how long to sleep, in milliseconds"`
}

type progressIn struct {
	Count      int `json:"count" jsonschema:"number of notifications/progress to send: progress 1..count, total count"`
	IntervalMS int `json:"interval_ms,omitempty" jsonschema:"pause between notifications, in milliseconds; 0 sends them back to back"`
	CloseAfter int `json:"close_after,omitempty" jsonschema:"close the SSE stream after every close_after notifications (SSE polling, SEP-1699); 0 never"`
	RetryMS    int `json:"retry_ms,omitempty" jsonschema:"retry hint of the close event, in milliseconds; 0 sends no close event"`
}

type sentOut struct {
	Sent int `json:"sent" jsonschema:"number of notifications/progress sent"`
}

type longIn struct {
	MS         int `json:"ms" jsonschema:"how long to run, in milliseconds"`
	IntervalMS int `json:"interval_ms,omitempty" jsonschema:"progress period, in milliseconds; 0 means 100"`
}

type payloadIn struct {
	Bytes int `json:"bytes" jsonschema:"size of the returned text, in bytes (at most 16 MiB)"`
}

type notifyIn struct {
	Count      int `json:"count" jsonschema:"number of numbered notifications to send on the standalone GET stream"`
	IntervalMS int `json:"interval_ms,omitempty" jsonschema:"pause between notifications, in milliseconds; 0 sends them back to back"`
}

type notifyOut struct {
	WillSend int `json:"will_send" jsonschema:"number of notifications that will be sent"`
}

type countIn struct {
	Key string `json:"key" jsonschema:"execution counter to increment"`
	MS  int    `json:"ms,omitempty" jsonschema:"how long to sleep after counting, in milliseconds"`
}

type countOut struct {
	Executions int64 `json:"executions" jsonschema:"times the key has started, when this execution ends"`
}

type sampleOut struct {
	Text string `json:"text" jsonschema:"text of the client's sampling result"`
}

type actionOut struct {
	Action string `json:"action" jsonschema:"action of the client's elicitation result"`
}

type rootsOut struct {
	Roots int `json:"roots" jsonschema:"number of roots the client listed"`
}

// addTool registers a typed tool whose executions count in Stats.ToolCalls.
func addTool[In, Out any](h *handler, name, description string, fn mcp.ToolHandlerFor[In, Out]) {
	mcp.AddTool(h.server, &mcp.Tool{Name: name, Description: description},
		func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
			h.toolCalls.Add(1)
			return fn(ctx, req, in)
		})
}

func (h *handler) addFeatures() {
	addTool(h, "echo", "Returns text.", h.echo)
	addTool(h, "slow", "Sleeps ms milliseconds, then returns \"slept <ms> ms\".", h.slow)
	addTool(h, "progress", "Sends count notifications/progress (progress 1..count, total count) interval_ms apart if the request has a progressToken; "+
		"in stateful mode closes the SSE stream with a retry hint after every close_after notifications (SSE polling). Result: {\"sent\": n}.", h.progress)
	addTool(h, "long", "Runs ms milliseconds, sending notifications/progress every interval_ms (total ms/interval_ms) if the request has a progressToken. Result: {\"sent\": n}.", h.long)
	addTool(h, "payload", "Returns a text of exactly bytes bytes (at most 16 MiB less 4 KiB: 16773120).", h.payload)
	addTool(h, "notify", "Sends count numbered notifications/message ({\"seq\": k, \"stream\": \"get\"}) on the session's standalone GET stream, interval_ms apart, and returns at once: {\"will_send\": count}.", h.notify)
	addTool(h, "sample", "Asks the client for a sampling/createMessage and returns its text.", h.sample)
	addTool(h, "elicit", "Asks the client for an elicitation/create and returns its action.", h.elicit)
	addTool(h, "roots", "Asks the client for roots/list and returns how many roots it has.", h.roots)
	addTool(h, "ask", "Returns input_required (one elicitation/create input request) and completes when the client retries with inputResponses; "+
		"legacy stateful clients are asked by the SDK with a server→client request.", h.ask)
	addTool(h, "count", "Counts one execution of key when it starts, sleeps ms milliseconds, and returns {\"executions\": n}: how many times key has started.", h.count)
	h.addMore()

	for _, r := range []struct {
		uri, name, text string
	}{
		{SmallResourceURI, "small", smallText},
		{LargeResourceURI, "large", largeText},
	} {
		h.server.AddResource(&mcp.Resource{
			URI:      r.uri,
			Name:     r.name,
			MIMEType: "text/plain",
			Size:     int64(len(r.text)),
		}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: r.uri, MIMEType: "text/plain", Text: r.text,
			}}}, nil
		})
	}

	h.server.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Description: "One user message greeting name.",
		Arguments:   []*mcp.PromptArgument{{Name: "name", Description: "who to greet", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name := req.Params.Arguments["name"]
		return &mcp.GetPromptResult{
			Description: "greeting",
			Messages: []*mcp.PromptMessage{{
				Role:    "user",
				Content: &mcp.TextContent{Text: "Hello, " + name + "!"},
			}},
		}, nil
	})
}

// Resource texts.
var (
	smallText = func() string {
		s := "mcpbench reference resource: small. "
		return (s + strings.Repeat(".", 100))[:100]
	}()
	largeText = strings.Repeat("mcpbench reference resource: large, 64 KiB of text.\n", 65536/52+1)[:65536]
)

// payloadText is built on first use: MaxPayloadBytes of printable ASCII that
// needs no JSON escaping; the payload tool returns prefixes of it.
var payloadText = sync.OnceValue(func() string {
	const pattern = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_"
	return strings.Repeat(pattern, MaxPayloadBytes/len(pattern))
})

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// sleep waits d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// sleepUntil waits until deadline or until ctx is done.
func sleepUntil(ctx context.Context, deadline time.Time) error {
	return sleep(ctx, time.Until(deadline))
}

func nonNegative(name string, v int) error {
	if v < 0 {
		return fmt.Errorf("%s: %d is negative", name, v)
	}
	return nil
}

// newProtocol reports whether req follows protocol 2026-07-28 or later.
func newProtocol(req *mcp.CallToolRequest) bool {
	return req.ProtocolVersion() >= protocolVersion2026
}

func (h *handler) echo(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return text(in.Text), nil, nil
}

func (h *handler) slow(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
	if err := nonNegative("ms", in.MS); err != nil {
		return nil, nil, err
	}
	if err := sleep(ctx, ms(in.MS)); err != nil {
		return nil, nil, err
	}
	return text("slept " + strconv.Itoa(in.MS) + " ms"), nil, nil
}

// canPoll reports whether the progress tool may close SSE streams: only the
// stateful SSE mode has both an event store and SSE answers (closing an
// application/json answer would corrupt it).
func (h *handler) canPoll() bool { return h.mode == ModeStateful }

func (h *handler) progress(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, sentOut, error) {
	if err := errors.Join(nonNegative("count", in.Count), nonNegative("interval_ms", in.IntervalMS),
		nonNegative("close_after", in.CloseAfter), nonNegative("retry_ms", in.RetryMS)); err != nil {
		return nil, sentOut{}, err
	}
	if in.Count > MaxCount {
		return nil, sentOut{}, fmt.Errorf("count: %d exceeds %d", in.Count, MaxCount)
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return text("sent 0"), sentOut{}, nil
	}
	var closeStream func(mcp.CloseSSEStreamArgs)
	if in.CloseAfter > 0 && h.canPoll() && req.Extra != nil {
		closeStream = req.Extra.CloseSSEStream
	}
	interval := ms(in.IntervalMS)
	for i := 1; i <= in.Count; i++ {
		if i > 1 && interval > 0 {
			if err := sleep(ctx, interval); err != nil {
				return nil, sentOut{}, err
			}
		}
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(i),
			Total:         float64(in.Count),
		}); err != nil {
			return nil, sentOut{}, fmt.Errorf("sending progress %d of %d: %w", i, in.Count, err)
		}
		if closeStream != nil && i%in.CloseAfter == 0 {
			closeStream(mcp.CloseSSEStreamArgs{RetryAfter: ms(in.RetryMS)})
		}
	}
	return text("sent " + strconv.Itoa(in.Count)), sentOut{Sent: in.Count}, nil
}

func (h *handler) long(ctx context.Context, req *mcp.CallToolRequest, in longIn) (*mcp.CallToolResult, sentOut, error) {
	if err := errors.Join(nonNegative("ms", in.MS), nonNegative("interval_ms", in.IntervalMS)); err != nil {
		return nil, sentOut{}, err
	}
	interval := in.IntervalMS
	if interval == 0 {
		interval = 100
	}
	n := in.MS / interval
	token := req.Params.GetProgressToken()
	start := time.Now()
	sent := 0
	for k := 1; k <= n; k++ {
		// Absolute offsets from start: no drift however long a send takes.
		if err := sleepUntil(ctx, start.Add(ms(k*interval))); err != nil {
			return nil, sentOut{}, err
		}
		if token == nil {
			continue
		}
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(k),
			Total:         float64(n),
		}); err != nil {
			return nil, sentOut{}, fmt.Errorf("sending progress %d of %d: %w", k, n, err)
		}
		sent++
	}
	if err := sleepUntil(ctx, start.Add(ms(in.MS))); err != nil {
		return nil, sentOut{}, err
	}
	return text("sent " + strconv.Itoa(sent)), sentOut{Sent: sent}, nil
}

func (h *handler) payload(_ context.Context, _ *mcp.CallToolRequest, in payloadIn) (*mcp.CallToolResult, any, error) {
	if err := nonNegative("bytes", in.Bytes); err != nil {
		return nil, nil, err
	}
	if in.Bytes > MaxPayloadBytes {
		return nil, nil, fmt.Errorf("bytes: %d exceeds %d (16 MiB less 4 KiB, so that the answer fits one SSE event of mcpbench's default --max-event-bytes)", in.Bytes, MaxPayloadBytes)
	}
	return text(payloadText()[:in.Bytes]), nil, nil
}

func (h *handler) notify(_ context.Context, req *mcp.CallToolRequest, in notifyIn) (*mcp.CallToolResult, notifyOut, error) {
	if !h.mode.stateful() {
		return nil, notifyOut{}, errNoGETStream
	}
	if err := errors.Join(nonNegative("count", in.Count), nonNegative("interval_ms", in.IntervalMS)); err != nil {
		return nil, notifyOut{}, err
	}
	if in.Count > MaxCount {
		return nil, notifyOut{}, fmt.Errorf("count: %d exceeds %d", in.Count, MaxCount)
	}
	s := h.track(req.Session)
	// Not tied to the request's context: the SDK routes messages sent with
	// a context carrying no request to the standalone GET stream.
	if s == nil || !h.goTracked(func() { h.notifyLoop(s, in.Count, ms(in.IntervalMS)) }) {
		return nil, notifyOut{}, errors.New("server is closing")
	}
	return text("will send " + strconv.Itoa(in.Count)), notifyOut{WillSend: in.Count}, nil
}

// inputRequired returns an input_required result asking for one input.
func inputRequired(id string, ir mcp.InputRequest) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{id: ir},
		RequestState:  "mcpbench/" + id,
	}
}

// inputResponse returns the response to input request id that a multi
// round-trip retry carries, or nil on a first round. It fails if the retry
// did not echo the request state.
func inputResponse(req *mcp.CallToolRequest, id string) (mcp.InputResponse, error) {
	r, ok := req.Params.InputResponses[id]
	if !ok {
		return nil, nil
	}
	if want := "mcpbench/" + id; req.Params.RequestState != want {
		return nil, fmt.Errorf("requestState %q, want %q echoed from the input_required result", req.Params.RequestState, want)
	}
	return r, nil
}

func samplingParams() *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{
		Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "mcpbench: say something"}}},
		MaxTokens: 16,
	}
}

func elicitParams() *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Message: "mcpbench: confirm?",
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
		},
	}
}

func (h *handler) sample(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, sampleOut, error) {
	if newProtocol(req) {
		r, err := inputResponse(req, inputSample)
		if err != nil {
			return nil, sampleOut{}, err
		}
		if r == nil {
			return inputRequired(inputSample, samplingParams()), sampleOut{}, nil
		}
		res, ok := r.(*mcp.CreateMessageWithToolsResult)
		if !ok {
			return nil, sampleOut{}, fmt.Errorf("input response %q is a %T, want a sampling result", inputSample, r)
		}
		t := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				t = tc.Text
				break
			}
		}
		return text(t), sampleOut{Text: t}, nil
	}
	if !h.mode.stateful() {
		return nil, sampleOut{}, errStateless
	}
	res, err := req.Session.CreateMessage(ctx, samplingParams())
	if err != nil {
		return nil, sampleOut{}, err
	}
	t := ""
	if tc, ok := res.Content.(*mcp.TextContent); ok {
		t = tc.Text
	}
	return text(t), sampleOut{Text: t}, nil
}

func (h *handler) elicit(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, actionOut, error) {
	if newProtocol(req) {
		return h.elicitRound(req, inputElicit)
	}
	if !h.mode.stateful() {
		return nil, actionOut{}, errStateless
	}
	res, err := req.Session.Elicit(ctx, elicitParams())
	if err != nil {
		return nil, actionOut{}, err
	}
	return text(res.Action), actionOut{Action: res.Action}, nil
}

// elicitRound is one round of a multi round-trip elicitation.
func (h *handler) elicitRound(req *mcp.CallToolRequest, id string) (*mcp.CallToolResult, actionOut, error) {
	r, err := inputResponse(req, id)
	if err != nil {
		return nil, actionOut{}, err
	}
	if r == nil {
		return inputRequired(id, elicitParams()), actionOut{}, nil
	}
	res, ok := r.(*mcp.ElicitResult)
	if !ok {
		return nil, actionOut{}, fmt.Errorf("input response %q is a %T, want an elicitation result", id, r)
	}
	return text(res.Action), actionOut{Action: res.Action}, nil
}

func (h *handler) roots(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, rootsOut, error) {
	var n int
	switch {
	case newProtocol(req):
		r, err := inputResponse(req, inputRoots)
		if err != nil {
			return nil, rootsOut{}, err
		}
		if r == nil {
			return inputRequired(inputRoots, &mcp.ListRootsParams{}), rootsOut{}, nil
		}
		res, ok := r.(*mcp.ListRootsResult)
		if !ok {
			return nil, rootsOut{}, fmt.Errorf("input response %q is a %T, want a roots result", inputRoots, r)
		}
		n = len(res.Roots)
	case !h.mode.stateful():
		return nil, rootsOut{}, errStateless
	default:
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, rootsOut{}, err
		}
		n = len(res.Roots)
	}
	return text(strconv.Itoa(n) + " roots"), rootsOut{Roots: n}, nil
}

func (h *handler) ask(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, actionOut, error) {
	if !newProtocol(req) && !h.mode.stateful() {
		return nil, actionOut{}, errStateless
	}
	// For legacy clients the SDK's multi round-trip middleware turns the
	// input_required result into an elicitation/create request to the client
	// and runs this handler again with the response.
	return h.elicitRound(req, inputAsk)
}

func (h *handler) count(ctx context.Context, _ *mcp.CallToolRequest, in countIn) (*mcp.CallToolResult, countOut, error) {
	if in.Key == "" {
		return nil, countOut{}, errors.New("key: empty")
	}
	if err := nonNegative("ms", in.MS); err != nil {
		return nil, countOut{}, err
	}
	h.startExecution(in.Key)
	if err := sleep(ctx, ms(in.MS)); err != nil {
		return nil, countOut{}, err
	}
	n := h.executionsOf(in.Key)
	return text(strconv.FormatInt(n, 10) + " executions"), countOut{Executions: n}, nil
}
