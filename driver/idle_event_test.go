package driver_test

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// --stream-idle-timeout means no complete event (or keep-alive) for that
// long: a server that drips one event a byte at a time, faster than the
// timeout, is cut by it (with resumption off: the error says so); servers whose events or keep-alives keep coming
// for longer than the timeout are not.
func TestStreamIdleCountsWholeEvents(t *testing.T) {
	// Servers below write every 50 ms (a drip every 10 ms): a second of
	// silence between two writes would take a stall far beyond a loaded
	// machine's scheduling delays.
	const idle = time.Second
	resp := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}`
	tests := []struct {
		name  string
		serve func(w *mcptest.Writer, r *mcptest.Request)
		idle  bool // want ErrStreamIdle
	}{
		{"drip inside one event", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{ID: "p0", EmptyData: true})
			// At most 6 s of drip, one byte each 10 ms: the event never ends.
			drip := "data: " + resp[:len(resp)-2] + strings.Repeat(" ", 600)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for i := 0; i < len(drip) && r.Ctx.Err() == nil; i++ {
				w.Raw(drip[i : i+1])
				<-tick.C
			}
		}, true},
		{"events for longer than the timeout", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{ID: "p0", EmptyData: true})
			tick := time.NewTicker(idle / 20)
			defer tick.Stop()
			for i := range 30 { // 1.5× the timeout
				w.Events(mcptest.Event{ID: "e" + strconv.Itoa(i), Data: mcptest.Progress("1", float64(i), 30)})
				<-tick.C
			}
			w.Events(mcptest.Event{ID: "r", Data: resp})
		}, false},
		{"keep-alives for longer than the timeout", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{ID: "p0", EmptyData: true})
			tick := time.NewTicker(idle / 20)
			defer tick.Stop()
			for range 30 {
				w.Raw(": keep-alive\n")
				<-tick.C
			}
			w.Events(mcptest.Event{ID: "r", Data: resp})
		}, false},
		{"one large event in many small writes", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{ID: "p0", EmptyData: true})
			big := "id: r\ndata: " + resp[:len(resp)-9] + strings.Repeat("z", 1<<20) + resp[len(resp)-9:] + "\n\n"
			for i := 0; i < len(big); i += 4 << 10 {
				w.Raw(big[i:min(i+4<<10, len(big))])
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := mcptest.New()
			fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), tt.serve)
			ts := httptest.NewServer(fake)
			defer ts.Close()
			cfg := &driver.Config{URL: ts.URL + "/mcp", StreamIdleTimeout: idle, MaxResumes: -1}
			s, _ := driver.NewSession(cfg, 0)
			var init driver.Result
			if err := s.Initialize(t.Context(), &init); err != nil {
				t.Fatal(err)
			}
			var res driver.Result
			s.Do(t.Context(), callEcho(t), &res)
			// With resumption off the idle break is named in the error's text.
			if got := res.Err != nil && strings.Contains(res.Err.Error(), "stream idle timeout"); got != tt.idle {
				t.Fatalf("idle timeout %v, want %v (err %v)", got, tt.idle, res.Err)
			}
			if !tt.idle && res.Err != nil {
				t.Fatal(res.Err)
			}
		})
	}
}
