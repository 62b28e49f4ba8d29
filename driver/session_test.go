package driver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
)

const any_ = mcptest.Any

// start serves fake over loopback and returns an initialized session.
func start(t *testing.T, fake *mcptest.Server, mod func(*driver.Config)) *driver.Session {
	t.Helper()
	ts := httptest.NewServer(fake)
	t.Cleanup(ts.Close)
	cfg := &driver.Config{URL: ts.URL + "/mcp", RequestTimeout: 10 * time.Second}
	if mod != nil {
		mod(cfg)
	}
	s, err := driver.NewSession(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return s
}

func op(t *testing.T, method string, params string, progress bool) *driver.Op {
	t.Helper()
	o, err := driver.NewOp("", method, json.RawMessage(params), progress)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func callEcho(t *testing.T) *driver.Op {
	return op(t, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, true)
}

func okText(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

func TestJSONAnswer(t *testing.T) {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, okText("hi"))
	})
	s := start(t, fake, nil)
	var res driver.Result
	s.Do(t.Context(), callEcho(t), &res)
	if res.Err != nil || res.Class != driver.ClassOK || res.Status != 200 {
		t.Fatalf("res = class %v err %v status %d", res.Class, res.Err, res.Status)
	}
	if res.Start.IsZero() || res.FirstByte.Before(res.Start) || res.End.Before(res.FirstByte) || res.BytesIn == 0 || res.BytesOut == 0 {
		t.Fatalf("times/bytes not filled: %+v", res)
	}
	if res.Ledger.Checked {
		t.Fatal("a JSON answer has no stream to judge")
	}
}

func TestSSEAnswerWithPrimingAndProgress(t *testing.T) {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		tok := r.ProgressToken()
		w.Events(
			mcptest.Event{ID: "a_0", EmptyData: true}, // priming event (SEP-1699)
			mcptest.Event{ID: "a_1", Data: mcptest.Progress(tok, 1, 2)},
			mcptest.Event{ID: "a_2", Data: mcptest.Progress(tok, 2, 2)},
			mcptest.Event{ID: "a_3", Data: mcptest.Response(r.ID, okText("hi"))},
		)
	})
	s := start(t, fake, nil)
	var res driver.Result
	s.Do(t.Context(), callEcho(t), &res)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Events != 3 || res.Progress != 2 || len(res.Resumes) != 0 {
		t.Fatalf("events %d progress %d resumes %d, want 3 2 0", res.Events, res.Progress, len(res.Resumes))
	}
	if !res.Ledger.Checked || res.Ledger.Faulty() {
		t.Fatalf("ledger: checked %v counts %v", res.Ledger.Checked, res.Ledger.Counts)
	}
	if diff := cmp.Diff([]string{"a_0", "a_1", "a_2", "a_3"}, res.Ledger.EventIDs()); diff != "" {
		t.Fatalf("event ids (-want +got):\n%s", diff)
	}
}

// A server that answers JSON and switches to SSE only when it has a
// notification to send (per request: the content type decides).
func TestJSONThenSSEOnNotification(t *testing.T) {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		if tok := r.ProgressToken(); tok != "" {
			w.Events(mcptest.Event{Data: mcptest.Progress(tok, 1, 1)}, mcptest.Event{Data: mcptest.Response(r.ID, okText("x"))})
			return
		}
		w.Result(r, okText("x"))
	})
	s := start(t, fake, nil)
	for _, o := range []*driver.Op{op(t, "tools/call", `{"name":"a"}`, false), op(t, "tools/call", `{"name":"a"}`, true), op(t, "tools/call", `{"name":"a"}`, false)} {
		var res driver.Result
		s.Do(t.Context(), o, &res)
		if res.Err != nil {
			t.Fatalf("progress=%v: %v", o.Progress, res.Err)
		}
		if o.Progress != res.Ledger.Checked || (o.Progress && res.Progress != 1) {
			t.Fatalf("progress=%v: stream checked %v, progress %d", o.Progress, res.Ledger.Checked, res.Progress)
		}
	}
}

func TestEventsWithoutIDsAndNamedEvents(t *testing.T) {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Events(
			mcptest.Event{Type: "prime", Comment: "hello"},
			mcptest.Event{Type: "message", Data: mcptest.Progress(r.ProgressToken(), 1, 0)},
			mcptest.Event{Data: mcptest.Response(r.ID, okText("x"))},
			mcptest.Event{Type: "close"},
		)
	})
	s := start(t, fake, nil)
	var res driver.Result
	s.Do(t.Context(), callEcho(t), &res)
	if res.Err != nil || res.Events != 2 || res.Progress != 1 {
		t.Fatalf("err %v events %d progress %d", res.Err, res.Events, res.Progress)
	}
}

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler mcptest.Handler
		class   driver.Class
		status  int
	}{
		{"202 to a request", func(w *mcptest.Writer, r *mcptest.Request) { w.WriteHeader(202) }, driver.ClassBadResponse, 202},
		{"400", func(w *mcptest.Writer, r *mcptest.Request) { http.Error(w, "bad", 400) }, driver.ClassHTTPStatus, 400},
		{"500", func(w *mcptest.Writer, r *mcptest.Request) { http.Error(w, "oops", 500) }, driver.ClassHTTPStatus, 500},
		{"HTML page", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>hi</html>"))
		}, driver.ClassBadResponse, 200},
		{"JSON that is not JSON-RPC", func(w *mcptest.Writer, r *mcptest.Request) { w.JSON(200, map[string]any{"hello": 1}) }, driver.ClassBadResponse, 200},
		{"JSON-RPC error", func(w *mcptest.Writer, r *mcptest.Request) {
			w.JSON(200, mcptest.ErrorResponse(r.ID, -32602, "bad params"))
		}, driver.ClassJSONRPC, 200},
		{"tool isError", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Result(r, map[string]any{"isError": true, "content": []any{}})
		}, driver.ClassToolError, 200},
		{"response for another id", func(w *mcptest.Writer, r *mcptest.Request) {
			w.JSON(200, mcptest.Response(json.RawMessage("999"), okText("x")))
		}, driver.ClassBadResponse, 200},
		{"SSE ends without response, no ids", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{Data: mcptest.Progress(r.ProgressToken(), 1, 1)})
		}, driver.ClassUnresumable, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := mcptest.New()
			fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), tt.handler)
			s := start(t, fake, nil)
			var res driver.Result
			s.Do(t.Context(), callEcho(t), &res)
			if res.Class != tt.class || res.Status != tt.status {
				t.Fatalf("class %v status %d (err %v), want %v %d", res.Class, res.Status, res.Err, tt.class, tt.status)
			}
		})
	}
}

func TestSession404Reinitializes(t *testing.T) {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		fake.SessionID = "s2" // the next initialize gets a new session
		http.Error(w, "session gone", http.StatusNotFound)
	})
	fake.Handle(mcptest.K("POST", "s2", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) { w.Result(r, okText("ok")) })
	s := start(t, fake, nil)
	var res driver.Result
	s.Do(t.Context(), callEcho(t), &res)
	if res.Err != nil || res.Reinits != 1 || s.ID() != "s2" {
		t.Fatalf("err %v reinits %d session %q, want nil 1 s2", res.Err, res.Reinits, s.ID())
	}
	inits := fake.Find(mcptest.K("POST", any_, "initialize", any_))
	if len(inits) != 2 || inits[1].Session != "" {
		t.Fatalf("initialize requests: %d, second with session %q; want 2, none", len(inits), inits[len(inits)-1].Session)
	}
	// A 404 that persists after re-initializing is session-missing.
	fake.Handle(mcptest.K("POST", "s2", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		http.Error(w, "gone", 404)
	})
	fake.SessionID = "s2"
	res.Reset()
	s.Do(t.Context(), callEcho(t), &res)
	if res.Class != driver.ClassSessionMissing || res.Reinits != 1 {
		t.Fatalf("class %v reinits %d, want session-missing 1", res.Class, res.Reinits)
	}
}

func TestGETStream405And409(t *testing.T) {
	fake := mcptest.New()
	s := start(t, fake, nil)
	if err := s.OpenStream(t.Context()); !errors.Is(err, driver.ErrNoGETStream) {
		t.Fatalf("405: err = %v, want ErrNoGETStream", err)
	}
	var mu sync.Mutex
	open := 0
	fake.Handle(mcptest.K("GET", "s1", "", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		mu.Lock()
		if open > 0 {
			mu.Unlock()
			w.WriteHeader(http.StatusConflict)
			return
		}
		open++
		mu.Unlock()
		w.Events(mcptest.Event{Comment: "open"})
		<-r.Ctx.Done()
	})
	if err := s.OpenStream(t.Context()); err != nil {
		t.Fatalf("first GET: %v", err)
	}
	// A second GET on the same session id is refused with 409.
	other := start(t, fake, nil) // the fake gives every session the id s1
	if err := other.OpenStream(t.Context()); !errors.Is(err, driver.ErrGETStreamConflict) {
		t.Fatalf("second GET: err = %v, want ErrGETStreamConflict", err)
	}
	if st := s.StreamStats(); !st.Open || st.Opened != 1 {
		t.Fatalf("stream stats %+v", st)
	}
	s.Close(t.Context()) // ends the GET stream: the handler returns
}

func TestDELETE(t *testing.T) {
	fake := mcptest.New()
	fake.Handle(mcptest.K("DELETE", "s1", "", any_), func(w *mcptest.Writer, r *mcptest.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed)
	})
	s := start(t, fake, nil)
	if err := s.Close(t.Context()); err != nil {
		t.Fatalf("405 on DELETE must be fine: %v", err)
	}
	if got := fake.Find(mcptest.K("DELETE", "s1", "", any_)); len(got) != 1 {
		t.Fatalf("DELETE requests %d, want 1", len(got))
	}
}

func TestServerToClientRequestAnswered(t *testing.T) {
	fake := mcptest.New()
	answered := make(chan *mcptest.Request, 1)
	fake.Handle(mcptest.K("POST", "s1", "response", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.WriteHeader(http.StatusAccepted)
		answered <- r
	})
	fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Events(mcptest.Event{ID: "e1", Data: map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "sampling/createMessage", "params": map[string]any{"messages": []any{}, "maxTokens": 10}}})
		ans := <-answered
		w.Events(mcptest.Event{ID: "e2", Data: mcptest.Response(r.ID, okText(string(ans.Result)))})
	})
	s := start(t, fake, nil)
	var res driver.Result
	s.Do(t.Context(), callEcho(t), &res)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	resp := fake.Find(mcptest.K("POST", "s1", "response", ""))
	if len(resp) != 1 || string(resp[0].ID) != `"srv-1"` {
		t.Fatalf("answers %v", resp)
	}
	var got map[string]any
	json.Unmarshal(resp[0].Result, &got)
	if got["model"] != "mcpbench" || got["role"] != "assistant" {
		t.Fatalf("canned sampling result = %s", resp[0].Result)
	}
	if v := resp[0].Header.Get("Mcp-Protocol-Version"); v != driver.DefaultProtocol {
		t.Fatalf("answer carries protocol version %q", v)
	}
}

// The stream is cut after event a_2 with a retry hint of 3 s: the client must
// come back with Last-Event-ID a_2 exactly 3 s later. Inside a synctest
// bubble the clock is fake, so the assertion is exact and takes no time.
func TestResumeAfterCutWaitsRetryHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		var cutAt time.Time
		fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			tok := r.ProgressToken()
			w.Events(
				mcptest.Event{ID: "a_0", EmptyData: true, Retry: 3000},
				mcptest.Event{ID: "a_1", Data: mcptest.Progress(tok, 1, 3)},
				mcptest.Event{ID: "a_2", Data: mcptest.Progress(tok, 2, 3)},
			)
			cutAt = time.Now()
			w.Cut()
		})
		fake.Handle(mcptest.K("GET", "s1", "", "a_2"), func(w *mcptest.Writer, r *mcptest.Request) {
			call := fake.Find(mcptest.K("POST", "s1", "tools/call", ""))[0]
			w.Events(
				mcptest.Event{ID: "a_3", Data: mcptest.Progress(call.ProgressToken(), 3, 3)},
				mcptest.Event{ID: "a_4", Data: mcptest.Response(call.ID, okText("done"))},
			)
		})
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		cfg := &driver.Config{URL: "http://fake/mcp", HTTPClient: hc}
		s, _ := driver.NewSession(cfg, 1)
		var res driver.Result
		if err := s.Initialize(t.Context(), &res); err != nil {
			t.Fatal(err)
		}
		res.Reset()
		s.Do(t.Context(), callEcho(t), &res)
		if res.Err != nil {
			t.Fatalf("resume failed: %v", res.Err)
		}
		gets := fake.Find(mcptest.K("GET", "s1", "", "a_2"))
		if len(gets) != 1 {
			t.Fatalf("resume GETs with Last-Event-ID a_2: %d", len(gets))
		}
		if waited := gets[0].At.Sub(cutAt); waited != 3*time.Second {
			t.Fatalf("resume came %v after the cut, want exactly the 3s retry hint", waited)
		}
		if len(res.Resumes) != 1 || res.Resumes[0].Hint != 3000 || res.Resumes[0].Waited != 3*time.Second || !res.Resumes[0].OK || res.Resumes[0].Clean {
			t.Fatalf("resume record %+v", res.Resumes)
		}
		if res.Progress != 3 || res.Ledger.Faulty() {
			t.Fatalf("progress %d ledger %v", res.Progress, res.Ledger.Counts)
		}
		s.Close(t.Context())
	})
}

// A server closing a stream on purpose after a priming event is polling
// (SEP-1699), not an error: the client resumes and the call succeeds.
func TestPollingCloseIsNotAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{Type: "prime", ID: "p_0", EmptyData: true}, mcptest.Event{Type: "close", Retry: 500})
		})
		fake.Handle(mcptest.K("GET", "s1", "", "p_0"), func(w *mcptest.Writer, r *mcptest.Request) {
			call := fake.Find(mcptest.K("POST", "s1", "tools/call", ""))[0]
			w.Events(mcptest.Event{ID: "p_1", Data: mcptest.Response(call.ID, okText("done"))})
		})
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		s, _ := driver.NewSession(&driver.Config{URL: "http://fake/mcp", HTTPClient: hc}, 1)
		var res driver.Result
		s.Initialize(t.Context(), &res)
		res.Reset()
		s.Do(t.Context(), callEcho(t), &res)
		if res.Err != nil || len(res.Resumes) != 1 || !res.Resumes[0].Clean || res.Resumes[0].Waited != 500*time.Millisecond {
			t.Fatalf("err %v resumes %+v", res.Err, res.Resumes)
		}
	})
}

func TestCutBeforeAnyIDIsUnresumable(t *testing.T) {
	for _, reissue := range []bool{false, true} {
		t.Run(map[bool]string{false: "fail", true: "reissue"}[reissue], func(t *testing.T) {
			fake := mcptest.New()
			n := 0
			fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
				n++
				if n == 1 {
					w.StartSSE()
					w.Flush()
					w.Cut()
					return
				}
				w.Events(mcptest.Event{ID: "x_1", Data: mcptest.Response(r.ID, okText("ok"))})
			})
			s := start(t, fake, func(c *driver.Config) { c.ReissueUnresumable = reissue })
			var res driver.Result
			s.Do(t.Context(), callEcho(t), &res)
			if res.Ledger.Counts[driver.VerdictUnresumable] != 1 || res.Ledger.Counts[driver.VerdictLost] != 0 {
				t.Fatalf("ledger %v: want 1 unresumable, 0 lost", res.Ledger.Counts)
			}
			if reissue {
				if res.Err != nil || res.Reissues != 1 {
					t.Fatalf("reissue: err %v reissues %d", res.Err, res.Reissues)
				}
				calls := fake.Find(mcptest.K("POST", "s1", "tools/call", ""))
				if string(calls[0].ID) == string(calls[1].ID) {
					t.Fatal("a re-issued request must get a new id")
				}
			} else if res.Class != driver.ClassUnresumable {
				t.Fatalf("class %v, want unresumable", res.Class)
			}
		})
	}
}

func TestProtocolVersionHeader(t *testing.T) {
	for _, tt := range []struct{ requested, served, header string }{
		{"", "2025-11-25", "2025-11-25"},
		{"2025-11-25", "2025-06-18", "2025-06-18"},
		{"2025-03-26", "2025-03-26", ""},
	} {
		fake := mcptest.New()
		fake.Protocol = tt.served
		s := start(t, fake, func(c *driver.Config) { c.Protocol = tt.requested })
		var res driver.Result
		s.Do(t.Context(), op(t, "ping", "", false), &res)
		if res.Err != nil || s.Protocol() != tt.served {
			t.Fatalf("%v: err %v protocol %q", tt, res.Err, s.Protocol())
		}
		for _, r := range fake.Requests() {
			want := tt.header
			if r.RPCMethod == "initialize" {
				want = ""
			}
			if got := r.Header.Get("Mcp-Protocol-Version"); got != want {
				t.Errorf("%v: %s %s carries MCP-Protocol-Version %q, want %q", tt, r.HTTPMethod, r.RPCMethod, got, want)
			}
		}
	}
	fake := mcptest.New()
	fake.Protocol = "1999-01-01"
	ts := httptest.NewServer(fake)
	defer ts.Close()
	s, _ := driver.NewSession(&driver.Config{URL: ts.URL}, 1)
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); !errors.Is(err, driver.ErrUnsupportedVersion) || res.Class != driver.ClassVersion {
		t.Fatalf("unsupported version: err %v class %v", err, res.Class)
	}
}

// A server that accepts and never answers, or opens a stream and goes
// silent: the op ends at the configured timeout, classified as timeout.
func TestTimeouts(t *testing.T) {
	tests := []struct {
		name    string
		handler mcptest.Handler
		want    time.Duration
	}{
		{"no headers", func(w *mcptest.Writer, r *mcptest.Request) { <-r.Ctx.Done() }, 2 * time.Second},
		{"silent stream", func(w *mcptest.Writer, r *mcptest.Request) {
			w.Events(mcptest.Event{Comment: "hi"})
			<-r.Ctx.Done()
		}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := mcptest.New()
				fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), tt.handler)
				hc, stop := mcptest.ServePipe(fake)
				defer stop()
				cfg := &driver.Config{URL: "http://fake/mcp", HTTPClient: hc, RequestTimeout: 2 * time.Second, StreamIdleTimeout: time.Second}
				s, _ := driver.NewSession(cfg, 1)
				var res driver.Result
				if err := s.Initialize(t.Context(), &res); err != nil {
					t.Fatal(err)
				}
				res.Reset()
				s.Do(t.Context(), callEcho(t), &res)
				if res.Class != driver.ClassTimeout || res.ServiceTime() != tt.want {
					t.Fatalf("class %v (%v) after %v, want timeout after %v", res.Class, res.Err, res.ServiceTime(), tt.want)
				}
			})
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, _ := driver.NewSession(&driver.Config{URL: "http://" + addr + "/mcp"}, 1)
	var res driver.Result
	if err := s.Initialize(context.Background(), &res); err == nil || res.Class != driver.ClassTransport {
		t.Fatalf("closed port: err %v class %v, want transport", err, res.Class)
	}
}
