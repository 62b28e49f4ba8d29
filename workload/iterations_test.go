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
)

// iterFake answers every call after 10 ms (fake time) and counts them.
func iterFake(calls *atomic.Int64) *mcptest.Server {
	fake := mcptest.New()
	for _, m := range []string{"tools/call", "tools/list", "resources/read", "ping"} {
		fake.Handle(mcptest.K("POST", mcptest.Any, m, ""), func(w *mcptest.Writer, r *mcptest.Request) {
			time.Sleep(10 * time.Millisecond)
			calls.Add(1)
			w.Result(r, map[string]any{"content": []any{}, "tools": []any{}, "contents": []any{}})
		})
	}
	return fake
}

// runSeg runs p against fake as segment seg ("": the whole test).
func runSeg(t *testing.T, p *profile.Profile, fake *mcptest.Server, seg string) *results.Summary {
	t.Helper()
	s, err := ParseSegment(seg, "")
	if err != nil {
		t.Fatal(err)
	}
	hc, stop := mcptest.ServePipe(fake)
	defer stop()
	pl, err := Compile(p, hc)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(t.Context(), pl, Options{Segment: s})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// --iterations N: the VUs share exactly N iterations of the measured
// window (ops of the mix; scenario iterations), the warm-up's not among
// them, and the window ends when the last completes (long before the
// duration's cap); two segments together run exactly N, each its share.
func TestIterationsExact(t *testing.T) {
	for _, tc := range []struct {
		name string
		scen bool
		segs []string
	}{{"mix", false, []string{""}}, {"scenario", true, []string{""}}, {"segments", false, []string{"0/2", "1/2"}}, {"scenario segments", true, []string{"0/3", "1/3", "2/3"}}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 101
				var calls atomic.Int64
				fake := iterFake(&calls)
				total, measured := int64(0), 0.0
				for _, seg := range tc.segs {
					p := &profile.Profile{Name: "it", URL: "http://fake/mcp", VUs: 7, Iterations: n, Warmup: profile.Duration(100 * time.Millisecond),
						Duration: profile.Duration(time.Hour), Protocol: driver.Protocol20251125, Ops: agentOps()}
					if tc.scen {
						p.Scenario = []profile.StepSpec{{Op: "list"}, {Op: "call", Repeat: 2}}
					}
					sum := runSeg(t, p, fake, seg)
					got := sum.All.Count
					if tc.scen {
						got = sum.Scenarios[0].Iterations
						if sum.All.Count != 3*got {
							t.Fatalf("%s: %d requests for %d iterations of 3 steps", seg, sum.All.Count, got)
						}
					}
					if sum.All.Errors != 0 || !strings.Contains(strings.Join(sum.Notes, "\n"), "iterations: all ") {
						t.Fatalf("%s: errors %d, notes %q", seg, sum.All.Errors, sum.Notes)
					}
					total += got
					measured = max(measured, sum.DurationS)
				}
				if total != n {
					t.Fatalf("%d iterations completed in the measured window, want exactly %d", total, n)
				}
				// 101 iterations over 7 VUs at 10 ms (30 ms for the
				// scenario) each: done in well under a second, not the hour.
				if measured > 1 {
					t.Fatalf("the window lasted %v s", measured)
				}
				if calls.Load() <= total { // the warm-up ran too, outside the count
					t.Fatalf("the server saw %d calls: no warm-up?", calls.Load())
				}
			})
		})
	}
}

// When the cap runs out first, the summary says how many were done; the
// open model and stages are refused, naming the field.
func TestIterationsCapAndRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		p := &profile.Profile{Name: "it", URL: "http://fake/mcp", VUs: 1, Iterations: 1000, Duration: profile.Duration(time.Second),
			Protocol: driver.Protocol20251125, Ops: agentOps()[3:]}
		sum := runSeg(t, p, iterFake(&calls), "")
		if want := "iterations: 100 of 1000 done when the duration (1s, the cap) ran out"; sum.All.Count != 100 || !strings.Contains(strings.Join(sum.Notes, "\n"), want) {
			t.Fatalf("count %d notes %q, want %q", sum.All.Count, sum.Notes, want)
		}
	})
	for _, p := range []*profile.Profile{
		{URL: "http://x/mcp", VUs: 1, Iterations: 5, Rate: 10, Ops: agentOps()},
		{URL: "http://x/mcp", VUs: 1, Iterations: 5, Stages: []profile.StageSpec{{Duration: profile.Duration(time.Second), Target: 2}}, Ops: agentOps()},
		{URL: "http://x/mcp", VUs: 1, Iterations: -1, Ops: agentOps()},
	} {
		if _, err := Compile(p, nil); err == nil || !strings.Contains(err.Error(), "iterations: ") {
			t.Errorf("iterations %d rate %v stages %d: %v", p.Iterations, p.Rate, len(p.Stages), err)
		}
	}
}
