package refserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Raw HTTP tests: they pin the wire shapes the package documentation gives.

func rawRequest(t *testing.T, method, url string, header map[string]string, body string) *http.Response {
	t.Helper()
	return rawRequestCtx(t, t.Context(), method, url, header, body)
}

func rawRequestCtx(t *testing.T, ctx context.Context, method, url string, header map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp
}

type sseEvent struct {
	ID, Event, Data, Retry string
}

// readSSE reads events until EOF or until stop returns true for one.
func readSSE(t *testing.T, r io.Reader, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	var (
		evs []sseEvent
		cur sseEvent
		any bool
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if any {
				evs = append(evs, cur)
				if stop != nil && stop(cur) {
					return evs
				}
			}
			cur, any = sseEvent{}, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		any = true
		switch field {
		case "id":
			cur.ID = value
		case "event":
			cur.Event = value
		case "data":
			cur.Data += value
		case "retry":
			cur.Retry = value
		}
	}
	return evs
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// rawSession initializes a session by hand and returns its id.
func rawSession(t *testing.T, url string) string {
	t.Helper()
	resp := rawRequest(t, http.MethodPost, url, nil, initializeBody)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: status %d, session %q", resp.StatusCode, id)
	}
	resp = rawRequest(t, http.MethodPost, url, sessionHeader(id), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d", resp.StatusCode)
	}
	return id
}

func sessionHeader(id string) map[string]string {
	return map[string]string{"Mcp-Session-Id": id, "MCP-Protocol-Version": "2025-11-25"}
}

// TestStatefulWire checks the priming event, event ids, the close event
// with its retry hint, and the replay after Last-Event-ID.
func TestStatefulWire(t *testing.T) {
	s := startServer(t, Options{})
	id := rawSession(t, s.URL())

	resp := rawRequest(t, http.MethodPost, s.URL(), sessionHeader(id),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{"count":2,"close_after":2,"retry_ms":7},"_meta":{"progressToken":"w"}}}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	evs := readSSE(t, resp.Body, nil)
	resp.Body.Close()
	if len(evs) != 4 {
		t.Fatalf("got %d events before the server closed the stream, want prime, 2 progress, close: %+v", len(evs), evs)
	}
	stream, _, _ := strings.Cut(evs[0].ID, "_")
	if diff := cmp.Diff(sseEvent{ID: stream + "_0", Event: "prime"}, evs[0]); diff != "" {
		t.Errorf("priming event (-want +got):\n%s", diff)
	}
	for i, e := range evs[1:3] {
		if want := stream + "_" + string(rune('1'+i)); e.ID != want || e.Event != "message" {
			t.Errorf("event %d: id %q event %q, want id %q event message", i+1, e.ID, e.Event, want)
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Progress, Total float64
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(e.Data), &msg); err != nil || msg.Method != "notifications/progress" ||
			msg.Params.Progress != float64(i+1) || msg.Params.Total != 2 {
			t.Errorf("event %d: %s (%v), want progress %d of 2", i+1, e.Data, err, i+1)
		}
	}
	if diff := cmp.Diff(sseEvent{Event: "close", Retry: "7"}, evs[3]); diff != "" {
		t.Errorf("close event (-want +got):\n%s", diff)
	}

	// Resume: the result is replayed (or delivered live) with the next id.
	h := sessionHeader(id)
	h["Accept"] = "text/event-stream"
	h["Last-Event-ID"] = evs[2].ID
	resp = rawRequest(t, http.MethodGet, s.URL(), h, "")
	evs = readSSE(t, resp.Body, nil)
	resp.Body.Close()
	if len(evs) != 1 || evs[0].ID != stream+"_3" || !strings.Contains(evs[0].Data, `"sent":2`) {
		t.Errorf("resumed stream: %+v, want the result with id %s_3", evs, stream)
	}
}

// TestFreshGETAfterEviction checks that a GET without Last-Event-ID replays
// the retained standalone messages, with their ids, once older ones were
// evicted (the SDK alone would answer 400).
func TestFreshGETAfterEviction(t *testing.T) {
	s := startServer(t, Options{EventStoreBytes: 4096})
	id := rawSession(t, s.URL())
	resp := rawRequest(t, http.MethodPost, s.URL(), sessionHeader(id),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notify","arguments":{"count":100}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	waitFor(t, "100 notifications stored", func() bool {
		st := s.h.store
		st.mu.Lock()
		defer st.mu.Unlock()
		l := st.sessions[id][""]
		return l.first+len(l.data) == 100 && l.first > 50 // only ~20 fit in 4 KiB
	})

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	h := sessionHeader(id)
	h["Accept"] = "text/event-stream"
	resp = rawRequestCtx(t, ctx, http.MethodGet, s.URL(), h, "")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("fresh GET: status %d: %s", resp.StatusCode, b)
	}
	evs := readSSE(t, resp.Body, func(e sseEvent) bool { return strings.Contains(e.Data, `"seq":100,`) })
	if len(evs) == 0 || len(evs) > 50 {
		t.Fatalf("fresh GET replayed %d events, want the retained tail", len(evs))
	}
	first := 101 - len(evs)
	for i, e := range evs {
		seq := first + i
		// Index k of the standalone stream holds seq k+1.
		if want := "_" + itoa(seq-1); e.ID != want {
			t.Errorf("event %d: id %q, want %q", i, e.ID, want)
		}
		want := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"seq":` + itoa(seq) +
			`,"stream":"get"},"level":"info","logger":"mcpbench"}}`
		if e.Data != want {
			t.Errorf("event %d: data %s, want %s", i, e.Data, want)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestJSONModeWire(t *testing.T) {
	s := startServer(t, Options{Mode: ModeJSON})
	resp := rawRequest(t, http.MethodPost, s.URL(), nil, initializeBody)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("initialize: Content-Type %q, want application/json", ct)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" || !strings.Contains(string(body), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: session %q, body %s", id, body)
	}
	resp = rawRequest(t, http.MethodPost, s.URL(), sessionHeader(id), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	resp = rawRequest(t, http.MethodPost, s.URL(), sessionHeader(id),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"json"}}}`)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("tools/call: Content-Type %q, want application/json", ct)
	}
	var msg struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.ID != 2 || len(msg.Result.Content) != 1 || msg.Result.Content[0].Text != "json" {
		t.Errorf("tools/call answer %s (%v)", body, err)
	}
}

func header2026(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}`

func TestMode2026Wire(t *testing.T) {
	s := startServer(t, Options{Mode: Mode2026})

	resp := rawRequest(t, http.MethodPost, s.URL(), header2026("server/discover", ""),
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta2026+`}}`)
	body := readAnswer(t, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("server/discover: status %d, session %q, body %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	var disc struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &disc); err != nil || len(disc.Result.SupportedVersions) == 0 ||
		disc.Result.SupportedVersions[0] != "2026-07-28" {
		t.Errorf("server/discover: %s (%v), want supportedVersions starting with 2026-07-28", body, err)
	}

	resp = rawRequest(t, http.MethodPost, s.URL(), header2026("tools/call", "echo"),
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"stateless"},`+meta2026+`}}`)
	body = readAnswer(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"text":"stateless"`) ||
		!strings.Contains(string(body), `"resultType":"complete"`) {
		t.Errorf("tools/call: status %d, body %s", resp.StatusCode, body)
	}

	// The ask tool answers input_required first.
	resp = rawRequest(t, http.MethodPost, s.URL(), header2026("tools/call", "ask"),
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask",`+meta2026+`}}`)
	body = readAnswer(t, resp)
	if !strings.Contains(string(body), `"resultType":"input_required"`) || !strings.Contains(string(body), `"elicitation/create"`) {
		t.Errorf("ask: %s, want an input_required result asking for elicitation/create", body)
	}

	// Mcp-Name must match the body.
	resp = rawRequest(t, http.MethodPost, s.URL(), header2026("tools/call", "slow"),
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},`+meta2026+`}}`)
	body = readAnswer(t, resp)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("mismatched Mcp-Name: status %d, body %s; want 400", resp.StatusCode, body)
	}

	// A legacy initialize is answered, without a session.
	resp = rawRequest(t, http.MethodPost, s.URL(), nil, initializeBody)
	body = readAnswer(t, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" ||
		!strings.Contains(string(body), `"protocolVersion":"2025-11-25"`) {
		t.Errorf("legacy initialize: status %d, session %q, body %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	resp = rawRequest(t, http.MethodGet, s.URL(), map[string]string{"Accept": "text/event-stream"}, "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
}

// readAnswer returns the JSON-RPC message of a JSON or SSE answer.
func readAnswer(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		evs := readSSE(t, resp.Body, nil)
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Data != "" {
				return []byte(evs[i].Data)
			}
		}
		return nil
	}
	b, _ := io.ReadAll(resp.Body)
	return b
}
