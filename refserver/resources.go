package refserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rest of MCP, so that every operation mcpbench sends has something to
// hit: a resource template, completions, logging, subscriptions to
// resources with a tool that changes them, a tool that changes the tool
// list, and a tool that fails with its own message.

// ItemTemplate is the reference server's resource template: every
// mcpbench://items/<id> reads as "item <id>", can be subscribed to and
// changed with the touch tool; completion/complete offers ids 1…100.
const ItemTemplate = "mcpbench://items/{id}"

const itemPrefix = "mcpbench://items/"

// ExtraTool is the tool the toggle_tool tool adds and removes.
const ExtraTool = "mcpbench_extra"

// completionNames are the completions of the greet prompt's name argument.
var completionNames = []string{"Ada", "Alan", "Alonzo", "Barbara", "Donald", "Edsger", "Grace", "Ken", "Leslie", "Linus", "Margaret", "Niklaus", "Rob", "Robin"}

type logIn struct {
	Count int    `json:"count" jsonschema:"number of notifications/message to send on the request's stream"`
	Level string `json:"level,omitempty" jsonschema:"their level (debug, info, notice, warning, error, critical, alert, emergency); default info"`
}

type touchIn struct {
	URI string `json:"uri" jsonschema:"the resource to change: mcpbench://static/small, mcpbench://static/large or mcpbench://items/<id>"`
}

type failIn struct {
	Message string `json:"message" jsonschema:"the message of the tool error"`
}

// logLevels are the levels of the logging utility (RFC 5424), lowest first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// addMore registers the template, the tools of this file and the prompt's
// completions (through ServerOptions, see newHandler).
func (h *handler) addMore() {
	addTool(h, "log", "Sends count notifications/message at level (default info) on the request's stream; the client sees those at or above the level it set with logging/setLevel (2026-07-28: io.modelcontextprotocol/logLevel in the request's _meta) and none before it set one.", h.log)
	addTool(h, "touch", "Changes the resource uri: every session subscribed to it (resources/subscribe) gets notifications/resources/updated on its GET stream. Result: \"touched <uri>\".", h.touch)
	addTool(h, "toggle_tool", "Adds the tool "+ExtraTool+", or removes it when it is there: every session gets notifications/tools/list_changed on its GET stream (the SDK coalesces changes 10 ms apart).", h.toggleTool)
	addTool(h, "fail", "Returns a tool error (isError) whose text is message.", h.fail)
	h.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: ItemTemplate,
		Name:        "item",
		Description: "An item: reads as \"item <id>\"; subscribe to it and change it with the touch tool.",
		MIMEType:    "text/plain",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		id := strings.TrimPrefix(req.Params.URI, itemPrefix)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + id}}}, nil
	})
}

// knownResource reports whether uri is one of the server's resources.
func knownResource(uri string) bool {
	switch {
	case uri == SmallResourceURI, uri == LargeResourceURI:
		return true
	case strings.HasPrefix(uri, itemPrefix):
		id := uri[len(itemPrefix):]
		return id != "" && !strings.ContainsAny(id, "/?#")
	}
	return false
}

func (h *handler) log(ctx context.Context, req *mcp.CallToolRequest, in logIn) (*mcp.CallToolResult, sentOut, error) {
	if err := nonNegative("count", in.Count); err != nil {
		return nil, sentOut{}, err
	}
	if in.Count > MaxCount {
		return nil, sentOut{}, fmt.Errorf("count: %d exceeds %d", in.Count, MaxCount)
	}
	level := in.Level
	if level == "" {
		level = "info"
	}
	if !slices.Contains(logLevels, level) {
		return nil, sentOut{}, fmt.Errorf("level: %q, want one of %s", level, strings.Join(logLevels, ", "))
	}
	for k := 1; k <= in.Count; k++ {
		// The session drops messages below the client's level (and all of
		// them before it set one), as the spec says.
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Logger: "mcpbench", Data: map[string]int{"n": k, "of": in.Count}}); err != nil {
			return nil, sentOut{}, fmt.Errorf("sending log message %d of %d: %w", k, in.Count, err)
		}
	}
	return text("logged " + strconv.Itoa(in.Count) + " at " + level), sentOut{Sent: in.Count}, nil
}

func (h *handler) touch(ctx context.Context, _ *mcp.CallToolRequest, in touchIn) (*mcp.CallToolResult, any, error) {
	if !knownResource(in.URI) {
		return nil, nil, fmt.Errorf("uri: %q is not a resource of this server (%s, %s or %s)", in.URI, SmallResourceURI, LargeResourceURI, ItemTemplate)
	}
	h.touches.Add(1)
	// The SDK sends the notification to every subscribed session before
	// it returns (on their standalone GET streams).
	if err := h.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: in.URI}); err != nil {
		return nil, nil, err
	}
	return text("touched " + in.URI), nil, nil
}

func (h *handler) toggleTool(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	h.toggleMu.Lock()
	defer h.toggleMu.Unlock()
	h.toggles.Add(1)
	if h.extraOn {
		h.server.RemoveTools(ExtraTool)
		h.extraOn = false
		return text("removed " + ExtraTool), nil, nil
	}
	addTool(h, ExtraTool, "Added by toggle_tool; returns \"extra\".", func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text("extra"), nil, nil
	})
	h.extraOn = true
	return text("added " + ExtraTool), nil, nil
}

func (h *handler) fail(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
}

// complete answers completion/complete: names for the greet prompt's
// name argument, ids 1…100 for the item template's id; at most 100
// values, those starting with the argument's value.
func (h *handler) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	var all []string
	switch {
	case p.Ref == nil:
		return nil, errors.New("ref: missing")
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "name":
		all = completionNames
	case p.Ref.Type == "ref/resource" && p.Ref.URI == ItemTemplate && p.Argument.Name == "id":
		for i := 1; i <= 100; i++ {
			all = append(all, strconv.Itoa(i))
		}
	default:
		return nil, fmt.Errorf("no completions for %s %s%s argument %q (try ref/prompt greet argument name, or ref/resource %s argument id)", p.Ref.Type, p.Ref.Name, p.Ref.URI, p.Argument.Name, ItemTemplate)
	}
	var out []string
	for _, v := range all {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(p.Argument.Value)) {
			out = append(out, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
}

// subscribe accepts a subscription to one of the server's resources; the
// SDK keeps it per session.
func (h *handler) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if !knownResource(req.Params.URI) {
		return fmt.Errorf("uri: %q is not a resource of this server", req.Params.URI)
	}
	return nil
}

func (h *handler) unsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }
