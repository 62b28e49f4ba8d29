package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
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
func echoProfile() *profile.Profile {
	return &profile.Profile{Name: "test", URL: "http://fake/mcp", Duration: profile.Duration(10 * time.Second),
		Ops: []profile.OpSpec{{Method: "tools/call", Tool: "echo", Weight: weight(1)}}}
}

func okFake() *mcptest.Server {
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		w.Result(r, map[string]any{"content": []any{}})
	})
	return fake
}

func sweepProfile() *profile.Profile {
	p := echoProfile()
	p.VUs, p.MaxVUs = 4, 400
	p.Sweep = &profile.SweepSpec{By: "rate", From: 200, To: 1400, Steps: 5, Step: profile.Duration(2 * time.Second), Warmup: profile.Duration(500 * time.Millisecond),
		SLO: profile.SLOSpec{P99: profile.Duration(20 * time.Millisecond)}}
	return p
}

// The sweep runs steps up to the overload, stops once clearly past the
// knee, bisects between 800/s (passed) and 1100/s (failed) three times,
// and judges: the maximum sustainable rate just under the server's
// 1000/s. The server queues nothing until it is full (latency flat at
// 1 ms, then 249 ms), so the curve's knee lies past the highest load
// under the SLO and is capped there.
func TestSweepFindsTheKnee(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(capacityFake())
		defer stop()
		dir := t.TempDir()
		sw, err := Run(t.Context(), sweepProfile(), Options{Dir: dir, HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		if len(sw.Results) != 8 || !strings.Contains(sw.Verdict.StoppedEarly, "step 4 is clearly past the knee") {
			t.Fatalf("%d steps, stopped %q", len(sw.Results), sw.Verdict.StoppedEarly)
		}
		// A cool-down between every two steps (7 for 8 steps): the server
		// is back at once, so each settles on one probe; after the
		// overload, a re-check of 800/s, which passes.
		if r := sw.Results[4]; !r.Recheck || r.Value != 800 || !r.Pass {
			t.Fatalf("step 5: %+v, want a passing re-check of 800/s", r)
		}
		for i, r := range sw.Results {
			if (i == 0) != (r.CoolDown == nil) || (i > 0 && (r.CoolDown.Probes != 1 || !r.CoolDown.Settled)) {
				t.Fatalf("step %d: cool-down %+v, want one settled probe before every step but the first", i+1, r.CoolDown)
			}
		}
		if v := sw.Verdict; v.Hysteresis != "" || len(v.NonMonotone) != 0 || v.CoolDowns != 7 || v.Unsettled != 0 || strings.HasPrefix(v.Confidence, "low") {
			t.Fatalf("a server that recovers: %+v", v)
		}
		for i, want := range []bool{true, true, true, false} {
			if s := sw.Results[i]; s.Pass != want {
				t.Fatalf("step %d (%g/s): pass %v (p99 %v, achieved %v, %v)", i+1, s.Value, s.Pass, s.Latency.P99, s.Achieved, s.Reasons)
			}
		}
		var refined []float64
		for _, s := range sw.Results[5:] {
			if !s.Refine {
				t.Fatalf("step %d is not a refinement", s.N)
			}
			refined = append(refined, s.Value)
		}
		if refined[0] != 950 || (refined[1] != 875 && refined[1] != 1025) {
			t.Fatalf("refinements %v: want bisection of 800..1100", refined)
		}
		v := sw.Verdict
		if v.MaxSustainable < 940 || v.MaxSustainable > 1000 || !v.KneeCapped || v.Knee != v.MaxLoad || v.KneeRate > v.MaxSustainable {
			t.Fatalf("verdict %+v", v)
		}
		back, err := results.ReadSweep(dir)
		if err != nil || len(back.Results) != 8 {
			t.Fatalf("sweep.json: %v", err)
		}
		for _, d := range []string{"step-01", "step-04"} {
			if _, err := os.Stat(filepath.Join(dir, d, results.FileSummary)); err != nil {
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
		// The baseline probe takes 1 s, step 1 2.5 s and the cool-down
		// before step 2 one probe (1 s); cut step 2 in its middle.
		time.AfterFunc(5500*time.Millisecond, func() { cancel(errors.New("interrupted by signal")) })
		sw, err := Run(ctx, sweepProfile(), Options{Dir: dir, HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		if len(sw.Results) != 2 || !sw.Results[0].Pass || !sw.Results[1].Interrupted || !sw.Verdict.Interrupted ||
			!strings.Contains(sw.Verdict.StoppedEarly, "interrupted during step 2 (500 ops/s)") {
			t.Fatalf("results %d, verdict %+v", len(sw.Results), sw.Verdict)
		}
		back, _ := results.ReadSweep(dir)
		if back == nil || len(back.Results) != 2 || !back.Verdict.Interrupted {
			t.Fatal("sweep.json does not keep the finished steps")
		}
	})
}

func TestSweepValidation(t *testing.T) {
	p := echoProfile()
	p.Sweep = &profile.SweepSpec{By: "load", From: 0, To: 10, Steps: 1}
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
		p.Sweep = &profile.SweepSpec{By: "sessions", From: 20, To: 60, Steps: 3, Step: profile.Duration(2 * time.Second), Warmup: profile.Duration(500 * time.Millisecond),
			SLO: profile.SLOSpec{P99: profile.Duration(20 * time.Millisecond)}}
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

// --repeat 2 runs each step twice (step-NN and step-NN-r2) and pools
// them: counts add up, the p99 is that of both runs' histograms merged
// (read back from their histograms.hlog), and the p99 and error-rate
// intervals come from both runs' one-second intervals (6 each: the 5 s
// window after a 0.5 s warm-up spans 6 of them).
func TestSweepRepeatPoolsRuns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(capacityFake())
		defer stop()
		dir := t.TempDir()
		p := sweepProfile()
		p.Sweep.From, p.Sweep.To, p.Sweep.Steps, p.Sweep.Refine = 200, 600, 2, -1
		p.Sweep.Step, p.Sweep.Repeat = profile.Duration(5*time.Second), 2
		sw, err := Run(t.Context(), p, Options{Dir: dir, HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		if len(sw.Results) != 2 || sw.Repeat != 2 {
			t.Fatalf("%d steps, repeat %d", len(sw.Results), sw.Repeat)
		}
		for _, s := range sw.Results {
			if len(s.Repeats) != 2 || s.Repeats[0].Dir != s.Dir || s.Repeats[1].Dir != s.Dir+"-r2" {
				t.Fatalf("step %d: repeats %+v", s.N, s.Repeats)
			}
			merged := results.NewHistogram()
			for _, r := range s.Repeats {
				res, err := results.ReadResults(filepath.Join(dir, r.Dir))
				if err != nil {
					t.Fatal(err)
				}
				if res.Summary.All.Count != r.Count {
					t.Fatalf("%s: count %d, summary %d", r.Dir, r.Count, res.Summary.All.Count)
				}
				merged.Merge(res.Histograms[results.HlogTag("tools/call:echo")+".response"])
			}
			p99 := float64(merged.ValueAtQuantile(99)) / 1000
			if s.Count != s.Repeats[0].Count+s.Repeats[1].Count || s.Count != merged.TotalCount() || s.Latency.P99 != p99 {
				t.Fatalf("step %d: count %d (repeats %d + %d, histograms %d), p99 %v (merged histograms %v)", s.N, s.Count,
					s.Repeats[0].Count, s.Repeats[1].Count, merged.TotalCount(), s.Latency.P99, p99)
			}
			if s.Intervals != 12 || s.P99CI == nil || !s.P99CI.Contains(s.Latency.P99) || s.ErrorRateCI == nil || s.ErrorRateCI.Hi != 0 {
				t.Fatalf("step %d: %d intervals, p99 %v in %+v, error rate interval %+v", s.N, s.Intervals, s.Latency.P99, s.P99CI, s.ErrorRateCI)
			}
		}
		if !strings.HasPrefix(sw.Verdict.Confidence, "sure: step 2's p99 interval") {
			t.Fatalf("confidence %q", sw.Verdict.Confidence)
		}
	})
}

// A step's intervals hold exactly its summary's ops: the collector's
// one-second histograms (the graceful stop's joined to the last) add up
// to the summary's count and p99.
func TestStepCollectorMatchesSummary(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(capacityFake())
		defer stop()
		p := echoProfile()
		p.Rate, p.VUs, p.MaxVUs, p.Duration, p.Warmup = 900, 4, 400, profile.Duration(6*time.Second), profile.Duration(time.Second)
		pl, err := workload.Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		st, err := runStep(t.Context(), StepRun{N: 1, Value: 900, Repeat: 1, Plan: pl, Dir: t.TempDir()}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var all stats.Hist
		var count float64
		for i, h := range st.col.resp {
			all, count = all.Add(h), count+st.col.count[i]
		}
		if int64(count) != st.Summary.All.Count || all.Total() != st.Summary.All.Count || all.Quantile(0.99) != st.Summary.All.Response.P99 {
			t.Fatalf("intervals: %v ops (histograms %d), p99 %v; summary %d ops, p99 %v", count, all.Total(), all.Quantile(0.99),
				st.Summary.All.Count, st.Summary.All.Response.P99)
		}
	})
}

// Options.RunStep runs each run of a step in place of the engine (sweep
// --processes: child processes, merged): it gets the step's number, load,
// run, directory and plan (StepProfile's), and the step is judged from
// what it hands the sinks. Here it runs the engine with no sinks and
// hands the sinks the run read back from its files (results.Merged.Replay,
// as sweep --processes does): the steps' numbers are the files', and the
// confidence intervals come from the replayed intervals.
func TestRunStepHook(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(okFake())
		defer stop()
		dir := t.TempDir()
		p := echoProfile()
		p.Rate = 10
		p.Sweep = &profile.SweepSpec{By: "sessions", From: 10, To: 20, Steps: 2, Repeat: 2, Step: profile.Duration(5 * time.Second),
			Warmup: profile.Duration(500 * time.Millisecond), SLO: profile.SLOSpec{P99: profile.Duration(20 * time.Millisecond)}}
		var runs []StepRun
		hook := func(ctx context.Context, run StepRun, sinks []results.Sink) (*results.Summary, error) {
			runs = append(runs, run)
			if _, err := InProcess(ctx, run, nil, Options{}); err != nil {
				return nil, err
			}
			m, err := results.MergeResults([]string{run.Dir})
			if err != nil {
				return nil, err
			}
			m.Replay(sinks...)
			return m.Summary, nil
		}
		sw, err := Run(t.Context(), p, Options{Dir: dir, HTTPClient: hc, RunStep: hook})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 4 || len(sw.Results) != 2 {
			t.Fatalf("%d runs, %d steps: want 2 steps of 2 runs", len(runs), len(sw.Results))
		}
		for i, r := range runs {
			n, v, rep := i/2+1, float64(10*(i/2+1)), i%2+1
			want, err := StepProfile(p, n, v)
			if err != nil {
				t.Fatal(err)
			}
			wantDir := filepath.Join(dir, []string{"step-01", "step-01-r2", "step-02", "step-02-r2"}[i])
			if r.N != n || r.Value != v || r.Repeat != rep || r.Dir != wantDir || !r.Settle || r.Plan.Profile.VUs != want.VUs || r.Plan.Profile.Name != want.Name {
				t.Errorf("run %d: %+v; want step %d at %g, run %d, in %s, settled, the profile of StepProfile", i, r, n, v, rep, wantDir)
			}
		}
		for _, s := range sw.Results {
			var count int64
			measured := 0
			for _, rp := range s.Repeats {
				res, err := results.ReadResults(filepath.Join(dir, rp.Dir))
				if err != nil {
					t.Fatal(err)
				}
				count += res.Summary.All.Count
				for _, iv := range res.Intervals {
					if iv.Phase == results.PhaseMeasure {
						measured++
					}
				}
			}
			if s.Count != count || s.Count == 0 || s.Intervals != measured || s.P99CI == nil || s.Sessions != int64(s.Value) {
				t.Errorf("step %d: %d ops (files %d), %d intervals (files %d measured), p99 interval %v, %d sessions", s.N, s.Count, count, s.Intervals, measured, s.P99CI, s.Sessions)
			}
		}
	})
}

// degradingFake serves one request at a time, 1 ms each (1000/s at
// most), like capacityFake; once more than 50 requests wait, it stays
// slow (every answer 30 ms later) for recover after the last such
// moment, or for good when recover is 0: a server that does not get
// over an overload (hysteresis). With cold > 0 it also starts cold: every
// call in the first cold after its first one is 30 ms slower.
func degradingFake(recover, cold time.Duration) *mcptest.Server {
	fake := okFake()
	sem := make(chan struct{}, 1)
	var mu sync.Mutex
	var waiting int
	var until, first time.Time
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
			if cold > 0 {
				until = first.Add(cold)
			}
		}
		waiting++
		if waiting > 50 {
			until = time.Now().Add(recover)
			if recover == 0 {
				until = time.Now().Add(24 * time.Hour)
			}
		}
		mu.Unlock()
		sem <- struct{}{}
		time.Sleep(time.Millisecond)
		<-sem
		mu.Lock()
		waiting--
		slow := time.Now().Before(until)
		mu.Unlock()
		if slow {
			time.Sleep(30 * time.Millisecond)
		}
		w.Result(r, map[string]any{"content": []any{}})
	})
	return fake
}

// A server that stays slow for 3 s after an overload: the cool-down
// after the failed step probes (20/s, a tenth of the lowest step) until
// its p50 is back to the baseline — 4 probes: the first three fall in
// the slow 3 s —, and the re-check of 800/s then passes: no hysteresis.
func TestSweepCoolsDownAfterOverload(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(degradingFake(3*time.Second, 0))
		defer stop()
		p := sweepProfile()
		p.Sweep.Refine = -1 // no bisect: the re-check is the last step
		sw, err := Run(t.Context(), p, Options{Dir: t.TempDir(), HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		r := sw.Results[len(sw.Results)-1]
		if !r.Recheck || r.Value != 800 || !r.Pass || r.CoolDown == nil || !r.CoolDown.Settled || r.CoolDown.Probes != 4 {
			t.Fatalf("last step %+v cool-down %+v: want a passing re-check of 800/s after 4 probes", r, r.CoolDown)
		}
		v := sw.Verdict
		// Steps 1–3 pass: the cool-downs before steps 2 and 3 settle on
		// one probe; the one before step 4 too (step 3 did not overload).
		for i, s := range sw.Results[1 : len(sw.Results)-1] {
			if s.CoolDown == nil || s.CoolDown.Probes != 1 || !s.CoolDown.Settled {
				t.Fatalf("step %d: cool-down %+v, want one settled probe", i+2, s.CoolDown)
			}
		}
		if v.Hysteresis != "" || v.CoolDowns != 4 || v.Unsettled != 0 || strings.HasPrefix(v.Confidence, "low") {
			t.Fatalf("verdict %+v", v)
		}
	})
}

// A server that never gets over the overload: the cool-down runs out of
// time (5 s bound: 5 probes), the re-check of 800/s fails, and the
// verdict says so (hysteresis) with a low confidence.
func TestSweepHysteresis(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(degradingFake(0, 0))
		defer stop()
		p := sweepProfile()
		p.Sweep.Refine = -1
		dir := t.TempDir()
		sw, err := Run(t.Context(), p, Options{Dir: dir, HTTPClient: hc, CoolDownMax: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r := sw.Results[len(sw.Results)-1]
		if !r.Recheck || r.Value != 800 || r.Pass || r.CoolDown == nil || r.CoolDown.Settled || r.CoolDown.Probes != 5 {
			t.Fatalf("last step %+v cool-down %+v: want a failed re-check of 800/s after 5 probes", r, r.CoolDown)
		}
		v := sw.Verdict
		if !strings.HasPrefix(v.Hysteresis, fmt.Sprintf("step %d re-ran 800 ops/s after the overload and failed (p99 ", r.N)) || v.CoolDowns != 4 || v.Unsettled != 1 ||
			!strings.HasPrefix(v.Confidence, "low: the re-check of the highest passing load after the overload failed (hysteresis); 1 cool-down(s) ran out of time") {
			t.Fatalf("verdict %+v", v)
		}
		csv, _ := os.ReadFile(filepath.Join(dir, "sweep.csv"))
		if !strings.Contains(string(csv), fmt.Sprintf(",recheck,5,%.3f,false\n", r.CoolDown.Seconds)) {
			t.Errorf("sweep.csv lacks the re-check and its cool-down:\n%s", csv)
		}
		var b strings.Builder
		if err := WriteText(&b, sw); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"cool-down: 5 probe(s)", "not back to its baseline", "WARNING W-SWEEP-HYSTERESIS: step ", "WARNING W-SWEEP-COOLDOWN: 1 of 4 cool-down(s) ran out of time", "Cool-downs: 4 between steps", "1 not back to the baseline when the time was up (WARNING W-SWEEP-COOLDOWN below)", fmt.Sprintf("%3dc ", r.N)} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("text lacks %q:\n%s", want, b.String())
			}
		}
	})
}

// A server that starts cold (30 ms slower for its first second, which
// is the baseline probe's) and stays slow for 3 s after an overload. The
// cold probe's p50 (31 ms) would let the server pass as "back to its
// baseline" while still 30 ms slow (the reviewer's 45 ms baseline
// against step 1's 22 ms p50). Step 1 passes faster, at a higher load,
// so its p50 becomes the baseline (the probe's own is kept), and the
// cool-down after the overload waits for the real recovery: 4 probes,
// as for a server that started warm. Before, it took 1.
func TestSweepBaselineWarmedByStep1(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(degradingFake(3*time.Second, time.Second))
		defer stop()
		p := sweepProfile()
		p.Sweep.Refine = -1
		sw, err := Run(t.Context(), p, Options{Dir: t.TempDir(), HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		s1 := sw.Results[0]
		if !s1.Pass || sw.ProbeFirstP50MS < 30 || sw.ProbeBaselineMS != s1.Latency.P50 || sw.ProbeBaselineMS > 2 {
			t.Fatalf("probe p50 %v, baseline %v, step 1 p50 %v (pass %v): want step 1's p50 as the baseline under the cold probe's",
				sw.ProbeFirstP50MS, sw.ProbeBaselineMS, s1.Latency.P50, s1.Pass)
		}
		r := sw.Results[len(sw.Results)-1]
		if !r.Recheck || !r.Pass || r.CoolDown == nil || !r.CoolDown.Settled || r.CoolDown.Probes != 4 || r.CoolDown.Baseline != sw.ProbeBaselineMS {
			t.Fatalf("re-check %+v cool-down %+v: want 4 probes against the warm baseline", r, r.CoolDown)
		}
	})
}

// A warm server: step 1 is no faster than the probe, so the probe's p50
// stays the baseline and nothing is recorded as replaced.
func TestSweepBaselineKeptWhenWarm(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(degradingFake(3*time.Second, 0))
		defer stop()
		p := sweepProfile()
		p.Sweep.Refine = -1
		sw, err := Run(t.Context(), p, Options{Dir: t.TempDir(), HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		if sw.ProbeFirstP50MS != 0 || sw.ProbeBaselineMS == 0 || sw.ProbeBaselineMS > sw.Results[0].Latency.P50 {
			t.Fatalf("probe p50 %v, baseline %v, step 1 p50 %v", sw.ProbeFirstP50MS, sw.ProbeBaselineMS, sw.Results[0].Latency.P50)
		}
	})
}
