package mcptest

import (
	"bytes"
	"net/http"
)

// BenchSSE answers any POST with a priming event and the response over
// SSE, the way a 2025-11-25 server answers tools/call; initialize gets the
// session id "bench", notifications/initialized 202, other methods 405.
// It does as little as possible (no JSON decoding, one write), so a
// benchmark of the client shows the client's cost.
func BenchSSE(w http.ResponseWriter, r *http.Request) {
	var buf [4096]byte
	n, _ := r.Body.Read(buf[:])
	body := buf[:n]
	if r.Method != http.MethodPost {
		w.WriteHeader(405)
		return
	}
	if bytes.Contains(body, []byte(`"notifications/initialized"`)) {
		w.WriteHeader(202)
		return
	}
	id := body[bytes.Index(body, []byte(`"id":`))+5:]
	id = id[:bytes.IndexByte(id, ',')]
	h := w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	if bytes.Contains(body, []byte(`"initialize"`)) {
		h["Mcp-Session-Id"] = []string{"bench"}
	}
	out := make([]byte, 0, 256)
	out = append(out, "event: prime\nid: e_0\ndata:\n\nevent: message\nid: e_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":"...)
	out = append(out, id...)
	out = append(out, `,"result":{"protocolVersion":"2025-11-25","content":[{"type":"text","text":"hello"}]}}`+"\n\n"...)
	w.Write(out)
}
