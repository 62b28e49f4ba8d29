package refserver

import (
	"strings"
	"testing"
)

// A cancel that overtakes its call (sent on another connection, handled
// first) still cancels it: the call, when it comes, is counted cancelled
// and nothing of its answer reaches the client. A cancel naming no call
// of the session counts nothing; a correct order counts once.
func TestCancelBeforeItsCall(t *testing.T) {
	srv := startServer(t, Options{})
	resp, _ := rawPost(t, srv.URL(), "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	rawPost(t, srv.URL(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	rawPost(t, srv.URL(), sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	if n := srv.Stats().Cancels; n != 0 {
		t.Fatalf("a cancel naming no call yet counted %d", n)
	}
	_, body := rawPost(t, srv.URL(), sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	if st := srv.Stats(); st.Cancels != 1 || st.Muted == 0 || strings.Contains(body, `"id":7`) {
		t.Fatalf("cancels %d, muted %d, body %q: want the overtaken call cancelled, its answer kept back", st.Cancels, st.Muted, body)
	}
	// Another call of the session is not touched by the remembered cancel.
	if _, body := rawPost(t, srv.URL(), sid, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`); !strings.Contains(body, `"id":8`) || srv.Stats().Cancels != 1 {
		t.Fatalf("call 8: %q, cancels %d", body, srv.Stats().Cancels)
	}
}

// The remembered early cancels are bounded: the oldest go first.
func TestEarlyCancelsBounded(t *testing.T) {
	var c inflightCalls
	for i := range maxEarlyCancels + 10 {
		c.rememberEarly(callKey{"s", string(rune('a'+i%26)) + strings.Repeat("x", i/26)})
	}
	if len(c.early) != maxEarlyCancels || len(c.ring) != maxEarlyCancels {
		t.Fatalf("%d remembered (%d in the ring), want %d", len(c.early), len(c.ring), maxEarlyCancels)
	}
	if _, ok := c.early[callKey{"s", "a"}]; ok {
		t.Fatal("the oldest early cancel is still kept")
	}
}
