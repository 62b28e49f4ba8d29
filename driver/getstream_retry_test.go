package driver_test

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// A GET stream that broke once, whose first reconnect is refused (503)
// and whose second is accepted, broke once: the refused attempt is a
// reconnect attempt (Resumes), not a second break (it used to be counted
// as one, which made the h2 connection-cut test see 5 breaks for 4 cuts
// on a loaded machine).
func TestGETStreamRefusedReconnectIsNotABreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		var mu sync.Mutex
		gets := 0
		var lastIDs []string
		fake.Handle(mcptest.K("GET", "s1", "", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
			mu.Lock()
			n := gets
			gets++
			lastIDs = append(lastIDs, r.LastEventID)
			mu.Unlock()
			switch n {
			case 0: // one event, then the stream ends
				w.Events(mcptest.Event{ID: "e1", Retry: 10, Data: map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
					"params": map[string]any{"level": "info", "data": "one"}}})
			case 1: // the first reconnect is refused
				w.JSON(http.StatusServiceUnavailable, map[string]any{"error": "busy"})
			default: // then the stream resumes and stays open
				w.Events(mcptest.Event{ID: "e2", Data: map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
					"params": map[string]any{"level": "info", "data": "two"}}})
				<-r.Ctx.Done()
			}
		})
		s, _, stop := pipeSession(t, fake, nil)
		defer stop()
		if err := s.OpenStream(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second) // fake time: the break, both attempts and their waits
		synctest.Wait()
		st := s.StreamStats()
		if st.Breaks != 1 || len(st.Resumes) != 2 || st.Resumes[0].OK || st.Resumes[0].Status != http.StatusServiceUnavailable || !st.Resumes[1].OK || !st.Open || st.Events != 2 {
			t.Fatalf("breaks %d (want 1), attempts %+v (want a refused 503 then an accepted one), open %v, events %d", st.Breaks, st.Resumes, st.Open, st.Events)
		}
		mu.Lock()
		ids := append([]string(nil), lastIDs...)
		mu.Unlock()
		if len(ids) != 3 || ids[1] != "e1" || ids[2] != "e1" {
			t.Fatalf("Last-Event-ID of the GETs %q, want the resume from e1 twice", ids)
		}
		if st.Ledger.Faulty() {
			t.Fatalf("ledger %v", st.Ledger.Evidence)
		}
		s.Close(t.Context())
	})
}
