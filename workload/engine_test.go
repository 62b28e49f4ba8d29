package workload

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

func weight(n int) *int { return &n }

// echoProfile is a one-op profile against the fake server.
func echoProfile() *profile.Profile {
	return &profile.Profile{
		Name:     "test",
		URL:      "http://fake/mcp",
		Duration: profile.Duration(10 * time.Second),
		Ops:      []profile.OpSpec{{Method: "tools/call", Tool: "echo", Weight: weight(1)}},
	}
}

func okFake() *mcptest.Server {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"content": []any{}})
	})
	return fake
}

func runFake(t *testing.T, p *profile.Profile, fake http.Handler) *results.Summary {
	t.Helper()
	hc, stop := mcptest.ServePipe(fake)
	defer stop()
	pl, err := Compile(p, hc)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(t.Context(), pl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// The server stalls once for 1 s in an open-model run: ops that were due
// during the stall wait for the only VU, so their response time (from the
// intended start) carries the stall, while their service time (from the
// actual send) does not. Only the one op caught in the stall has a long
// service time: 1 of 1000, below p99.
func TestStallShowsInResponseTimeNotServiceTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		stallFrom, stallTo := start.Add(5*time.Second), start.Add(6*time.Second)
		var once sync.Once
		var mu sync.Mutex
		var done []time.Time // server-side completion of each call, in order
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			if now := time.Now(); !now.Before(stallFrom) {
				once.Do(func() { time.Sleep(stallTo.Sub(now)) })
			}
			w.Result(r, map[string]any{"content": []any{}})
			mu.Lock()
			done = append(done, time.Now())
			mu.Unlock()
		})
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs, p.MaxDelay = 100, 1, 1, profile.Duration(10*time.Second)
		sum := runFake(t, p, fake)
		op := sum.Ops[0]
		if op.Count != 1000 || sum.Dropped != 0 || op.Errors != 0 {
			t.Fatalf("count %d dropped %d errors %d, want 1000 0 0", op.Count, sum.Dropped, op.Errors)
		}
		t.Logf("response p99 %v ms, service p99 %v ms, service max %v ms", op.Response.P99, op.Service.P99, op.Service.Max)
		if op.Response.P99 < 500 {
			t.Errorf("response-time p99 = %v ms: the 1 s stall must show (ops queued behind it)", op.Response.P99)
		}
		if op.Service.P99 > 10 {
			t.Errorf("service-time p99 = %v ms: the stall must not show (only one op was in flight)", op.Service.P99)
		}
		if op.Service.Max < 900 {
			t.Errorf("service-time max = %v ms: the stalled op itself must show there", op.Service.Max)
		}
		// Against the truth: call i was due at i × 10 ms and completed when
		// the server says; response time p99 must equal that p99 within 4 ms.
		truth := results.NewHistogram()
		for i, c := range done {
			truth.RecordValue(max(1, c.Sub(start.Add(time.Duration(i)*10*time.Millisecond)).Microseconds()))
		}
		if want := float64(truth.ValueAtQuantile(99)) / 1000; math.Abs(op.Response.P99-want) > 4 {
			t.Errorf("response-time p99 %v ms, completion-time truth %v ms", op.Response.P99, want)
		}
	})
}

// With one VU and a 10 ms max delay, ops due while the VU is busy are
// dropped and counted, never silently skipped.
func TestOpenModelDropsWhenNoVUIsFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(25 * time.Millisecond) // one VU serves at most 40/s
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs, p.MaxDelay = 100, 1, 1, profile.Duration(10*time.Millisecond)
		p.Duration = profile.Duration(2 * time.Second)
		sum := runFake(t, p, fake)
		op := sum.Ops[0]
		if op.Count+op.Dropped != 200 {
			t.Fatalf("completed %d + dropped %d = %d, want the 200 ops scheduled", op.Count, op.Dropped, op.Count+op.Dropped)
		}
		if op.Dropped < 100 || sum.Dropped < op.Dropped {
			t.Fatalf("dropped %d (run total %d): one VU at 40/s cannot take 100/s", op.Dropped, sum.Dropped)
		}
	})
}

// The open model starts VUs on demand up to max_vus instead of dropping.
func TestOpenModelAddsVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(50 * time.Millisecond)
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs = 200, 1, 50
		p.Duration = profile.Duration(2 * time.Second)
		sum := runFake(t, p, fake)
		if sum.Dropped != 0 || sum.Ops[0].Count != 400 {
			t.Fatalf("dropped %d count %d, want 0 and 400", sum.Dropped, sum.Ops[0].Count)
		}
		if sum.VUs < 10 || sum.VUs > 50 {
			t.Fatalf("VUs started %d, want about rate × latency = 10, at most 50", sum.VUs)
		}
	})
}

// A 50 ms hiccup of the server at 1000 ops/s makes ~50 slots overdue at
// once. The pool grows by a handful of VUs, not by one per late op: each
// added VU costs the server an initialize, and adding them by the dozen
// is how a brief hiccup spirals into max_vus sessions.
func TestOpenModelHiccupAddsFewVUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		hiccupFrom, hiccupTo := start.Add(time.Second), start.Add(time.Second+50*time.Millisecond)
		hold := func() {
			if now := time.Now(); !now.Before(hiccupFrom) && now.Before(hiccupTo) {
				time.Sleep(hiccupTo.Sub(now))
			}
		}
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(time.Millisecond)
			w.Result(r, map[string]any{"content": []any{}})
		})
		// Every request (initialize too) is held through the hiccup.
		server := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hold()
			fake.ServeHTTP(w, r)
		})
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs = 1000, 4, 2000
		p.Duration = profile.Duration(2 * time.Second)
		sum := runFake(t, p, server)
		if sum.Ops[0].Errors != 0 || sum.Dropped != 0 {
			t.Fatalf("errors %d dropped %d", sum.Ops[0].Errors, sum.Dropped)
		}
		if sum.VUs > 16 {
			t.Fatalf("%d VUs started after a 50 ms hiccup: want a handful (4 up front, at most %d initializing at once)", sum.VUs, maxSpawning)
		}
		t.Logf("%d VUs", sum.VUs)
	})
}

// Warm-up results are discarded; the closed model's counts and rate cover
// the measured window only.
func TestClosedModelWarmupExcluded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(10 * time.Millisecond)
			w.Result(r, map[string]any{"content": []any{}})
		})
		p := echoProfile()
		p.VUs = 4
		p.Warmup = profile.Duration(time.Second)
		p.Duration = profile.Duration(2 * time.Second)
		sum := runFake(t, p, fake)
		// 4 VUs × 100 ops/s × 2 s measured; the warm-up's 400 are not counted.
		if got := sum.Ops[0].Count; got != 800 {
			t.Fatalf("count %d, want 800 (warm-up excluded)", got)
		}
		if sum.Rate != 400 || sum.DurationS != 2 {
			t.Fatalf("rate %v over %v s, want 400 over 2", sum.Rate, sum.DurationS)
		}
		calls := fake.Find(mcptest.K("POST", mcptest.Any, "tools/call", ""))
		if len(calls) < 1200 {
			t.Fatalf("server saw %d calls, want warm-up + window ≥ 1200", len(calls))
		}
		if sum.Sessions.Opened != 4 || sum.Sessions.Closed != 4 {
			t.Fatalf("sessions %+v", sum.Sessions)
		}
		if n := len(fake.Find(mcptest.K("DELETE", "s1", "", mcptest.Any))); n != 4 {
			t.Fatalf("DELETEs %d, want one per session", n)
		}
	})
}

// Op choice follows the weights and is reproducible with the same seed.
func TestOpMixWeightsAndSeed(t *testing.T) {
	counts := func(seed int64) []int64 {
		var out []int64
		synctest.Test(t, func(t *testing.T) {
			fake := okFake()
			fake.Handle(mcptest.K("POST", mcptest.Any, "tools/list", ""), func(w *mcptest.Writer, r *mcptest.Request) {
				w.Result(r, map[string]any{"tools": []any{}})
			})
			p := echoProfile()
			p.Rate, p.VUs, p.Seed = 100, 2, seed
			p.Ops = append(p.Ops, profile.OpSpec{Method: "tools/list", Weight: weight(3)})
			sum := runFake(t, p, fake)
			for _, o := range sum.Ops {
				out = append(out, o.Count)
			}
		})
		return out
	}
	a, b, c := counts(7), counts(7), counts(8)
	if a[0]+a[1] != 1000 || a[1] < 650 || a[1] > 850 {
		t.Fatalf("mix %v: want ~250/750 of 1000", a)
	}
	if a[0] != b[0] || a[1] != b[1] {
		t.Fatalf("same seed, different mix: %v vs %v", a, b)
	}
	if a[0] == c[0] {
		t.Logf("seeds 7 and 8 happened to give the same split %v", a)
	}
}

// No session can start: the run ends at once with a classified error and a
// summary, not after the whole duration.
func TestSetupFailureIsClassified(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := echoProfile()
	p.URL = "http://" + addr + "/mcp"
	p.VUs = 3
	p.Duration = profile.Duration(time.Hour)
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), pl, Options{})
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "transport 3") {
		t.Fatalf("err = %v, want ErrSetup with 3 transport failures", err)
	}
	if sum == nil || sum.Sessions.Failed != 3 || sum.Sessions.FailClasses["transport"] != 3 {
		t.Fatalf("summary sessions %+v", sum.Sessions)
	}
}

// runInterrupted runs one VU for a minute against a server that answers
// each call in callTime, and cancels the run (Ctrl-C) at 3 s.
func runInterrupted(t *testing.T, callTime time.Duration) *results.Summary {
	t.Helper()
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		time.Sleep(callTime)
		w.Result(r, map[string]any{"content": []any{}})
	})
	hc, stop := mcptest.ServePipe(fake)
	defer stop()
	p := echoProfile()
	p.VUs, p.Duration = 1, profile.Duration(time.Minute)
	pl, err := Compile(p, hc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	time.AfterFunc(3*time.Second, func() { cancel(errors.New("interrupted by signal")) })
	sum, err := Run(ctx, pl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Cancelling the context (Ctrl-C) stops the run early; the summary keeps
// what was measured and says it was interrupted.
func TestInterruptKeepsResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum := runInterrupted(t, 10*time.Millisecond)
		if !sum.Interrupted || sum.StopReason != "interrupted by signal" {
			t.Fatalf("interrupted %v reason %q", sum.Interrupted, sum.StopReason)
		}
		if c := sum.Ops[0].Count; c < 290 || c > 301 || sum.DurationS != 3 {
			t.Fatalf("count %d over %v s, want ~300 over 3 s", c, sum.DurationS)
		}
	})
}

// The op in flight when Ctrl-C cuts the run is interrupted, not an error
// of the server (nor a faulty stream).
func TestInterruptedOpIsNotAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum := runInterrupted(t, 7*time.Millisecond) // an op is in flight at 3 s
		op := sum.Ops[0]
		if op.Interrupted != 1 || op.Errors != 0 || sum.All.Errors != 0 || len(sum.All.ErrorsByClass) > 0 {
			t.Fatalf("interrupted %d, errors %d (all %d, classes %v): the cut op must count as interrupted only", op.Interrupted, op.Errors, sum.All.Errors, sum.All.ErrorsByClass)
		}
	})
}

func TestPick(t *testing.T) {
	pl := &Plan{cum: []int{1, 4, 4, 10}}
	for n, want := range map[int]int{0: 0, 1: 1, 3: 1, 4: 3, 9: 3} {
		// pick draws IntN(10); check the search directly.
		if got := searchCum(pl.cum, n); got != want {
			t.Errorf("draw %d → op %d, want %d", n, got, want)
		}
	}
}
