package driver_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// counts builds a verdict array from pairs.
func counts(kv ...any) [driver.NumVerdicts]int {
	var c [driver.NumVerdicts]int
	for i := 0; i < len(kv); i += 2 {
		c[kv[i].(driver.Verdict)] = kv[i+1].(int)
	}
	return c
}

// pipeSession starts an initialized session against fake inside the
// bubble; the returned stop must be deferred.
func pipeSession(t *testing.T, fake *mcptest.Server, mod func(*driver.Config)) (*driver.Session, *http.Client, func()) {
	t.Helper()
	hc, stop := mcptest.ServePipe(fake)
	cfg := &driver.Config{URL: "http://fake/mcp", HTTPClient: hc, DefaultRetry: 100 * time.Millisecond, StreamIdleTimeout: time.Second}
	if mod != nil {
		mod(cfg)
	}
	s, _ := driver.NewSession(cfg, 1)
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatal(err)
	}
	return s, hc, stop
}

// cutAfterFirstProgress answers tools/call on session s1 with a priming
// event (a0) and progress 1 of total (a1), then cuts the stream.
func cutAfterFirstProgress(fake *mcptest.Server, total float64) {
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Events(mcptest.Event{ID: "a0", EmptyData: true}, mcptest.Event{ID: "a1", Data: mcptest.Progress(r.ProgressToken(), 1, total)})
		w.Cut()
	})
}

// first finds the tools/call a resume belongs to.
func first(fake *mcptest.Server) *mcptest.Request {
	return fake.Find(mcptest.K("POST", mcptest.Any, "tools/call", mcptest.Any))[0]
}

// Each planted fault shows up as exactly its verdicts, nothing else.
func TestLedgerReportsPlantedFaults(t *testing.T) {
	tests := []struct {
		name  string
		plant func(fake *mcptest.Server)
		want  [driver.NumVerdicts]int
	}{
		{"clean stream with a resume", func(fake *mcptest.Server) {
			cutAfterFirstProgress(fake, 3)
			fake.Handle(mcptest.K("GET", "s1", "", "a1"), func(w *mcptest.Writer, r *mcptest.Request) {
				c := first(fake)
				w.Events(mcptest.Event{ID: "a2", Data: mcptest.Progress(c.ProgressToken(), 2, 3)},
					mcptest.Event{ID: "a3", Data: mcptest.Progress(c.ProgressToken(), 3, 3)},
					mcptest.Event{ID: "a4", Data: mcptest.Response(c.ID, okText("ok"))})
			})
		}, counts()},
		{"drops the last progress notification before the result", func(fake *mcptest.Server) {
			fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
				tok := r.ProgressToken()
				w.Events(mcptest.Event{ID: "a0", EmptyData: true},
					mcptest.Event{ID: "a1", Data: mcptest.Progress(tok, 1, 3)},
					mcptest.Event{ID: "a2", Data: mcptest.Progress(tok, 2, 3)},
					mcptest.Event{ID: "a4", Data: mcptest.Response(r.ID, okText("ok"))})
			})
		}, counts(driver.VerdictLost, 1)},
		{"duplicates an event on replay", func(fake *mcptest.Server) {
			cutAfterFirstProgress(fake, 2)
			fake.Handle(mcptest.K("GET", "s1", "", "a1"), func(w *mcptest.Writer, r *mcptest.Request) {
				c := first(fake)
				w.Events(mcptest.Event{ID: "a1", Data: mcptest.Progress(c.ProgressToken(), 1, 2)}, // already delivered
					mcptest.Event{ID: "a2", Data: mcptest.Progress(c.ProgressToken(), 2, 2)},
					mcptest.Event{ID: "a3", Data: mcptest.Response(c.ID, okText("ok"))})
			})
		}, counts(driver.VerdictDuplicated, 1)},
		{"replays a message of another stream", func(fake *mcptest.Server) {
			cutAfterFirstProgress(fake, 2)
			fake.Handle(mcptest.K("GET", "s1", "", "a1"), func(w *mcptest.Writer, r *mcptest.Request) {
				c := first(fake)
				w.Events(mcptest.Event{ID: "b7", Data: mcptest.Progress(`"other-call"`, 5, 9)}, // from another stream
					mcptest.Event{ID: "a2", Data: mcptest.Progress(c.ProgressToken(), 2, 2)},
					mcptest.Event{ID: "a3", Data: mcptest.Response(c.ID, okText("ok"))})
			})
		}, counts(driver.VerdictCrossStream, 1)},
		{"never ends a resumed stream", func(fake *mcptest.Server) {
			cutAfterFirstProgress(fake, 2)
			fake.Handle(mcptest.K("GET", "s1", "", "a1"), func(w *mcptest.Writer, r *mcptest.Request) {
				c := first(fake)
				w.Events(mcptest.Event{ID: "a2", Data: mcptest.Progress(c.ProgressToken(), 2, 2)},
					mcptest.Event{ID: "a3", Data: mcptest.Response(c.ID, okText("ok"))})
				<-r.Ctx.Done() // the stream stays open after the response
			})
		}, counts(driver.VerdictUnterminated, 1)},
		{"answers a live resume with nothing", func(fake *mcptest.Server) {
			cutAfterFirstProgress(fake, 3)
			fake.Handle(mcptest.K("GET", "s1", "", "a1"), func(w *mcptest.Writer, r *mcptest.Request) {
				w.StartSSE()
				w.Flush()
				<-r.Ctx.Done() // accepted, then silence
			})
		}, counts(driver.VerdictLost, 3, driver.VerdictSilentResume, 5)}, // progress 2 and 3, and the response; every one of the 5 resumes silent
		{"answers one live resume with nothing, the next in full", func(fake *mcptest.Server) {
			cutAfterFirstProgress(fake, 3)
			var n sync.Mutex
			resumes := 0
			fake.Handle(mcptest.K("GET", "s1", "", "a1"), func(w *mcptest.Writer, r *mcptest.Request) {
				n.Lock()
				resumes++
				silent := resumes == 1
				n.Unlock()
				if silent {
					w.StartSSE()
					w.Flush()
					<-r.Ctx.Done() // accepted, then silence until the idle timeout
					return
				}
				c := first(fake)
				w.Events(mcptest.Event{ID: "a2", Data: mcptest.Progress(c.ProgressToken(), 2, 3)},
					mcptest.Event{ID: "a3", Data: mcptest.Progress(c.ProgressToken(), 3, 3)},
					mcptest.Event{ID: "a4", Data: mcptest.Response(c.ID, okText("ok"))})
			})
		}, counts(driver.VerdictSilentResume, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := mcptest.New()
				tt.plant(fake)
				s, _, stop := pipeSession(t, fake, nil)
				defer stop()
				var res driver.Result
				s.Do(t.Context(), callEcho(t), &res)
				if diff := cmp.Diff(driver.VerdictMap(tt.want), driver.VerdictMap(res.Ledger.Counts)); diff != "" {
					t.Fatalf("verdicts (-planted +reported):\n%s (err %v)", diff, res.Err)
				}
				s.Close(t.Context())
			})
		})
	}
}

// Two calls of one session run at once and the server delivers the first
// call's last notification on the second call's stream: the second stream
// has a cross-stream message and the first lost one.
func TestLedgerMisroutedConcurrentNotification(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		var mu sync.Mutex
		started := map[string]*mcptest.Request{}
		both := make(chan struct{})
		fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			var p struct {
				Name string `json:"name"`
			}
			json.Unmarshal(r.Params, &p)
			mu.Lock()
			started[p.Name] = r
			if len(started) == 2 {
				close(both)
			}
			mu.Unlock()
			<-both
			a := started["a"]
			if p.Name == "a" {
				w.Events(mcptest.Event{ID: "a0", EmptyData: true}, mcptest.Event{ID: "a1", Data: mcptest.Progress(r.ProgressToken(), 1, 2)})
				time.Sleep(500 * time.Millisecond) // b delivers a's 2/2 meanwhile (less than the 1 s idle timeout)
				w.Events(mcptest.Event{ID: "a3", Data: mcptest.Response(r.ID, okText("a"))})
				return
			}
			w.Events(mcptest.Event{ID: "b0", EmptyData: true},
				mcptest.Event{ID: "b1", Data: mcptest.Progress(a.ProgressToken(), 2, 2)}, // a's, on b's stream
				mcptest.Event{ID: "b2", Data: mcptest.Progress(r.ProgressToken(), 1, 1)},
				mcptest.Event{ID: "b3", Data: mcptest.Response(r.ID, okText("b"))})
		})
		sa, _, stop := pipeSession(t, fake, nil)
		defer stop()
		sb, _, stop2 := pipeSession(t, fake, nil)
		defer stop2()
		// The two sessions share the fake's session id s1; their request
		// ids must differ for the cross-check to be meaningful.
		var warm driver.Result
		sb.Do(t.Context(), op(t, "ping", "", false), &warm)
		var ra, rb driver.Result
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); sa.Do(t.Context(), op(t, "tools/call", `{"name":"a"}`, true), &ra) }()
		go func() { defer wg.Done(); sb.Do(t.Context(), op(t, "tools/call", `{"name":"b"}`, true), &rb) }()
		wg.Wait()
		if diff := cmp.Diff(driver.VerdictMap(counts(driver.VerdictLost, 1)), driver.VerdictMap(ra.Ledger.Counts)); diff != "" {
			t.Errorf("call a (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(driver.VerdictMap(counts(driver.VerdictCrossStream, 1)), driver.VerdictMap(rb.Ledger.Counts)); diff != "" {
			t.Errorf("call b (-want +got):\n%s", diff)
		}
	})
}

// After DELETE the server must answer 404 to the session.
func TestLedgerSessionHygiene(t *testing.T) {
	tests := []struct {
		name   string
		status int
		want   driver.Verdict
	}{
		{"404 as required", 404, driver.NumVerdicts},
		{"keeps accepting a deleted session", 200, driver.VerdictDeletedSessionAccepted},
		{"answers 400 where 404 is required", 400, driver.VerdictWrongMissingStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := mcptest.New()
				fake.Handle(mcptest.K("POST", "s1", "ping", ""), func(w *mcptest.Writer, r *mcptest.Request) {
					if fake.Deleted("s1") {
						if tt.status != 200 {
							http.Error(w, "gone", tt.status)
							return
						}
					}
					w.Result(r, map[string]any{})
				})
				s, _, stop := pipeSession(t, fake, func(c *driver.Config) { c.CheckDeleted = true })
				defer stop()
				if err := s.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
				h := s.Hygiene()
				if !h.Checked {
					t.Fatal("no check made")
				}
				want := driver.Hygiene{Checked: true, Verdict: tt.want, Status: tt.status, SessionID: "s1"}
				if diff := cmp.Diff(want, h); diff != "" {
					t.Fatalf("(-want +got):\n%s", diff)
				}
				if h.Faulty() != (tt.want != driver.NumVerdicts) {
					t.Fatalf("Faulty() = %v", h.Faulty())
				}
			})
		})
	}
}
