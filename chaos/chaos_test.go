package chaos

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/sse"
)

// sseServer answers every request with n events "id: e<i>" carrying data
// "<i>", one every `every` (0: all at once), then ends.
func sseServer(n int, every time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for i := range n {
			if every > 0 && i > 0 {
				select {
				case <-time.After(every):
				case <-r.Context().Done():
					return
				}
			}
			fmt.Fprintf(w, "id: e%d\r\ndata: %d\r\n\r\n", i, i)
			w.(http.Flusher).Flush()
		}
	})
}

func plan(t *testing.T, specs ...string) Plan {
	t.Helper()
	var p Plan
	for _, s := range specs {
		f, err := ParseFault(s)
		if err != nil {
			t.Fatal(err)
		}
		p.Faults = append(p.Faults, f)
	}
	p.Defaults()
	if errs := p.Validate("chaos"); len(errs) > 0 {
		t.Fatal(errs)
	}
	return p
}

// readEvents reads a stream with the driver's decoder: the events
// dispatched, the last event id, and how the stream ended.
func readEvents(r io.Reader) (ids []string, last string, end error) {
	d := sse.NewDecoder(r)
	for {
		ev, err := d.Next()
		if err != nil {
			return ids, string(d.LastEventID()), err
		}
		ids = append(ids, string(ev.ID))
	}
}

func do(t *testing.T, rt http.RoundTripper, method string) (*http.Response, error) {
	t.Helper()
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader("{}")
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, "http://fake/mcp", body)
	return rt.RoundTrip(req)
}

func TestCutTriggers(t *testing.T) {
	tests := []struct {
		spec    string
		ids     []string
		last    string
		wantEOF bool
	}{
		{"cut after_events=2 close=fin", []string{"e0", "e1"}, "e1", true},
		{"cut after_events=2 close=rst", []string{"e0", "e1"}, "e1", false},
		{"cut mid_event=1 close=rst", []string{"e0"}, "e0", false}, // e1's id line arrived, but not its end
		{"cut before_first_event close=rst", nil, "", false},
		{"cut after_bytes=20 close=fin", []string{"e0"}, "e0", true}, // 17 bytes per event
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hc, stop := mcptest.ServePipe(sseServer(5, 0))
				defer stop()
				in := New(plan(t, tt.spec), 1)
				rt := in.Wrap(0, hc.Transport)
				resp, err := do(t, rt, "POST")
				if err != nil {
					t.Fatal(err)
				}
				ids, last, end := readEvents(resp.Body)
				resp.Body.Close()
				if diff := cmp.Diff(tt.ids, ids); diff != "" || last != tt.last {
					t.Fatalf("events (-want +got):\n%s last %q want %q", diff, last, tt.last)
				}
				if tt.wantEOF != errors.Is(end, io.EOF) || (!tt.wantEOF && !errors.Is(end, ErrReset)) {
					t.Fatalf("end = %v, want EOF %v (else a reset)", end, tt.wantEOF)
				}
				st := in.Stats()
				if st.CutsFIN+st.CutsRST != 1 {
					t.Fatalf("stats %+v", st)
				}
			})
		})
	}
}

func TestCutBetween(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(sseServer(100, 10*time.Millisecond))
		defer stop()
		in := New(plan(t, "cut between=200ms-300ms close=rst"), 7)
		post, _ := in.Schedule(0, 1)
		start := time.Now()
		resp, err := do(t, in.Wrap(0, hc.Transport), "POST")
		if err != nil {
			t.Fatal(err)
		}
		ids, _, end := readEvents(resp.Body)
		elapsed := time.Since(start)
		if !errors.Is(end, ErrReset) || elapsed != post[0].At || elapsed < 200*time.Millisecond || elapsed > 300*time.Millisecond {
			t.Fatalf("cut after %v (planned %v) with %v, %d events", elapsed, post[0].At, end, len(ids))
		}
	})
}

func TestStallDeliversEverythingLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(sseServer(4, 0))
		defer stop()
		in := New(plan(t, "stall after_events=1 stall=2s"), 1)
		start := time.Now()
		resp, _ := do(t, in.Wrap(0, hc.Transport), "POST")
		d := sse.NewDecoder(resp.Body)
		var at []time.Duration
		for {
			if _, err := d.Next(); err != nil {
				break
			}
			at = append(at, time.Since(start))
		}
		if diff := cmp.Diff([]time.Duration{0, 2 * time.Second, 2 * time.Second, 2 * time.Second}, at); diff != "" {
			t.Fatalf("event times (-want +got):\n%s", diff)
		}
		if in.Stats().Stalls != 1 {
			t.Fatal("stall not counted")
		}
	})
}

func TestDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		in := New(plan(t, "delay delay=150ms target=both"), 1)
		start := time.Now()
		resp, err := do(t, in.Wrap(0, hc.Transport), "GET")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := fake.Requests()[0].At.Sub(start); got != 150*time.Millisecond {
			t.Fatalf("request arrived after %v, want 150ms", got)
		}
	})
}

func TestStormCutsEveryOpenStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(sseServer(1000, 100*time.Millisecond))
		defer stop()
		p := Plan{Storm: &Storm{At: Duration(time.Second), Target: TargetGET, Close: CloseFIN}}
		p.Defaults()
		in := New(p, 1)
		t0 := time.Now()
		in.Start(t0)
		defer in.Stop()
		type res struct {
			err error
			at  time.Duration
		}
		done := make(chan res, 6)
		for i := range 6 {
			method := "GET"
			if i == 5 {
				method = "POST" // not a target: keeps streaming
			}
			resp, err := do(t, in.Wrap(i, hc.Transport), method)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				_, _, end := readEvents(resp.Body)
				resp.Body.Close()
				done <- res{end, time.Since(t0)}
			}()
		}
		for range 5 {
			r := <-done
			if !errors.Is(r.err, io.EOF) || r.at != time.Second {
				t.Fatalf("GET stream ended with %v at %v, want EOF at 1s", r.err, r.at)
			}
		}
		select {
		case r := <-done:
			t.Fatalf("the POST stream was cut too: %v at %v", r.err, r.at)
		default:
		}
		st := in.Stats()
		if st.StormCuts != 5 || len(st.Waves) != 1 || st.Waves[0].Sub(t0) != time.Second {
			t.Fatalf("stats %+v", st)
		}
	})
}

// The same seed gives the same fault schedule; the transport applies it.
func TestScheduleIsReproducible(t *testing.T) {
	p := plan(t, "cut after_events=2 p=0.3", "cut between=1s-5s p=0.5 target=get", "stall after_events=1 stall=1s p=0.2 target=both")
	a1, g1 := New(p, 42).Schedule(3, 50)
	a2, g2 := New(p, 42).Schedule(3, 50)
	if diff := cmp.Diff(a1, a2); diff != "" {
		t.Fatalf("same seed, different POST schedule:\n%s", diff)
	}
	if diff := cmp.Diff(g1, g2); diff != "" {
		t.Fatalf("same seed, different GET schedule:\n%s", diff)
	}
	b1, _ := New(p, 43).Schedule(3, 50)
	if cmp.Equal(a1, b1) {
		t.Fatal("different seeds gave the same schedule")
	}
	other, _ := New(p, 42).Schedule(4, 50)
	if cmp.Equal(a1, other) {
		t.Fatal("different VUs got the same schedule")
	}
	hits := 0
	for _, d := range a1 {
		if d.Fault >= 0 {
			hits++
		}
	}
	if hits < 8 || hits > 30 {
		t.Fatalf("%d of 50 POST streams faulted; p = 0.3 (+0.2 stall)", hits)
	}
	// What the transport does follows the schedule, stream by stream.
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(sseServer(3, 0))
		defer stop()
		in := New(p, 42)
		rt := in.Wrap(3, hc.Transport)
		for range 20 {
			resp, err := do(t, rt, "POST")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		var got []Decision
		for _, a := range Log(rt) {
			got = append(got, a.Decision)
		}
		if diff := cmp.Diff(a1[:20], got); diff != "" {
			t.Fatalf("applied decisions differ from the schedule (-schedule +applied):\n%s", diff)
		}
	})
}

func TestEmptyPlanIsFree(t *testing.T) {
	base := http.DefaultTransport
	if got := New(Plan{}, 1).Wrap(0, base); got != base {
		t.Fatal("an empty plan must not wrap the transport")
	}
}

func TestParseAndValidate(t *testing.T) {
	f, err := ParseFault("cut between=100ms-500ms close=fin target=get p=0.25")
	if err != nil {
		t.Fatal(err)
	}
	want := Fault{Action: ActionCut, When: When{Between: []Duration{Duration(100 * time.Millisecond), Duration(500 * time.Millisecond)}}, Close: CloseFIN, Target: TargetGET, Probability: 0.25}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Fatal(diff)
	}
	for _, bad := range []string{"cut after_events=x", "cut foo=1", "cut between=1s"} {
		if _, err := ParseFault(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	p := Plan{Faults: []Fault{
		{Action: "explode"},
		{Action: ActionCut, When: When{AfterEvents: 1, AfterBytes: 2}},
		{Action: ActionStall, When: When{AfterEvents: 1}},
		{Action: ActionDelay, Probability: 2},
	}, Storm: &Storm{Close: "gentle"}}
	p.Defaults()
	var got []string
	for _, e := range p.Validate("chaos") {
		got = append(got, e.Error())
	}
	wantErrs := []string{
		`chaos.faults[0].action: "explode", want cut, stall or delay`,
		"chaos.faults[1].when: set exactly one of after_events, after_bytes, mid_event, before_first_event, between (got 2)",
		"chaos.faults[2].stall: want a duration > 0",
		"chaos.faults[3].delay: want a duration > 0",
		"chaos.faults[3].probability: 2, want in (0, 1]",
		`chaos.storm.close: "gentle", want fin or rst`,
	}
	if diff := cmp.Diff(wantErrs, got); diff != "" {
		t.Fatal(diff)
	}
	s, err := ParseStorm("at=10s every=30s close=fin target=get")
	if err != nil || s.At.D() != 10*time.Second || s.Every.D() != 30*time.Second || s.Close != CloseFIN || s.Target != TargetGET {
		t.Fatalf("%+v %v", s, err)
	}
}
