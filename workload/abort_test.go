package workload

import (
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
	"go.yaml.in/yaml/v3"
)

// ivSink keeps the intervals' ends (from the run's start) and the end.
type ivSink struct {
	ends []time.Duration
	end  *results.RunEnd
}

func (s *ivSink) Start(*results.RunInfo)             {}
func (s *ivSink) Interval(r *results.IntervalRecord) { s.ends = append(s.ends, r.Elapsed) }
func (s *ivSink) End(e *results.RunEnd)              { s.end = e }

// turnsSlow answers its first fast calls in 10 ms, the later ones in
// 300 ms (fake time), and counts them.
func turnsSlow(fast int64, calls *atomic.Int64) *mcptest.Server {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", mcptest.Any, "ping", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		d := 10 * time.Millisecond
		if calls.Add(1) > fast {
			d = 300 * time.Millisecond
		}
		time.Sleep(d)
		w.Result(r, map[string]any{})
	})
	return fake
}

// runAbort runs one VU of pings against a server that turns slow after
// 120 calls (at 1.2 s: the first slow answer at 1.5 s), with max<200ms
// aborting after delay, for at most a minute.
func runAbort(t *testing.T, delay time.Duration) (*results.Summary, *ivSink, int64) {
	var calls atomic.Int64
	hc, stop := mcptest.ServePipe(turnsSlow(120, &calls))
	defer stop()
	p := &profile.Profile{Name: "abort", URL: "http://fake/mcp", VUs: 1, Duration: profile.Duration(time.Minute), Protocol: driver.Protocol20251125,
		Ops: []profile.OpSpec{{Method: "ping"}}, Thresholds: []string{"max<200ms", "error_rate<1%"},
		AbortOnFail: []profile.AbortSpec{{Threshold: "error_rate<1%"}, {Threshold: "max<200ms", Delay: profile.Duration(delay)}}}
	pl, err := Compile(p, hc)
	if err != nil {
		t.Fatal(err)
	}
	sink := &ivSink{}
	sum, err := Run(t.Context(), pl, Options{Sinks: []results.Sink{sink}, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return sum, sink, calls.Load()
}

// The gate fails at 1.5 s (the first slow answer); it is judged at the
// end of that interval (2 s) and the run stops there: within one
// interval of the failure, with at most the calls in flight then and the
// one a VU may start at that instant (4 slow ones in all), the window
// ending at the abort, exit 99's summary saying when and why. With a
// delay of 3.5 s the same gate is judged first at 4 s.
func TestAbortOnFailWithinOneInterval(t *testing.T) {
	for _, tc := range []struct {
		delay time.Duration
		at    string
		ivs   int // intervals closed before the abort
	}{{0, "aborted at 2s: max<200ms failed (max 300", 2}, {3500 * time.Millisecond, "aborted at 4s: max<200ms failed (max 300", 4}} {
		synctest.Test(t, func(t *testing.T) {
			sum, sink, calls := runAbort(t, tc.delay)
			if !sum.Aborted || !strings.HasPrefix(sum.StopReason, tc.at) || sum.Interrupted {
				t.Fatalf("delay %v: aborted %v interrupted %v reason %q, want %q…", tc.delay, sum.Aborted, sum.Interrupted, sum.StopReason, tc.at)
			}
			// The intervals: tc.ivs full ones, then the last (cut at the stop).
			if len(sink.ends) != tc.ivs+1 || sink.ends[tc.ivs-1] != time.Duration(tc.ivs)*time.Second {
				t.Fatalf("delay %v: intervals closed at %v, want %d then the stop", tc.delay, sink.ends, tc.ivs)
			}
			// Slow calls: 1.2 s → 1.5 → 1.8 → 2.1 …; the judge at ivs s + 100 ms.
			// A slow call due at the judge's own instant (2.1 s with no
			// delay) may start before or after it: goroutines runnable at
			// one synctest instant run in any order.
			judged := float64(tc.ivs) + 0.1
			judgedMs := int64(tc.ivs)*1000 + 100
			var slowBefore int64 // slow calls due strictly before the judge
			for at := int64(1200); at < judgedMs; at += 300 {
				slowBefore++
			}
			if slow := calls - 120; slow < slowBefore || slow > slowBefore+1 {
				t.Fatalf("delay %v: %d slow calls, want %d started before the judge (+1 at most at that instant)", tc.delay, slow, slowBefore)
			}
			if sum.DurationS != judged || sum.All.Count != calls {
				t.Fatalf("delay %v: window %v s, %d ops of %d calls; want the window to end at the abort (%v s) with every call counted", tc.delay, sum.DurationS, sum.All.Count, calls, judged)
			}
			if results.ThresholdsFailed(sum.Thresholds) != 1 || sink.end == nil || !sink.end.Summary.Aborted {
				t.Fatalf("delay %v: thresholds %+v, end written %v", tc.delay, sum.Thresholds, sink.end != nil)
			}
		})
	}
}

// A run whose gates hold (--abort-on-fail on every threshold) is not
// stopped: it runs its whole window.
func TestAbortOnFailHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		hc, stop := mcptest.ServePipe(turnsSlow(1<<30, &calls))
		defer stop()
		p := &profile.Profile{Name: "abort", URL: "http://fake/mcp", VUs: 1, Duration: profile.Duration(3 * time.Second), Protocol: driver.Protocol20251125,
			Ops: []profile.OpSpec{{Method: "ping"}}, Thresholds: []string{"max<200ms"}}
		if err := p.AbortAll(true, 0, false); err != nil {
			t.Fatal(err)
		}
		pl, err := Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(t.Context(), pl, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Aborted || sum.DurationS != 3 || sum.All.Count != 300 {
			t.Fatalf("aborted %v (%q), window %v s, %d ops", sum.Aborted, sum.StopReason, sum.DurationS, sum.All.Count)
		}
	})
}

// abort_on_fail in YAML: a threshold, or {threshold, delay}; bad ones
// are errors naming the entry; --abort-delay needs --abort-on-fail, which
// needs a threshold.
func TestAbortSpecs(t *testing.T) {
	var p profile.Profile
	src := "abort_on_fail:\n  - p99<200ms\n  - {threshold: \"error_rate<1%\", delay: 10s}\n"
	if err := yaml.Unmarshal([]byte(src), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.AbortOnFail) != 2 || p.AbortOnFail[0].Threshold != "p99<200ms" || p.AbortOnFail[1].Delay.D() != 10*time.Second {
		t.Fatalf("%+v", p.AbortOnFail)
	}
	if err := yaml.Unmarshal([]byte("abort_on_fail:\n  - {threshold: p99<1, after: 1s}\n"), &p); err == nil || !strings.Contains(err.Error(), `unknown field "after"`) {
		t.Fatalf("unknown field: %v", err)
	}
	q := &profile.Profile{URL: "http://x/mcp", VUs: 1, Ops: []profile.OpSpec{{Method: "ping"}}, AbortOnFail: []profile.AbortSpec{{Threshold: "p99<<1"}, {Threshold: "nope:p99<1"}, {Threshold: "p99<1", Delay: -1}}}
	_, err := Compile(q, nil)
	for _, want := range []string{"abort_on_fail[0].threshold: threshold \"p99<<1\"", "abort_on_fail[2].delay: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	if err := (&profile.Profile{}).AbortAll(false, time.Second, true); err == nil || !strings.Contains(err.Error(), "abort_on_fail.delay needs abort_on_fail") {
		t.Errorf("delay alone: %v", err)
	}
	if err := (&profile.Profile{}).AbortAll(true, 0, false); err == nil || !strings.Contains(err.Error(), "no threshold to judge") {
		t.Errorf("no threshold: %v", err)
	}
}
