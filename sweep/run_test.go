package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/workload"
)

// capacityFake serves one request at a time, 1 ms each: 1000 requests/s at
// most. (A channel, not a mutex, so the synctest clock can advance.)
func capacityFake() *mcptest.Server {
	fake := okFake()
	sem := make(chan struct{}, 1)
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		sem <- struct{}{}
		time.Sleep(time.Millisecond)
		<-sem
		w.Result(r, map[string]any{"content": []any{}})
	})
	return fake
}

func weight(n int) *int { return &n }

// echoProfile is a one-op profile against the fake server.
func echoProfile() *workload.Profile {
	return &workload.Profile{Name: "test", URL: "http://fake/mcp", Duration: workload.Duration(10 * time.Second),
		Ops: []workload.OpSpec{{Method: "tools/call", Tool: "echo", Weight: weight(1)}}}
}

func okFake() *mcptest.Server {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"content": []any{}})
	})
	return fake
}

func sweepProfile() *workload.Profile {
	p := echoProfile()
	p.VUs, p.MaxVUs = 4, 400
	p.Sweep = &workload.SweepSpec{By: "rate", From: 200, To: 1400, Steps: 5, Step: workload.Duration(2 * time.Second), Warmup: workload.Duration(500 * time.Millisecond),
		SLO: workload.SLOSpec{P99: workload.Duration(20 * time.Millisecond)}}
	return p
}

// The sweep runs steps up to the overload, stops once clearly past the
// knee, bisects between 800/s (passed) and 1100/s (failed) three times,
// and judges: the knee at 800/s, the maximum sustainable rate just under
// the server's 1000/s.
func TestSweepFindsTheKnee(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(capacityFake())
		defer stop()
		dir := t.TempDir()
		sw, err := Run(t.Context(), sweepProfile(), Options{Dir: dir, HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		if len(sw.Results) != 7 || !strings.Contains(sw.Verdict.StoppedEarly, "step 4 is clearly past the knee") {
			t.Fatalf("%d steps, stopped %q", len(sw.Results), sw.Verdict.StoppedEarly)
		}
		for i, want := range []bool{true, true, true, false} {
			if s := sw.Results[i]; s.Pass != want {
				t.Fatalf("step %d (%g/s): pass %v (p99 %v, achieved %v, %v)", i+1, s.Value, s.Pass, s.Latency.P99, s.Achieved, s.Reasons)
			}
		}
		var refined []float64
		for _, s := range sw.Results[4:] {
			if !s.Refine {
				t.Fatalf("step %d is not a refinement", s.N)
			}
			refined = append(refined, s.Value)
		}
		if refined[0] != 950 || (refined[1] != 875 && refined[1] != 1025) {
			t.Fatalf("refinements %v: want bisection of 800..1100", refined)
		}
		v := sw.Verdict
		if v.MaxSustainable < 940 || v.MaxSustainable > 1000 || v.KneeStep != 3 || v.Knee != 800 {
			t.Fatalf("verdict %+v", v)
		}
		back, err := metrics.ReadSweep(dir)
		if err != nil || len(back.Results) != 7 {
			t.Fatalf("sweep.json: %v", err)
		}
		for _, d := range []string{"step-01", "step-04"} {
			if _, err := os.Stat(filepath.Join(dir, d, metrics.FileSummary)); err != nil {
				t.Fatalf("%s: %v", d, err)
			}
		}
	})
}

// Ctrl-C during a step keeps the finished steps and says where it stopped.
func TestSweepInterruptKeepsSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(capacityFake())
		defer stop()
		dir := t.TempDir()
		ctx, cancel := context.WithCancelCause(t.Context())
		// Step 1 takes 2.5 s; cut step 2 in its middle.
		time.AfterFunc(3500*time.Millisecond, func() { cancel(errors.New("interrupted by signal")) })
		sw, err := Run(ctx, sweepProfile(), Options{Dir: dir, HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		if len(sw.Results) != 2 || !sw.Results[0].Pass || !sw.Results[1].Interrupted || !sw.Verdict.Interrupted ||
			!strings.Contains(sw.Verdict.StoppedEarly, "interrupted during step 2 (500 ops/s)") {
			t.Fatalf("results %d, verdict %+v", len(sw.Results), sw.Verdict)
		}
		back, _ := metrics.ReadSweep(dir)
		if back == nil || len(back.Results) != 2 || !back.Verdict.Interrupted {
			t.Fatal("sweep.json does not keep the finished steps")
		}
	})
}

func TestSweepValidation(t *testing.T) {
	p := echoProfile()
	p.Sweep = &workload.SweepSpec{By: "load", From: 0, To: 10, Steps: 1}
	p.Defaults()
	var got []string
	for _, e := range p.Validate() {
		got = append(got, e.Error())
	}
	want := `sweep.by: "load", want rate, vus or sessions`
	if len(got) != 3 || got[0] != want {
		t.Fatalf("%q", got)
	}
}

// A sessions sweep holds every step's sessions open to the end of the
// step, even though at 10 ops/s most VUs run no op in the window, and
// judges memory per session across steps.
func TestSessionSweepHoldsSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(okFake())
		defer stop()
		p := echoProfile()
		p.Rate = 10
		p.Sweep = &workload.SweepSpec{By: "sessions", From: 20, To: 60, Steps: 3, Step: workload.Duration(2 * time.Second), Warmup: workload.Duration(500 * time.Millisecond),
			SLO: workload.SLOSpec{P99: workload.Duration(20 * time.Millisecond)}}
		sw, err := Run(t.Context(), p, Options{Dir: t.TempDir(), HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		if len(sw.Results) != 3 {
			t.Fatalf("%d steps, want 3 (%q)", len(sw.Results), sw.Verdict.StoppedEarly)
		}
		for _, s := range sw.Results {
			if s.Sessions != int64(s.Value) || !s.Pass || s.Count != 20 {
				t.Fatalf("step %d: %d sessions open at the end of the window, want %g; pass %v, count %d (want 20)", s.N, s.Sessions, s.Value, s.Pass, s.Count)
			}
		}
		if sw.Verdict.MaxLoad != 60 {
			t.Fatalf("highest load under the SLO %g, want 60 sessions", sw.Verdict.MaxLoad)
		}
	})
}
