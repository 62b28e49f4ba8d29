package mcptest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// serveModern answers a 2026-07-28 request (SEP-2575) of a ProbeFake with
// Modern set: POST only (GET and DELETE get 405), the standard headers
// validated (MCP-Protocol-Version: 400 with -32022 unless 2026-07-28;
// Mcp-Method missing or unlike the body's method: 400 with -32020),
// server/discover listing 2026-07-28 and the legacy versions, tools/list,
// the tool answering SSE without event ids (2026-07-28 has no
// resumption), subscriptions/listen (an acknowledgment, then a stream
// held open until the client leaves; Faults.ListenEndsAtOnce and
// ListenAcksNothing end it at once), and 404 with -32601 to any other
// method. It keeps no state: the era is stateless.
func (f *ProbeFake) serveModern(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name          string          `json:"name"`
			Args          json.RawMessage `json:"arguments"`
			Notifications json.RawMessage `json:"notifications"`
			Meta          struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		probeError(w, http.StatusBadRequest, "Parse error")
		return
	}
	wr := &Writer{ResponseWriter: w}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "2026-07-28" {
		wr.JSON(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
			"code": -32022, "message": "unsupported protocol version " + strconv.Quote(v),
			"data": map[string]any{"supported": f.modernVersions()}}})
		return
	}
	if hm := r.Header.Get("Mcp-Method"); hm != m.Method {
		wr.JSON(http.StatusBadRequest, ErrorResponse(m.ID, -32020, "Mcp-Method header "+strconv.Quote(hm)+" does not match the body"))
		return
	}
	done := func(result map[string]any) map[string]any {
		result["resultType"] = "complete"
		return Response(m.ID, result)
	}
	switch {
	case m.Method == "server/discover":
		wr.JSON(http.StatusOK, done(map[string]any{"supportedVersions": f.modernVersions(),
			"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}}, "serverInfo": map[string]any{"name": "probe-fake", "version": "0"}}))
	case m.Method == "tools/list":
		wr.JSON(http.StatusOK, done(map[string]any{"tools": []any{f.toolSpec()}}))
	case m.Method == "tools/call" && m.Params.Name == f.toolName():
		f.mu.Lock()
		f.calls[f.toolName()]++
		f.mu.Unlock()
		var args struct {
			Count *int `json:"count"`
		}
		json.Unmarshal(m.Params.Args, &args)
		n := deref(args.Count, 3)
		for k := 1; k <= n && m.Params.Meta.Token != nil; k++ {
			wr.Events(Event{Type: "message", Data: Progress(string(m.Params.Meta.Token), float64(k), float64(n))})
		}
		wr.Events(Event{Type: "message", Data: done(map[string]any{"content": []any{map[string]any{"type": "text", "text": "sent " + strconv.Itoa(n)}}})})
	case m.Method == "subscriptions/listen" && m.ID != nil:
		agreed := m.Params.Notifications
		if f.Faults.ListenAcksNothing || agreed == nil {
			agreed = json.RawMessage(`{}`)
		}
		meta := map[string]any{"io.modelcontextprotocol/subscriptionId": m.ID}
		wr.Events(Event{Type: "message", Data: map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
			"params": map[string]any{"_meta": meta, "notifications": agreed}}})
		if !f.Faults.ListenEndsAtOnce && !f.Faults.ListenAcksNothing {
			<-r.Context().Done()
			return
		}
		wr.Events(Event{Type: "message", Data: done(map[string]any{"_meta": meta})})
	default:
		wr.JSON(http.StatusNotFound, ErrorResponse(m.ID, -32601, "Method not found: "+m.Method))
	}
}

func (f *ProbeFake) modernVersions() []string {
	return append([]string{"2026-07-28"}, probeVersions...)
}
