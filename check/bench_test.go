package check_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpbench/mcpbench/check"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// benchCheck times driver.BenchmarkToolsCallSSE's call (echo over SSE,
// progress token, minimal in-process server) with the given checks on the
// op (none: Inspect stays nil), so the checks' added cost reads against
// the same call in the same binary.
func benchCheck(b *testing.B, exprs ...string) {
	ts := httptest.NewServer(http.HandlerFunc(mcptest.BenchSSE))
	defer ts.Close()
	s, err := driver.NewSession(&driver.Config{URL: ts.URL}, 1)
	if err != nil {
		b.Fatal(err)
	}
	var res driver.Result
	if err := s.Initialize(b.Context(), &res); err != nil {
		b.Fatal(err)
	}
	o, _ := driver.NewOp("", "tools/call", []byte(`{"name":"echo","arguments":{"text":"hello"}}`), true)
	if len(exprs) > 0 {
		var cs []*check.Check
		for _, e := range exprs {
			c, err := check.Parse(e)
			if err != nil {
				b.Fatal(err)
			}
			cs = append(cs, c)
		}
		set, err := check.NewSet(cs, "echo", nil)
		if err != nil {
			b.Fatal(err)
		}
		o.Inspect = set.Inspect
	}
	b.ReportAllocs()
	for b.Loop() {
		res.Reset()
		s.Do(b.Context(), o, &res)
		if res.Err != nil || res.Checks.Failed != 0 {
			b.Fatal(res.Err, res.Checks)
		}
	}
}

func BenchmarkToolsCallSSENoCheck(b *testing.B)  { benchCheck(b) }
func BenchmarkToolsCallSSEOneCheck(b *testing.B) { benchCheck(b, `content.0.text == "hello"`) }
func BenchmarkToolsCallSSERegexCheck(b *testing.B) {
	benchCheck(b, `content.0.text ~ "^hel+o$"`)
}

// BenchmarkEval is one check on a result in memory: the check alone.
func BenchmarkEval(b *testing.B) {
	c, _ := check.Parse(`content.0.text == "hello"`)
	result := []byte(`{"content":[{"type":"text","text":"hello"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := c.Eval(result); !ok {
			b.Fatal("failed")
		}
	}
}
