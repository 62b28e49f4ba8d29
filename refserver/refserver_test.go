package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(t.Context(), "", opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// events records what the server sends a test client.
type events struct {
	mu       sync.Mutex
	progress map[string][]float64 // by progress token
	seqs     []int64              // seq of numbered notifications/message
}

func (e *events) progressOf(token string) []float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.progress[token])
}

func (e *events) seqList() []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.seqs)
}

// resumeCounter counts GET requests carrying Last-Event-ID.
type resumeCounter struct {
	base    http.RoundTripper
	resumes atomic.Int64
}

func (c *resumeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		c.resumes.Add(1)
	}
	return c.base.RoundTrip(r)
}

type clientConfig struct {
	noGET      bool           // DisableStandaloneSSE
	maxRetries int            // MaxRetries
	rt         *resumeCounter // nil: http.DefaultTransport
}

// connect connects an SDK client that answers sampling, elicitation and roots
// requests and records progress and numbered notifications in ev.
func connect(t *testing.T, url string, ev *events, cfg clientConfig) *mcp.ClientSession {
	t.Helper()
	if ev == nil {
		ev = new(events)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "refserver-test", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "sampled"}, Model: "test", Role: "assistant"}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			ev.mu.Lock()
			defer ev.mu.Unlock()
			if ev.progress == nil {
				ev.progress = make(map[string][]float64)
			}
			tok := fmt.Sprint(req.Params.ProgressToken)
			ev.progress[tok] = append(ev.progress[tok], req.Params.Progress)
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			m, ok := req.Params.Data.(map[string]any)
			if !ok || m["stream"] != "get" {
				return
			}
			seq, _ := m["seq"].(float64)
			ev.mu.Lock()
			ev.seqs = append(ev.seqs, int64(seq))
			ev.mu.Unlock()
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///tmp/a"}, &mcp.Root{URI: "file:///tmp/b"})
	transport := &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: cfg.noGET, MaxRetries: cfg.maxRetries}
	if cfg.rt != nil {
		transport.HTTPClient = &http.Client{Transport: cfg.rt}
	}
	cs, err := client.Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and fails the test on a protocol error or a tool error.
func call(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatalf("calling %s: %v", params.Name, err)
	}
	if res.IsError {
		t.Fatalf("calling %s: tool error %s", params.Name, resultText(res))
	}
	return res
}

// callErr calls a tool that must fail with a tool error.
func callErr(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatalf("calling %s: %v", params.Name, err)
	}
	if !res.IsError {
		t.Fatalf("calling %s: got %s, want a tool error", params.Name, resultText(res))
	}
	return resultText(res)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structuredContent.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return m
}

func tool(name string, args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: name, Arguments: args}
}

func withProgress(p *mcp.CallToolParams, token string) *mcp.CallToolParams {
	p.SetProgressToken(token)
	return p
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		fields []string // named in the error; none means valid
	}{
		{"zero", Options{}, nil},
		{"all modes", Options{Mode: Mode2026, EventStoreBytes: 1, SessionTimeout: time.Second, TickInterval: time.Second}, nil},
		{"unknown mode", Options{Mode: "sse"}, []string{"Mode"}},
		{"negatives", Options{EventStoreBytes: -1, SessionTimeout: -1, TickInterval: -1},
			[]string{"EventStoreBytes", "SessionTimeout", "TickInterval"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if len(tc.fields) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("Validate() = %v, want ErrInvalidOptions", err)
			}
			for _, f := range tc.fields {
				if !strings.Contains(err.Error(), f+":") {
					t.Errorf("Validate() = %v, does not name %s", err, f)
				}
			}
			if _, err := NewHandler(tc.opts); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("NewHandler: %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestStatefulTools(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s.URL(), nil, clientConfig{})
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated protocol %q, want 2025-11-25", got)
	}

	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	want := []string{"ask", "count", "echo", "elicit", "fail", "log", "long", "notify", "payload", "progress", "roots", "sample", "slow", "toggle_tool", "touch"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		params *mcp.CallToolParams
		text   string
		out    map[string]any // structuredContent, if any
	}{
		{tool("echo", map[string]any{"text": "hi there"}), "hi there", nil},
		{tool("slow", map[string]any{"ms": 5}), "slept 5 ms", nil},
		{tool("sample", nil), "sampled", map[string]any{"text": "sampled"}},
		{tool("elicit", nil), "accept", map[string]any{"action": "accept"}},
		{tool("roots", nil), "2 roots", map[string]any{"roots": 2.0}},
		{tool("ask", nil), "accept", map[string]any{"action": "accept"}},
		{tool("progress", map[string]any{"count": 3}), "sent 0", map[string]any{"sent": 0.0}}, // no progressToken
		{tool("long", map[string]any{"ms": 20, "interval_ms": 10}), "sent 0", map[string]any{"sent": 0.0}},
	} {
		res := call(t, cs, tc.params)
		if got := resultText(res); got != tc.text {
			t.Errorf("%s: text %q, want %q", tc.params.Name, got, tc.text)
		}
		if tc.out != nil {
			if diff := cmp.Diff(tc.out, structured(t, res)); diff != "" {
				t.Errorf("%s: structuredContent (-want +got):\n%s", tc.params.Name, diff)
			}
		}
	}

	for _, n := range []int{0, 1, 1000, 1 << 20} {
		res := call(t, cs, tool("payload", map[string]any{"bytes": n}))
		if got := len(resultText(res)); got != n {
			t.Errorf("payload %d: got %d bytes", n, got)
		}
	}
	callErr(t, cs, tool("payload", map[string]any{"bytes": MaxPayloadBytes + 1}))
	callErr(t, cs, tool("slow", map[string]any{"ms": -1}))
	callErr(t, cs, tool("count", map[string]any{"key": ""}))

	for _, r := range []struct {
		uri  string
		size int
	}{{SmallResourceURI, 100}, {LargeResourceURI, 64 << 10}} {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: r.uri})
		if err != nil {
			t.Fatalf("read %s: %v", r.uri, err)
		}
		if len(res.Contents) != 1 || len(res.Contents[0].Text) != r.size {
			t.Errorf("read %s: %d contents, want one of %d bytes", r.uri, len(res.Contents), r.size)
		}
	}
	lr, err := cs.ListResources(t.Context(), nil)
	if err != nil || len(lr.Resources) != 2 {
		t.Errorf("ListResources: %v resources, err %v; want 2", lr, err)
	}
	gp, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(gp.Messages) != 1 || gp.Messages[0].Role != "user" || gp.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada!" {
		t.Errorf("greet: %+v", gp.Messages)
	}
	if st := s.Stats(); st.ToolCalls < 15 {
		t.Errorf("Stats.ToolCalls = %d, want at least 15", st.ToolCalls)
	}
}

// fence waits until every notification the server sent c before this call
// has been handled: the SDK client handles notifications one at a time, in
// arrival order.
func fence(t *testing.T, cs *mcp.ClientSession, ev *events) {
	t.Helper()
	tok := fmt.Sprintf("fence-%d", time.Now().UnixNano())
	call(t, cs, withProgress(tool("progress", map[string]any{"count": 1}), tok))
	waitFor(t, "fence notification", func() bool { return len(ev.progressOf(tok)) == 1 })
}

func TestProgressPolling(t *testing.T) {
	s := startServer(t, Options{})
	ev := new(events)
	rt := &resumeCounter{base: http.DefaultTransport}
	cs := connect(t, s.URL(), ev, clientConfig{rt: rt})

	const count = 12
	res := call(t, cs, withProgress(tool("progress", map[string]any{
		"count": count, "interval_ms": 3, "close_after": 4, "retry_ms": 1,
	}), "p"))
	if diff := cmp.Diff(map[string]any{"sent": float64(count)}, structured(t, res)); diff != "" {
		t.Errorf("structuredContent (-want +got):\n%s", diff)
	}
	if got := resultText(res); got != fmt.Sprintf("sent %d", count) {
		t.Errorf("text %q", got)
	}
	fence(t, cs, ev)
	var want []float64
	for i := 1; i <= count; i++ {
		want = append(want, float64(i))
	}
	if diff := cmp.Diff(want, ev.progressOf("p")); diff != "" {
		t.Errorf("progress values, each exactly once (-want +got):\n%s", diff)
	}
	if rt.resumes.Load() == 0 {
		t.Error("the client never resumed with Last-Event-ID: the server did not close the stream")
	}
}

func TestLongProgress(t *testing.T) {
	s := startServer(t, Options{})
	ev := new(events)
	cs := connect(t, s.URL(), ev, clientConfig{})
	res := call(t, cs, withProgress(tool("long", map[string]any{"ms": 50, "interval_ms": 10}), "l"))
	if diff := cmp.Diff(map[string]any{"sent": 5.0}, structured(t, res)); diff != "" {
		t.Errorf("structuredContent (-want +got):\n%s", diff)
	}
	fence(t, cs, ev)
	if diff := cmp.Diff([]float64{1, 2, 3, 4, 5}, ev.progressOf("l")); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func seqsUpTo(n int) []int64 {
	var s []int64
	for i := 1; i <= n; i++ {
		s = append(s, int64(i))
	}
	return s
}

func TestNotifyOnGETStream(t *testing.T) {
	for _, mode := range []Mode{ModeStateful, ModeJSON} {
		t.Run(string(mode), func(t *testing.T) {
			s := startServer(t, Options{Mode: mode})
			ev := new(events)
			cs := connect(t, s.URL(), ev, clientConfig{})
			res := call(t, cs, tool("notify", map[string]any{"count": 5}))
			if diff := cmp.Diff(map[string]any{"will_send": 5.0}, structured(t, res)); diff != "" {
				t.Errorf("structuredContent (-want +got):\n%s", diff)
			}
			waitFor(t, "5 numbered notifications", func() bool { return len(ev.seqList()) >= 5 })
			call(t, cs, tool("notify", map[string]any{"count": 2, "interval_ms": 1}))
			waitFor(t, "7 numbered notifications", func() bool { return len(ev.seqList()) >= 7 })
			if diff := cmp.Diff(seqsUpTo(7), ev.seqList()); diff != "" {
				t.Errorf("seq numbers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTicks(t *testing.T) {
	s := startServer(t, Options{TickInterval: 2 * time.Millisecond})
	ev := new(events)
	cs := connect(t, s.URL(), ev, clientConfig{})
	waitFor(t, "3 ticks", func() bool { return len(ev.seqList()) >= 3 })
	got := ev.seqList()
	if diff := cmp.Diff(seqsUpTo(len(got)), got); diff != "" {
		t.Errorf("tick seq numbers (-want +got):\n%s", diff)
	}
	if st := s.Stats(); st.SessionsOpened != 1 {
		t.Errorf("SessionsOpened = %d, want 1", st.SessionsOpened)
	}
	cs.Close()
	waitFor(t, "session closed", func() bool { return s.Stats().SessionsClosed == 1 })
}

func TestJSONModeProgress(t *testing.T) {
	s := startServer(t, Options{Mode: ModeJSON})
	ev := new(events)
	cs := connect(t, s.URL(), ev, clientConfig{})
	// close_after is ignored: an application/json answer cannot be polled.
	res := call(t, cs, withProgress(tool("progress", map[string]any{"count": 4, "close_after": 1, "retry_ms": 1}), "j"))
	if diff := cmp.Diff(map[string]any{"sent": 4.0}, structured(t, res)); diff != "" {
		t.Errorf("structuredContent (-want +got):\n%s", diff)
	}
	// Progress travels on the GET stream, so it may trail the result.
	waitFor(t, "4 progress notifications", func() bool { return len(ev.progressOf("j")) >= 4 })
	if diff := cmp.Diff([]float64{1, 2, 3, 4}, ev.progressOf("j")); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	call(t, cs, tool("sample", nil))
}

func TestCount(t *testing.T) {
	s := startServer(t, Options{})
	cs := connect(t, s.URL(), nil, clientConfig{})
	for i := 1; i <= 2; i++ {
		res := call(t, cs, tool("count", map[string]any{"key": "k", "ms": 1}))
		if diff := cmp.Diff(map[string]any{"executions": float64(i)}, structured(t, res)); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i, diff)
		}
	}
	call(t, cs, tool("count", map[string]any{"key": "other"}))
	st := s.Stats()
	if diff := cmp.Diff(map[string]int64{"k": 2, "other": 1}, st.Executions); diff != "" {
		t.Errorf("Executions (-want +got):\n%s", diff)
	}
	if st.DoubleExecutions != 1 {
		t.Errorf("DoubleExecutions = %d, want 1", st.DoubleExecutions)
	}
}

func TestStateless(t *testing.T) {
	s := startServer(t, Options{Mode: ModeStateless})
	cs := connect(t, s.URL(), nil, clientConfig{})
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated protocol %q, want 2025-11-25 (2026-07-28 is not served in this mode)", got)
	}
	if got := resultText(call(t, cs, tool("echo", map[string]any{"text": "x"}))); got != "x" {
		t.Errorf("echo: %q", got)
	}
	for _, name := range []string{"sample", "elicit", "roots", "ask", "notify"} {
		args := map[string]any{}
		if name == "notify" {
			args["count"] = 1
		}
		callErr(t, cs, tool(name, args))
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp := rawRequest(t, method, s.URL(), map[string]string{"Accept": "text/event-stream"}, "")
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", method, resp.StatusCode)
		}
	}
	if st := s.Stats(); st.SessionsOpened != 0 {
		t.Errorf("SessionsOpened = %d in stateless mode, want 0", st.SessionsOpened)
	}
}

func TestMode2026Client(t *testing.T) {
	s := startServer(t, Options{Mode: Mode2026})
	ev := new(events)
	cs := connect(t, s.URL(), ev, clientConfig{})
	if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated protocol %q, want 2026-07-28", got)
	}
	for _, tc := range []struct {
		params *mcp.CallToolParams
		text   string
	}{
		{tool("echo", map[string]any{"text": "new"}), "new"},
		{tool("ask", nil), "accept"},
		{tool("elicit", nil), "accept"},
		{tool("sample", nil), "sampled"},
		{tool("roots", nil), "2 roots"},
		{tool("count", map[string]any{"key": "c"}), "1 executions"},
		{withProgress(tool("progress", map[string]any{"count": 3, "close_after": 1}), "n"), "sent 3"},
	} {
		if got := resultText(call(t, cs, tc.params)); got != tc.text {
			t.Errorf("%s: %q, want %q", tc.params.Name, got, tc.text)
		}
	}
	waitFor(t, "3 progress notifications", func() bool { return len(ev.progressOf("n")) >= 3 })
	if diff := cmp.Diff([]float64{1, 2, 3}, ev.progressOf("n")); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	callErr(t, cs, tool("notify", map[string]any{"count": 1}))
}

func TestCloseMidStream(t *testing.T) {
	s := startServer(t, Options{})
	// No reconnection: the SDK client would retry for ~15 s against the
	// closed server before failing the call.
	cs := connect(t, s.URL(), nil, clientConfig{maxRetries: -1})
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.WithoutCancel(t.Context()), tool("slow", map[string]any{"ms": 600_000}))
		done <- err
	}()
	waitFor(t, "slow to start", func() bool { return s.Stats().ToolCalls == 1 })

	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > shutdownTimeout {
		t.Errorf("Close took %v with a call in flight", d)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight call did not end after Close")
	}
	if _, err := net.Dial("tcp", s.Addr()); err == nil {
		t.Error("still accepting connections after Close")
	}
}

func TestStartLoopbackAndContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s, err := Start(ctx, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Errorf("Start(\"\") listens on %q, want a loopback address", host)
	}
	if want := "http://" + net.JoinHostPort(host, port) + "/mcp"; s.URL() != want {
		t.Errorf("URL() = %q, want %q", s.URL(), want)
	}
	if _, err := Start(t.Context(), "", Options{Mode: "nope"}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Start with a bad mode: %v, want ErrInvalidOptions", err)
	}
	cancel()
	waitFor(t, "the listener to close after ctx is done", func() bool {
		c, err := net.Dial("tcp", s.Addr())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
}

func TestSessionTimeout(t *testing.T) {
	s := startServer(t, Options{SessionTimeout: 20 * time.Millisecond})
	cs := connect(t, s.URL(), nil, clientConfig{noGET: true})
	waitFor(t, "the idle session to close", func() bool { return s.Stats().SessionsClosed == 1 })
	if _, err := cs.CallTool(t.Context(), tool("echo", map[string]any{"text": "x"})); err == nil {
		t.Error("call on a timed-out session succeeded")
	}
}

// GET streams start with the configured retry hint.
func TestGETRetryHint(t *testing.T) {
	s := startServer(t, Options{GETRetry: 2 * time.Second})
	id := rawSession(t, s.URL())
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	h := sessionHeader(id)
	h["Accept"] = "text/event-stream"
	resp := rawRequestCtx(t, ctx, http.MethodGet, s.URL(), h, "")
	defer resp.Body.Close()
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(resp.Body, buf, len("retry: 2000\n\n"))
	if got := string(buf[:n]); !strings.HasPrefix(got, "retry: 2000\n\n") {
		t.Fatalf("GET stream starts with %q", got)
	}
}
