package driver_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/refserver"
)

// Op.Inspect sees each result member exactly once, on SSE and JSON
// answers, and a result with isError as well (Result.Err set after); it
// is not called for an RPC error.
func TestInspectSeesEachResult(t *testing.T) {
	for _, mode := range []refserver.Mode{refserver.ModeStateful, refserver.ModeJSON} {
		t.Run(string(mode), func(t *testing.T) {
			srv := startRef(t, mode)
			s, err := driver.NewSession(&driver.Config{URL: srv.URL()}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(t.Context())
			var init driver.Result
			if err := s.Initialize(t.Context(), &init); err != nil {
				t.Fatal(err)
			}
			var seen []string
			inspect := func(result []byte, res *driver.Result) {
				var r struct {
					Content []struct{ Text string }
					IsError bool
				}
				if err := json.Unmarshal(result, &r); err != nil {
					t.Errorf("result %q: %v", result, err)
				}
				text := ""
				if len(r.Content) > 0 {
					text = r.Content[0].Text
				}
				seen = append(seen, text)
			}
			echo := op(t, "tools/call", `{"name":"echo","arguments":{"text":"hello"}}`, false)
			echo.Inspect = inspect
			do(t, s, echo)
			bad := op(t, "tools/call", `{"name":"no-such-tool","arguments":{}}`, false)
			bad.Inspect = inspect
			var res driver.Result
			s.Do(t.Context(), bad, &res)
			if res.Err == nil {
				t.Fatal("an unknown tool succeeded")
			}
			if len(seen) < 1 || seen[0] != "hello" {
				t.Fatalf("inspected %q, want the echo first", seen)
			}
			// go-sdk answers an unknown tool with an RPC error or with
			// isError: one inspection more only in the second case.
			want := 1
			if res.Class == driver.ClassToolError {
				want = 2
			}
			if len(seen) != want {
				t.Fatalf("inspected %d results (%q), class %v: want %d", len(seen), seen, res.Class, want)
			}
		})
	}
}
