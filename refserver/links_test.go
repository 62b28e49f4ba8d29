package refserver

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// rawPost sends one JSON-RPC message and returns the answer, read whole.
func rawPost(t *testing.T, u, sid, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func rawGet(t *testing.T, u, sid, lastID string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// StreamLinks: a call's SSE answer carries a same-origin rel="stream"
// link; a GET there replays the stream from its start (no Last-Event-ID)
// or from an id of that stream; an id of another stream or a GET without
// a session is refused with 400. Without the option no link is sent.
func TestStreamLinks(t *testing.T) {
	srv := startServer(t, Options{StreamLinks: true})
	resp, _ := rawPost(t, srv.URL(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	rawPost(t, srv.URL(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, body := rawPost(t, srv.URL(), sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	m := regexp.MustCompile(`^<([^>]+)>; rel="stream"$`).FindStringSubmatch(resp.Header.Get("Link"))
	if m == nil || !strings.Contains(body, `"id":2`) {
		t.Fatalf("Link %q, body %q: want a rel=\"stream\" link and the response", resp.Header.Get("Link"), body)
	}
	base, _ := url.Parse(srv.URL())
	link, err := base.Parse(m[1])
	if err != nil || link.Host != base.Host {
		t.Fatalf("link %q: not same origin", m[1])
	}
	stream := link.Query().Get("stream")
	code, replay := rawGet(t, link.String(), sid, "")
	if code != 200 || !strings.Contains(replay, `"id":2`) || !strings.Contains(replay, "id: "+stream+"_1") {
		t.Fatalf("resume at the link from the start: %d %q", code, replay)
	}
	if code, replay = rawGet(t, link.String(), sid, stream+"_1"); code != 200 || strings.Contains(replay, `"id":2`) {
		t.Fatalf("resume at the link after the response: %d %q (want nothing replayed)", code, replay)
	}
	if code, _ = rawGet(t, link.String(), sid, "OTHER_0"); code != 400 {
		t.Fatalf("Last-Event-ID of another stream: %d, want 400", code)
	}
	if code, _ = rawGet(t, link.String(), "", ""); code != 400 {
		t.Fatalf("no session: %d, want 400", code)
	}
	if n := srv.Stats().LinkResumes; n != 2 {
		t.Fatalf("LinkResumes %d, want 2 (the refused GETs are not resumes)", n)
	}

	plain := startServer(t, Options{})
	if resp, _ = rawPost(t, plain.URL(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); resp.Header.Get("Link") != "" {
		t.Fatalf("Link %q sent without StreamLinks", resp.Header.Get("Link"))
	}
}
