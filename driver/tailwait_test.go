package driver_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// A response stream left open after its response holds its caller for
// the 2 s linger: Result.TailWait says how long (so the summary can say
// why throughput fell); a stream that ends has none.
func TestTailWaitOfUnterminatedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(100 * time.Millisecond)
			w.Events(mcptest.Event{ID: "a0", EmptyData: true}, mcptest.Event{ID: "a1", Data: mcptest.Response(r.ID, okText("ok"))})
			<-r.Ctx.Done() // keeps the stream open
		})
		s, _, stop := pipeSession(t, fake, nil)
		defer stop()
		var res driver.Result
		s.Do(t.Context(), callEcho(t), &res)
		if res.Err != nil || res.ServiceTime() != 100*time.Millisecond || res.TailWait != 2*time.Second {
			t.Fatalf("service %v, tail wait %v (err %v): want 100 ms and the 2 s linger", res.ServiceTime(), res.TailWait, res.Err)
		}
	})
}

// The official Go SDK server ends every response stream: no tail wait.
func TestTailWaitRefServerNone(t *testing.T) {
	s := refSession(t, startRef(t, refserver.ModeStateful))
	for range 20 {
		r := do(t, s, op(t, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, false))
		if r.TailWait != 0 || r.Ledger.Faulty() {
			t.Fatalf("tail wait %v, verdicts %v", r.TailWait, r.Ledger.Evidence)
		}
	}
}
