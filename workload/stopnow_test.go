package workload

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// measuredAt notes how many DELETEs the server had when the summary of
// the measured run was handed out (MeasuredSink), and calls then.
type measuredAt struct {
	deletes *atomic.Int64
	at      atomic.Int64
	then    func()
}

func (m *measuredAt) Start(*results.RunInfo)           {}
func (m *measuredAt) Interval(*results.IntervalRecord) {}
func (m *measuredAt) End(*results.RunEnd)              {}
func (m *measuredAt) Measured(*results.Summary) {
	m.at.Store(m.deletes.Load())
	if m.then != nil {
		m.then()
	}
}

// A stop at once (Options.StopNow: a second Ctrl-C) cuts the sessions'
// closes that a server holds: the run returns, its summary counts the 4
// cut closes as close failures and says so in a note; no DELETE went
// out before the summary of the measured window (the VUs that see the
// window's end park their sessions). Against a server that answers its
// DELETEs, StopNow never done changes nothing: 4 closed, no note.
func TestStopNowCutsCloses(t *testing.T) {
	for _, hold := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			fake := mcptest.New()
			fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
				time.Sleep(10 * time.Millisecond) // fake time: the window passes
				w.Result(r, map[string]any{"content": []any{}})
			})
			var deletes atomic.Int64
			release := make(chan struct{})
			fake.Handle(mcptest.K("DELETE", mcptest.Any, "", mcptest.Any), func(w *mcptest.Writer, r *mcptest.Request) {
				deletes.Add(1)
				if hold {
					<-release
				}
				w.WriteHeader(200)
			})
			hc, stop := mcptest.ServePipe(fake)
			defer stop()
			defer close(release) // before stop, which waits for the handlers
			p := echoProfile()
			p.VUs, p.Duration = 4, profile.Duration(2*time.Second)
			pl, err := Compile(p, hc)
			if err != nil {
				t.Fatal(err)
			}
			now, cut := context.WithCancel(context.Background())
			defer cut()
			m := &measuredAt{deletes: &deletes}
			if hold {
				m.then = func() { time.AfterFunc(time.Second, cut) } // the DELETEs are out and held by then
			}
			sum, err := Run(t.Context(), pl, Options{Sinks: []results.Sink{m}, StopNow: now})
			if err != nil {
				t.Fatal(err)
			}
			notes := strings.Join(sum.Notes, "\n")
			if got := m.at.Load(); got != 0 {
				t.Errorf("%d DELETEs before the summary of the measured window, want 0", got)
			}
			if hold {
				if sum.Sessions.CloseFails != 4 || sum.Sessions.Closed != 0 || !strings.Contains(notes, "stopped at once (a second interrupt): 4 sessions' closes (DELETE) were cut") {
					t.Fatalf("closes: %d closed, %d failed; notes %q", sum.Sessions.Closed, sum.Sessions.CloseFails, sum.Notes)
				}
				return
			}
			if sum.Sessions.Closed != 4 || sum.Sessions.CloseFails != 0 || strings.Contains(notes, "stopped at once") {
				t.Fatalf("closes: %d closed, %d failed; notes %q", sum.Sessions.Closed, sum.Sessions.CloseFails, sum.Notes)
			}
		})
	}
}
