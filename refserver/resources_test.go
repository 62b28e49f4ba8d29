package refserver

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notes records the notifications an SDK client receives.
type notes struct {
	mu      sync.Mutex
	logs    []map[string]any
	updated []string
	changed int
	ch      chan struct{}
}

func (n *notes) poke() {
	select {
	case n.ch <- struct{}{}:
	default:
	}
}

// wait polls f (under the lock) until it holds; it fails t after 10 s.
func (n *notes) wait(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		n.mu.Lock()
		ok := f()
		n.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-n.ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func connectNotes(t *testing.T, url string) (*mcp.ClientSession, *notes) {
	t.Helper()
	n := &notes{ch: make(chan struct{}, 1)}
	client := mcp.NewClient(&mcp.Implementation{Name: "refserver-test", Version: "0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			m, _ := req.Params.Data.(map[string]any)
			n.mu.Lock()
			n.logs = append(n.logs, m)
			n.mu.Unlock()
			n.poke()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			n.mu.Lock()
			n.updated = append(n.updated, req.Params.URI)
			n.mu.Unlock()
			n.poke()
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			n.mu.Lock()
			n.changed++
			n.mu.Unlock()
			n.poke()
		},
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, n
}

// PageSize paginates tools/list: every page but the last has PageSize
// tools and a nextCursor, and the pages together list every tool once.
func TestPageSize(t *testing.T) {
	s := startServer(t, Options{PageSize: 4})
	cs := connect(t, s.URL(), nil, clientConfig{})
	var names []string
	pages := 0
	for cursor := ""; ; pages++ {
		res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if res.NextCursor == "" {
			pages++
			break
		}
		if len(res.Tools) != 4 {
			t.Fatalf("page %d holds %d tools, want 4", pages+1, len(res.Tools))
		}
		cursor = res.NextCursor
	}
	if want := (len(names) + 3) / 4; pages != want || len(names) != 15 {
		t.Fatalf("%d tools in %d pages, want 15 in %d", len(names), pages, want)
	}
	if slices.Sort(names); len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Fatalf("a tool listed twice: %v", names)
	}
}

// The resource template lists, reads and completes; the prompt completes.
func TestTemplateAndCompletion(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s.URL(), nil, clientConfig{})
	lt, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil || len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].URITemplate != ItemTemplate {
		t.Fatalf("templates: %+v, %v", lt, err)
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "mcpbench://items/42"})
	if err != nil || rr.Contents[0].Text != "item 42" {
		t.Fatalf("read item 42: %+v, %v", rr, err)
	}
	for _, tc := range []struct {
		ref  *mcp.CompleteReference
		arg  mcp.CompleteParamsArgument
		want []string
	}{
		{&mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, mcp.CompleteParamsArgument{Name: "name", Value: "al"}, []string{"Alan", "Alonzo"}},
		{&mcp.CompleteReference{Type: "ref/resource", URI: ItemTemplate}, mcp.CompleteParamsArgument{Name: "id", Value: "9"}, []string{"9", "90", "91", "92", "93", "94", "95", "96", "97", "98", "99"}},
	} {
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: tc.ref, Argument: tc.arg})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, res.Completion.Values); d != "" || res.Completion.Total != len(tc.want) {
			t.Errorf("complete %s %q (-want +got, total %d):\n%s", tc.arg.Name, tc.arg.Value, res.Completion.Total, d)
		}
	}
	if _, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "nope"}, Argument: mcp.CompleteParamsArgument{Name: "x"}}); err == nil {
		t.Error("completion of an unknown prompt succeeded")
	}
}

// The log tool's messages reach the client at or above the level it set,
// none before it set one.
func TestLogTool(t *testing.T) {
	s := startServer(t, Options{})
	cs, n := connectNotes(t, s.URL())
	call(t, cs, tool("log", map[string]any{"count": 2}))
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, tool("log", map[string]any{"count": 3, "level": "info"}))
	call(t, cs, tool("log", map[string]any{"count": 4, "level": "error"}))
	n.wait(t, "4 log messages", func() bool { return len(n.logs) >= 4 })
	call(t, cs, tool("echo", map[string]any{"text": "x"})) // anything late would be handled by now
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.logs) != 4 || n.logs[0]["n"] != 1.0 || n.logs[3]["of"] != 4.0 {
		t.Fatalf("log messages %v, want the 4 error ones (none before setLevel, none below warning)", n.logs)
	}
}

// Touching a subscribed resource notifies the subscriber; toggle_tool
// makes the tool list change; fail is a tool error with its message.
func TestTouchToggleFail(t *testing.T) {
	s := startServer(t, Options{})
	cs, n := connectNotes(t, s.URL())
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "mcpbench://items/7"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "file:///nope"}); err == nil {
		t.Error("subscribing to an unknown resource succeeded")
	}
	call(t, cs, tool("touch", map[string]any{"uri": "mcpbench://items/8"})) // not subscribed
	call(t, cs, tool("touch", map[string]any{"uri": "mcpbench://items/7"}))
	n.wait(t, "resources/updated", func() bool { return len(n.updated) > 0 })
	call(t, cs, tool("toggle_tool", nil))
	n.wait(t, "tools/list_changed", func() bool { return n.changed > 0 })
	lt, _ := cs.ListTools(t.Context(), nil)
	if !slices.ContainsFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Name == ExtraTool }) {
		t.Errorf("%s not listed after toggle_tool", ExtraTool)
	}
	res, err := cs.CallTool(t.Context(), tool("fail", map[string]any{"message": "boom 42"}))
	if err != nil || !res.IsError || resultText(res) != "boom 42" {
		t.Errorf("fail: %+v, %v (want isError with boom 42)", res, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if d := cmp.Diff([]string{"mcpbench://items/7"}, n.updated); d != "" {
		t.Errorf("updates (-want +got):\n%s", d)
	}
	if st := s.Stats(); st.Touches != 2 || st.ToolToggles != 1 {
		t.Errorf("stats: touches %d, toggles %d (want 2, 1)", st.Touches, st.ToolToggles)
	}
}

// rawPOST posts body on session sid and returns the answer.
func rawPOST(t *testing.T, url, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A cancelled tools/call gets nothing more: the SDK would answer it with
// an error result ("context canceled"); the server keeps that from the
// client, in both SSE and JSON answers.
func TestCancelledCallGetsNothing(t *testing.T) {
	for _, mode := range []Mode{ModeStateful, ModeJSON} {
		t.Run(string(mode), func(t *testing.T) {
			s := startServer(t, Options{Mode: mode})
			init := rawPOST(t, s.URL(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
			sid := init.Header.Get("Mcp-Session-Id")
			// Read the answer to its end: closing an SSE answer early can
			// cancel the initialize on the server (the session then never
			// completes initialization).
			io.Copy(io.Discard, init.Body)
			init.Body.Close()
			ack := rawPOST(t, s.URL(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			ack.Body.Close()
			if ack.StatusCode != http.StatusAccepted {
				t.Fatalf("notifications/initialized answered %d, want 202", ack.StatusCode)
			}
			waitFor(t, "the session", func() bool { return s.Stats().SessionsOpened == 1 })
			type answer struct {
				lines []string
				err   error
			}
			got := make(chan answer, 1)
			go func() {
				resp := rawPOST(t, s.URL(), sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"ms":5000}}}`)
				defer resp.Body.Close()
				var a answer
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if l := sc.Text(); strings.HasPrefix(l, "data:") && strings.TrimSpace(l[5:]) != "" || strings.HasPrefix(l, "{") {
						a.lines = append(a.lines, l)
					}
				}
				a.err = sc.Err()
				got <- a
			}()
			waitFor(t, "the tool to start", func() bool { return s.Stats().ToolCalls == 1 })
			start := time.Now()
			c := rawPOST(t, s.URL(), sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}`)
			c.Body.Close()
			if c.StatusCode != http.StatusAccepted {
				t.Fatalf("cancel answered %d, want 202", c.StatusCode)
			}
			a := <-got
			if len(a.lines) != 0 || a.err != nil {
				t.Fatalf("after the cancel the stream carried %q (err %v), want nothing", a.lines, a.err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("the answer ended %v after the cancel: the tool did not stop", d)
			}
			if st := s.Stats(); st.Cancels != 1 || st.Muted == 0 {
				t.Fatalf("stats: cancels %d, muted %d (want 1, ≥ 1)", st.Cancels, st.Muted)
			}
		})
	}
}

// member finds a top-level member's raw value the way encoding/json
// would, never a nested one of the same name.
func TestMember(t *testing.T) {
	for _, tc := range []struct{ obj, key, want string }{
		{`{"jsonrpc":"2.0","id":17,"method":"tools/call"}`, "id", `17`},
		{`{"params":{"id":5,"x":"a\"}"},"id":"q\"r"}`, "id", `"q\"r"`},
		{` { "id" : [1, {"a": 2}] , "method" : "x" } `, "method", `"x"`},
		{` { "id" : [1, {"a": 2}] , "method" : "x" } `, "id", `[1, {"a": 2}]`},
		{`{"method":"notifications/cancelled","params":{"requestId":7,"reason":"r"}}`, "params", `{"requestId":7,"reason":"r"}`},
		{`{"params":{"id":5}}`, "id", ``},
		{`{"id":`, "id", ``},
		{`[1,2]`, "id", ``},
	} {
		if got := string(member([]byte(tc.obj), tc.key)); got != tc.want {
			t.Errorf("member(%s, %s) = %q, want %q", tc.obj, tc.key, got, tc.want)
		}
	}
	if got := string(member(member([]byte(`{"params":{"reason":"}","requestId": 9}}`), "params"), "requestId")); got != "9" {
		t.Errorf("requestId %q, want 9", got)
	}
}
