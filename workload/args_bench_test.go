package workload

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
)

// benchSSE answers like driver's BenchmarkToolsCallSSE server: a priming
// event and the response over SSE, as little work as possible so the
// client's cost shows.
func benchSSE(w http.ResponseWriter, r *http.Request) {
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

// BenchmarkArguments is the driver's hot path (one tools/call with a
// progress token, answered over SSE in-process; allocations include the
// server's) with arguments of the same shape fixed, templated, drawn from
// a CSV file, and through a full text/template (printf). Fixed and
// templated must be within 10 % in allocations per op.
func BenchmarkArguments(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(benchSSE))
	defer ts.Close()
	csvFile := filepath.Join(b.TempDir(), "users.csv")
	if err := os.WriteFile(csvFile, []byte("user,city\nann,Zürich\nbob,Berlin\ncy,Lyon\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"fixed", map[string]any{"text": "hello-17", "n": 42, "id": "5b0f3c3e-8f0e-4d1a-9c61-0d6f4b2a7e19", "user": "ann"}},
		{"templated", map[string]any{"text": "hello-{{seq}}", "n": "{{rand_int 1 100}}", "id": "{{uuid}}", "user": "{{rand_string 3}}"}},
		{"data", map[string]any{"text": "hello-{{seq}}", "n": "{{rand_int 1 100}}", "id": "{{uuid}}", "user": "{{.user}}"}},
		{"printf", map[string]any{"text": `{{printf "hello-%d" seq}}`, "n": 42, "id": "5b0f3c3e-8f0e-4d1a-9c61-0d6f4b2a7e19", "user": "ann"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := argProfile("echo", c.args)
			p.URL, p.Ops[0].Progress, p.Data = ts.URL, true, &DataSpec{File: csvFile}
			pl, err := Compile(p, nil)
			if err != nil {
				b.Fatal(err)
			}
			op := pl.Ops[0]
			s, err := driver.NewSession(&pl.Driver, 1)
			if err != nil {
				b.Fatal(err)
			}
			var res driver.Result
			if err := s.Initialize(b.Context(), &res); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var it int64
			for b.Loop() {
				res.Reset()
				res.VU, res.Iteration = 1, it
				it++
				s.Do(b.Context(), op, &res)
				if res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}

// BenchmarkRender is Op.Render alone: the cost templated arguments add to
// a request.
func BenchmarkRender(b *testing.B) {
	p := argProfile("echo", map[string]any{"text": "hello-{{seq}}", "n": "{{rand_int 1 100}}", "id": "{{uuid}}", "user": "{{rand_string 3}}"})
	pl, err := Compile(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	op := pl.Ops[0]
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	var it int64
	for b.Loop() {
		buf = op.Render(buf[:0], driver.RenderContext{VU: 1, Iteration: it})
		it++
	}
}
