package driver_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/sse"
	"github.com/mcpbench/mcpbench/refserver"
)

// The reference server's largest payload reaches the client whole under
// the client's default limits, over SSE (a stateful server) and JSON alike
// (issue: 100 % sse-malformed against our own server); one event larger
// than the limit fails with an error naming the limit and the flag that
// raises it.
func TestLargestPayloadFitsDefaultLimits(t *testing.T) {
	payload := func(n int) *driver.Op {
		return op(t, "tools/call", `{"name":"payload","arguments":{"bytes":`+strconv.Itoa(n)+`}}`, true)
	}
	for _, mode := range []refserver.Mode{refserver.ModeStateful, refserver.ModeJSON} {
		t.Run(string(mode), func(t *testing.T) {
			srv := startRef(t, mode)
			s, err := driver.NewSession(&driver.Config{URL: srv.URL()}, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(t.Context())
			var init driver.Result
			if err := s.Initialize(t.Context(), &init); err != nil {
				t.Fatal(err)
			}
			res := do(t, s, payload(refserver.MaxPayloadBytes))
			if res.BytesIn < refserver.MaxPayloadBytes {
				t.Fatalf("read %d bytes, want the %d-byte payload", res.BytesIn, refserver.MaxPayloadBytes)
			}
		})
	}
	t.Run("over max_event_bytes", func(t *testing.T) {
		srv := startRef(t, refserver.ModeStateful)
		s, err := driver.NewSession(&driver.Config{URL: srv.URL(), MaxEventBytes: 1 << 20}, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(t.Context())
		var init driver.Result
		if err := s.Initialize(t.Context(), &init); err != nil {
			t.Fatal(err)
		}
		var res driver.Result
		s.Do(t.Context(), payload(1<<20), &res)
		if !errors.Is(res.Err, sse.ErrEventTooLarge) || !strings.Contains(res.Err.Error(), "max_event_bytes 1MiB; raise it with driver.Config.MaxEventBytes") {
			t.Fatalf("err %v: want one naming max_event_bytes 1MiB and driver.Config.MaxEventBytes", res.Err)
		}
	})
}
