package driver_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// modernFake answers every 2026-07-28 request with a JSON result.
func modernFake() *mcptest.Server {
	fake := mcptest.New()
	fake.SessionID = ""
	fake.Handle(mcptest.K("POST", "", mcptest.Any, mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
		switch r.RPCMethod {
		case "server/discover":
			w.Result(r, map[string]any{"supportedVersions": []string{"2026-07-28", "2025-11-25"}, "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "fake", "version": "0"}, "resultType": "complete"})
		default:
			w.Result(r, map[string]any{"resultType": "complete", "content": []any{}})
		}
	})
	return fake
}

func modernSession(t *testing.T, fake *mcptest.Server, mod func(*driver.Config)) *driver.Session {
	t.Helper()
	ts := httptest.NewServer(fake)
	t.Cleanup(ts.Close)
	cfg := &driver.Config{URL: ts.URL + "/mcp", Protocol: driver.Protocol20260728}
	if mod != nil {
		mod(cfg)
	}
	s, err := driver.NewSession(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatalf("initialize (server/discover): %v", err)
	}
	return s
}

// Every request carries the exact _meta fields and the Mcp-Method and
// Mcp-Name headers of its method; there is no initialize and no session.
func TestModernRequestShape(t *testing.T) {
	fake := modernFake()
	s := modernSession(t, fake, nil)
	ops := []*driver.Op{
		op(t, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, true),
		op(t, "resources/read", `{"uri":"mcpbench://static/small"}`, false),
		op(t, "prompts/get", `{"name":"grüße","arguments":{}}`, false),
		op(t, "tools/list", "", false),
		op(t, "ping", "", false),
	}
	for _, o := range ops {
		var res driver.Result
		s.Do(t.Context(), o, &res)
		if res.Err != nil {
			t.Fatalf("%s: %v", o.Name, res.Err)
		}
	}
	wantMeta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcpbench", "version": "dev"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}},
	}
	wantName := map[string]string{
		"tools/call":     "echo",
		"resources/read": "mcpbench://static/small",
		"prompts/get":    "=?base64?" + base64.StdEncoding.EncodeToString([]byte("grüße")) + "?=",
	}
	reqs := fake.Requests()
	if len(reqs) != 6 || reqs[0].RPCMethod != "server/discover" {
		t.Fatalf("requests: %d, first %q", len(reqs), reqs[0].RPCMethod)
	}
	for _, r := range reqs {
		if r.RPCMethod == "initialize" || r.Session != "" || r.HTTPMethod != "POST" {
			t.Fatalf("legacy traffic: %s %s session %q", r.HTTPMethod, r.RPCMethod, r.Session)
		}
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		json.Unmarshal(r.Params, &p)
		want := map[string]any{}
		for k, v := range wantMeta {
			want[k] = v
		}
		if r.RPCMethod == "tools/call" {
			// Tokens are unique across the run: "<run>-<session>-<request id>".
			tok, _ := p.Meta["progressToken"].(string)
			if !regexp.MustCompile(`^[0-9a-f]{6}-[0-9]+-` + string(r.ID) + `$`).MatchString(tok) {
				t.Errorf("progressToken %q does not name run, session and request %s", tok, r.ID)
			}
			want["progressToken"] = tok
		}
		if diff := cmp.Diff(want, p.Meta); diff != "" {
			t.Errorf("%s _meta (-want +got):\n%s", r.RPCMethod, diff)
		}
		if got := r.Header.Get("Mcp-Protocol-Version"); got != "2026-07-28" {
			t.Errorf("%s MCP-Protocol-Version %q", r.RPCMethod, got)
		}
		if got := r.Header.Get("Mcp-Method"); got != r.RPCMethod {
			t.Errorf("Mcp-Method %q for %s", got, r.RPCMethod)
		}
		if got, want := r.Header.Get("Mcp-Name"), wantName[r.RPCMethod]; got != want || (want == "") != (len(r.Header.Values("Mcp-Name")) == 0) {
			t.Errorf("%s: Mcp-Name %q, want %q", r.RPCMethod, got, want)
		}
	}
	if err := s.Close(t.Context()); err != nil || len(fake.Find(mcptest.K("DELETE", mcptest.Any, "", mcptest.Any))) != 0 {
		t.Fatalf("Close must not DELETE a modern session: %v", err)
	}
}

func TestModernHeaderMismatchClassified(t *testing.T) {
	fake := modernFake()
	fake.Handle(mcptest.K("POST", "", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.JSON(400, mcptest.ErrorResponse(r.ID, -32020, "Header mismatch: Mcp-Name header value 'x' does not match body value 'echo'"))
	})
	s := modernSession(t, fake, nil)
	var res driver.Result
	s.Do(t.Context(), callEcho(t), &res)
	if res.Class != driver.ClassHeaderMismatch || res.Status != 400 {
		t.Fatalf("class %v status %d (%v), want header-mismatch 400", res.Class, res.Status, res.Err)
	}
}

// A tools/call answered input_required is retried with canned
// inputResponses and the requestState, then completes.
func TestModernInputRequiredRoundTrip(t *testing.T) {
	fake := modernFake()
	fake.Handle(mcptest.K("POST", "", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		var p struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			RequestState   string                     `json:"requestState"`
		}
		json.Unmarshal(r.Params, &p)
		if p.InputResponses == nil {
			w.Result(r, map[string]any{"resultType": "input_required", "requestState": "st-1",
				"inputRequests": map[string]any{
					"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "ok?", "requestedSchema": map[string]any{"type": "object"}}},
					"roots":   map[string]any{"method": "roots/list"},
				}})
			return
		}
		var confirm struct{ Action string }
		json.Unmarshal(p.InputResponses["confirm"], &confirm)
		if p.RequestState != "st-1" || confirm.Action != "decline" || p.InputResponses["roots"] == nil {
			w.JSON(200, mcptest.ErrorResponse(r.ID, -32602, "bad retry"))
			return
		}
		w.Result(r, map[string]any{"resultType": "complete", "content": []any{}})
	})
	s := modernSession(t, fake, nil)
	var res driver.Result
	s.Do(t.Context(), op(t, "tools/call", `{"name":"ask","arguments":{}}`, false), &res)
	if res.Err != nil || res.InputRounds != 1 {
		t.Fatalf("err %v rounds %d", res.Err, res.InputRounds)
	}
	calls := fake.Find(mcptest.K("POST", "", "tools/call", ""))
	if len(calls) != 2 || string(calls[0].ID) == string(calls[1].ID) {
		t.Fatalf("want 2 calls with different ids, got %d", len(calls))
	}
}

// A cut stream is a cancelled request: re-issued with a new id (and the
// same logical request key), or failed without the knob.
func TestModernCutReissued(t *testing.T) {
	for _, reissue := range []bool{true, false} {
		fake := modernFake()
		n := 0
		fake.Handle(mcptest.K("POST", "", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			n++
			if n == 1 {
				w.Events(mcptest.Event{Data: mcptest.Progress(r.ProgressToken(), 1, 2)})
				w.Cut()
				return
			}
			w.Events(mcptest.Event{Data: mcptest.Response(r.ID, map[string]any{"resultType": "complete", "content": []any{}})})
		})
		s := modernSession(t, fake, func(c *driver.Config) { c.ReissueUnresumable = reissue })
		var res driver.Result
		s.Do(t.Context(), op(t, "tools/call", `{"name":"count","arguments":{"key":"${request}"}}`, true), &res)
		if !reissue {
			if res.Class != driver.ClassStreamBroken || res.Ledger.Faulty() {
				t.Fatalf("no reissue: class %v ledger %v", res.Class, res.Ledger.Counts)
			}
			continue
		}
		if res.Err != nil || res.Reissues != 1 || res.Wasted <= 0 || res.Ledger.Faulty() {
			t.Fatalf("reissue: err %v reissues %d wasted %v ledger %v", res.Err, res.Reissues, res.Wasted, res.Ledger.Counts)
		}
		calls := fake.Find(mcptest.K("POST", "", "tools/call", ""))
		key := func(r *mcptest.Request) string {
			var p struct{ Arguments struct{ Key string } }
			json.Unmarshal(r.Params, &p)
			return p.Arguments.Key
		}
		if len(calls) != 2 || key(calls[0]) != "s3-1" || key(calls[1]) != "s3-1" || string(calls[0].ID) == string(calls[1].ID) {
			t.Fatalf("re-issue must keep the request key and change the id: %q %q", key(calls[0]), key(calls[1]))
		}
	}
}

func TestNegotiate(t *testing.T) {
	legacy := mcptest.New()
	legacy.Handle(mcptest.K("POST", mcptest.Any, "server/discover", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
		http.Error(w, "Bad Request: missing session ID", 400)
	})
	versionErr := mcptest.New()
	versionErr.Handle(mcptest.K("POST", mcptest.Any, "server/discover", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
		w.JSON(400, map[string]any{"jsonrpc": "2.0", "id": r.ID, "error": map[string]any{"code": -32022, "message": "Unsupported protocol version", "data": map[string]any{"supported": []string{"2026-07-28"}, "requested": "x"}}})
	})
	for _, tt := range []struct {
		name   string
		fake   *mcptest.Server
		want   string
		modern bool
	}{
		{"modern", modernFake(), "2026-07-28", true},
		{"unsupported-version error naming a modern version", versionErr, "2026-07-28", true},
		{"legacy", legacy, "2025-11-25", false},
	} {
		ts := httptest.NewServer(tt.fake)
		n, err := driver.Negotiate(t.Context(), &driver.Config{URL: ts.URL})
		ts.Close()
		if err != nil || n.Protocol != tt.want || n.Modern != tt.modern {
			t.Errorf("%s: %+v %v", tt.name, n, err)
		}
	}
}

func TestModernListenStream(t *testing.T) {
	fake := modernFake()
	fake.Handle(mcptest.K("POST", "", "subscriptions/listen", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Events(mcptest.Event{Data: map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": r.ID}}}})
		<-r.Ctx.Done()
	})
	s := modernSession(t, fake, nil)
	if err := s.OpenStream(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the acknowledgement", func() bool { return s.StreamStats().Acked == 1 })
	if len(fake.Find(mcptest.K("GET", mcptest.Any, "", mcptest.Any))) != 0 {
		t.Fatal("a modern session must not GET")
	}
	s.Close(t.Context())
}

func TestParamHeaders(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"},"n":{"type":"integer","x-mcp-header":"N"}}},
		"query":{"type":"string"}}}`)
	got, err := driver.ParamHeaders(schema, []byte(`{"region":"Zürich","opts":{"dry":true,"n":42},"query":"x"}`))
	want := [][2]string{{"Mcp-Param-Dry", "true"}, {"Mcp-Param-N", "42"}, {"Mcp-Param-Region", "=?base64?WsO8cmljaA==?="}}
	if err != nil || !cmp.Equal(want, got) {
		t.Fatalf("%v %v, want %v", got, err, want)
	}
	if got, _ := driver.ParamHeaders(schema, []byte(`{"query":"x"}`)); len(got) != 0 {
		t.Fatalf("absent arguments gave headers: %v", got)
	}
	if _, err := driver.ParamHeaders([]byte(`{"properties":{"x":{"type":"number","x-mcp-header":"X"}}}`), nil); err == nil {
		t.Fatal("x-mcp-header on a number must be rejected")
	}
}

// The reason Negotiate gives is true: a 401 to server/discover says
// nothing of the version (it used to read "JSON-RPC error 0, so it speaks
// the session-based versions"); a JSON-RPC error is named with its code's
// meaning, a missing code as missing.
func TestNegotiateWhy(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer func(w *mcptest.Writer, r *mcptest.Request)
		want   string
	}{
		{"401 with a JSON-RPC body", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`)
			w.JSON(401, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"message": "unauthorized"}})
		}, "the server refused server/discover with HTTP 401 Unauthorized (authorization), which does not tell its version: trying the session-based versions (initialize negotiates one)"},
		{"method not found", func(w *mcptest.Writer, r *mcptest.Request) {
			w.JSON(200, map[string]any{"jsonrpc": "2.0", "id": r.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		}, "the server answers server/discover with HTTP 200 and JSON-RPC error -32601 (method not found), not a 2026-07-28 answer: it does not speak 2026-07-28, so the session-based versions (initialize negotiates one)"},
		{"error without a code", func(w *mcptest.Writer, r *mcptest.Request) {
			w.JSON(400, map[string]any{"jsonrpc": "2.0", "id": r.ID, "error": map[string]any{"message": "no"}})
		}, "the server answers server/discover with HTTP 400 and a JSON-RPC error without a code, not a 2026-07-28 answer: it does not speak 2026-07-28, so the session-based versions (initialize negotiates one)"},
	} {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "server/discover", mcptest.Any), tt.answer)
		ts := httptest.NewServer(fake)
		n, err := driver.Negotiate(t.Context(), &driver.Config{URL: ts.URL})
		ts.Close()
		if err != nil || n.Why != tt.want || n.Modern {
			t.Errorf("%s: %q (%v)\nwant %q", tt.name, n.Why, err, tt.want)
		}
	}
}
