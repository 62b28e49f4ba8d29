package driver_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// Op.Render makes each request's params from the Result's VU and
// Iteration, once per request: a request retried after a 404 (re-initialize)
// resends the same params, with RequestPlaceholder replaced by the same
// key; the next request renders again.
func TestOpRenderPerRequest(t *testing.T) {
	fake := mcptest.New()
	var sent atomic.Bool
	fake.Handle(mcptest.K("POST", any_, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		if !sent.Swap(true) {
			fake.SessionID = "s2"
			http.Error(w, "session gone", http.StatusNotFound)
			return
		}
		w.Result(r, okText("ok"))
	})
	s := start(t, fake, nil)
	o := op(t, "tools/call", `{"name":"echo","arguments":{"text":"${request}"}}`, false)
	renders := 0
	o.Render = func(dst []byte, c driver.RenderContext) []byte {
		renders++
		dst = append(dst, `{"name":"echo","arguments":{"text":"${request}","n":`...)
		dst = strconv.AppendInt(dst, int64(c.VU)*1000+c.Iteration, 10)
		return append(dst, "}}"...)
	}
	var res driver.Result
	for it := range int64(2) {
		res.Reset()
		res.VU, res.Iteration = 3, it
		s.Do(t.Context(), o, &res)
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	var got []string
	for _, r := range fake.Find(mcptest.K("POST", any_, "tools/call", "")) {
		got = append(got, string(r.Params))
	}
	want := []string{
		`{"name":"echo","arguments":{"text":"s1-1","n":3000}}`, // the 404
		`{"name":"echo","arguments":{"text":"s1-1","n":3000}}`, // its retry
		`{"name":"echo","arguments":{"text":"s1-2","n":3001}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("params sent (-want +got):\n%s", diff)
	}
	if renders != 2 {
		t.Errorf("Render called %d times, want 2 (once per request)", renders)
	}
}

// An op with Render cannot fill Mcp-Param-* headers per request: PrepareOps
// refuses it when its tool annotates arguments with x-mcp-header, and
// accepts it when the tool has none.
func TestPrepareOpsRefusesRenderWithParamHeaders(t *testing.T) {
	fake := modernFake()
	fake.Handle(mcptest.K("POST", "", "tools/list", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"tools": []any{
			map[string]any{"name": "geo", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}},
			map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}},
		}})
	})
	ts := httptest.NewServer(fake)
	defer ts.Close()
	cfg := &driver.Config{URL: ts.URL + "/mcp", Protocol: driver.Protocol20260728}
	render := func(dst []byte, _ driver.RenderContext) []byte {
		return append(dst, `{"name":"geo","arguments":{"region":"eu"}}`...)
	}
	geo := op(t, "tools/call", `{"name":"geo","arguments":{"region":"{{.region}}"}}`, false)
	echo := op(t, "tools/call", `{"name":"echo","arguments":{"text":"{{seq}}"}}`, false)
	geo.Render, echo.Render = render, render
	if err := driver.PrepareOps(t.Context(), cfg, []*driver.Op{echo}); err != nil {
		t.Fatalf("a tool without x-mcp-header: %v", err)
	}
	err := driver.PrepareOps(t.Context(), cfg, []*driver.Op{echo, geo})
	want := "op tools/call: tool geo sends arguments as Mcp-Param-* headers (x-mcp-header), which rendered (templated) arguments cannot fill per request"
	if err == nil || err.Error() != want {
		t.Fatalf("PrepareOps: %v, want %q", err, want)
	}
}
