package launch

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// fixtureRun is a results directory planted for compare: its summary and
// its measured one-second intervals (completed ops, p50, p90 and p99 per
// interval).
type fixtureRun struct {
	profile, model, protocol, target string
	targetRate                       float64
	vus, maxVUs                      int
	rate                             float64 // the summary's throughput
	counts                           []int64 // per interval
	p50, p90, p99                    []float64
	errors, dropped                  int64
	spec                             any // run.json's spec (nil: no run.json)
}

// like returns a clean open-model run at 1000/s: 10 intervals of about
// 1000 ops, p50 1 ms, p90 2 ms, p99 10.5 ms, each with a little spread.
func like() fixtureRun {
	f := fixtureRun{profile: "ramp", model: "open", protocol: "2025-11-25", target: "http://127.0.0.1:8080/mcp", targetRate: 1000, vus: 50, maxVUs: 200, rate: 1000}
	for i := range 10 {
		d := float64(i%2*2 - 1) // −1, +1, …
		f.counts = append(f.counts, int64(1000+5*d))
		f.p50, f.p90, f.p99 = append(f.p50, 1+0.01*d), append(f.p90, 2+0.02*d), append(f.p99, 10.5+0.1*d)
	}
	return f
}

// write writes the run's summary.json and intervals.csv under dir.
func (f fixtureRun) write(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var count int64
	for _, c := range f.counts {
		count += c
	}
	median := func(v []float64) float64 { return v[len(v)/2] }
	s := results.Summary{Tool: "mcpbench", Target: f.target, Protocol: f.protocol, Profile: f.profile, Model: f.model, TargetRate: f.targetRate,
		VUs: f.vus, MaxVUs: f.maxVUs, Rate: f.rate, Dropped: f.dropped, DurationS: float64(len(f.counts)),
		All: results.OpSummary{Name: "all", Count: count, Errors: f.errors, Rate: f.rate,
			Response: results.Latency{P50: median(f.p50), P90: median(f.p90), P99: median(f.p99)}}}
	if n := count + f.dropped; n > 0 {
		s.DroppedRate = float64(f.dropped) / float64(n)
	}
	if count > 0 {
		s.All.ErrorRate = float64(f.errors) / float64(count)
	}
	s.Ops = []results.OpSummary{s.All}
	s.Ops[0].Name = "tools/call:echo"
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(dir, results.FileSummary), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("t_s,interval_s,phase,dropped,all.count,all.errors,all.p50_ms,all.p90_ms,all.p99_ms,all.max_ms\n")
	for i, c := range f.counts {
		fmt.Fprintf(&b, "%d,1,measure,%d,%d,0,%g,%g,%g,%g\n", i+1, f.dropped/int64(len(f.counts)), c, f.p50[i], f.p90[i], f.p99[i], 2*f.p99[i])
	}
	if err := os.WriteFile(filepath.Join(dir, "intervals.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if f.spec != nil {
		if err := results.WriteJSON(filepath.Join(dir, results.FileRun), results.RunInfo{Tool: "mcpbench", Target: f.target, Profile: f.profile, Spec: f.spec}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runPar is run (helpers_test.go): compare as the command runs it.
func runPar(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return run(t, args...)
}

// headline is compare's first line.
func headline(t *testing.T, out string) string {
	t.Helper()
	first, _, _ := strings.Cut(out, "\n")
	return first
}

// The runs: A at 1000/s offered achieved 730/s and dropped 27 %
// of its arrivals (p99 30 ms); B achieved its 1000/s and dropped none
// (p99 10.5 ms). The headline states each change with its size and
// calls every one beyond the noise; before, it read "p99 unchanged
// (within the noise) · throughput unchanged (within the noise)".
func TestCompareHeadlineDropsAndThroughput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fa := like()
	fa.rate, fa.dropped = 730, 2700
	for i := range fa.counts {
		fa.counts[i] -= 270
		fa.p50[i], fa.p90[i], fa.p99[i] = 3*fa.p50[i], 5*fa.p90[i], 30+fa.p99[i]-10.5
	}
	a, b := fa.write(t, filepath.Join(dir, "a")), like().write(t, filepath.Join(dir, "b"))
	out, errs, code := runPar(t, "compare", a, b)
	if code != int(ExitOK) {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	want := "throughput +37.0% (730.0 → 1000.0 ops/s, beyond the noise) · dropped −27.00 pp (27.00% → 0.00%, beyond the noise) · errors none in either run · " +
		"p50 −66.7% (3.030 → 1.010 ms, beyond the noise) · p90 −80.0% (10.10 → 2.020 ms, beyond the noise) · p99 −64.8% (30.10 → 10.60 ms, beyond the noise)"
	if got := headline(t, out); got != want {
		t.Fatalf("headline\n got %s\nwant %s", got, want)
	}
	// The table's rate row reads Welch's test, as the headline does.
	if !strings.Contains(out, "beyond (p=<0.0001, Welch t on per-interval throughput)") {
		t.Fatalf("table:\n%s", out)
	}
}

// A smoke run against a ramp run is not like-for-like: compare names each
// difference and refuses (exit 2); --force compares them under a NOT
// LIKE-FOR-LIKE line.
func TestCompareRefusesUnlikeRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	smoke := like()
	smoke.profile, smoke.model, smoke.targetRate, smoke.vus, smoke.protocol, smoke.target = "smoke", "closed", 0, 4, "2026-07-28", "http://127.0.0.1:9090/mcp"
	a, b := smoke.write(t, filepath.Join(dir, "a")), like().write(t, filepath.Join(dir, "b"))
	diffs := "profile smoke vs ramp; model closed vs open; offered rate 0/s vs 1000/s; VUs 4 vs 50; protocol 2026-07-28 vs 2025-11-25; target http://127.0.0.1:9090/mcp vs http://127.0.0.1:8080/mcp"
	out, errs, code := runPar(t, "compare", a, b)
	if code != int(ExitUsage) || out != "" || !strings.Contains(errs, "are not like-for-like: "+diffs+"; their differences would not be the servers' alone (launch.Compare.Force compares them anyway)") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	out, errs, code = runPar(t, "compare", a, b, "--force")
	if code != int(ExitOK) || headline(t, out) != "NOT LIKE-FOR-LIKE [W-COMPARE-UNLIKE]: "+diffs+" — the differences below are not the servers' alone; remedy: compare runs of one profile and load against one target (docs/troubleshooting.md#w-compare-unlike)" {
		t.Fatalf("--force: exit %d %s\n%s", code, errs, out)
	}
	// One difference alone is enough: the offered rate.
	other := like()
	other.targetRate = 500
	if _, errs, code := runPar(t, "compare", other.write(t, filepath.Join(dir, "c")), b); code != int(ExitUsage) || !strings.Contains(errs, "not like-for-like: offered rate 500/s vs 1000/s;") {
		t.Fatalf("offered rate: exit %d %s", code, errs)
	}
}

// Three intervals a side: Welch's test still tells the throughput apart,
// but no Mann–Whitney test of 3 against 3 can reach p < 0.05, so the
// percentiles say so instead of "within the noise".
func TestCompareFewIntervals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fa, fb := like(), like()
	fa.counts, fa.p50, fa.p90, fa.p99 = fa.counts[:3], fa.p50[:3], fa.p90[:3], fa.p99[:3]
	fb.counts, fb.p50, fb.p90, fb.p99 = fb.counts[:3], fb.p50[:3], fb.p90[:3], fb.p99[:3]
	for i := range fb.p99 {
		fb.p99[i] *= 2
		fb.counts[i] += 100
	}
	fb.rate = 1100
	out, errs, code := runPar(t, "compare", fa.write(t, filepath.Join(dir, "a")), fb.write(t, filepath.Join(dir, "b")))
	if code != int(ExitOK) {
		t.Fatalf("exit %d %s", code, errs)
	}
	want := "throughput +10.0% (1000.0 → 1100.0 ops/s, beyond the noise) · dropped none in either run · errors none in either run · " +
		"p50 +0.0% (1.010 → 1.010 ms, not tested: too few intervals to tell (3 and 3)) · p90 +0.0% (2.020 → 2.020 ms, not tested: too few intervals to tell (3 and 3)) · " +
		"p99 +100.0% (10.60 → 21.20 ms, not tested: too few intervals to tell (3 and 3))"
	if got := headline(t, out); got != want {
		t.Fatalf("headline\n got %s\nwant %s", got, want)
	}
}

// Two sweeps whose SLO brackets overlap (2643–2777 and 2653–2790 ops/s,
// 0.4 % apart) are within the noise; before, their interpolated
// crossings' narrow intervals called them "beyond (intervals apart)".
// Brackets apart are not by themselves beyond the noise (a bracket is
// not a confidence interval): only a load both sweeps ran, passed by one
// and failed by the other with their p99 intervals apart, is; and a
// sweep whose confidence is low is not judged. A sweep of another
// profile is refused unless --force.
func TestCompareSweepsBrackets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sweep := func(name, profile string, lo, hi float64, confidence string) string {
		p99 := func(v float64) *results.CI { return &results.CI{Lo: 0.9 * v, Hi: 1.1 * v} }
		sw := results.Sweep{Tool: "mcpbench", Target: "http://127.0.0.1:8080/mcp", Profile: profile, Protocol: "2025-11-25", By: "rate", StepS: 8,
			SLO: results.SLO{P99MS: 50, ErrorRate: 0.01},
			Results: []results.SweepStep{
				{N: 1, By: "rate", Value: lo, Achieved: lo, Count: 20000, Pass: true, Latency: results.Latency{P99: 23}, P99CI: p99(23)},
				{N: 2, By: "rate", Value: hi, Achieved: hi, Count: 20000, Latency: results.Latency{P99: 1600}, P99CI: p99(1600)},
			},
			Verdict: results.SweepVerdict{MaxSustainable: lo, MaxStep: 1, MaxLoad: lo, Crossing: &results.Bracket{Lo: lo, Hi: hi, LoStep: 1, HiStep: 2}, Confidence: confidence}}
		d := filepath.Join(dir, name)
		os.MkdirAll(d, 0o755)
		data, _ := json.Marshal(sw)
		if err := os.WriteFile(filepath.Join(d, "sweep.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := sweep("a", "cap", 2643, 2777, "sure"), sweep("b", "cap", 2653, 2790, "sure")
	out, errs, code := runPar(t, "compare", a, b)
	want := "max_sustainable_rate +0.4% (2643.0 → 2653.0 ops/s, within the noise: brackets overlap) · slo_crossing 2643.0–2777.0 → 2653.0–2790.0 ops/s (within the noise: brackets overlap)"
	if code != int(ExitOK) || headline(t, out) != want || !strings.Contains(out, "within (brackets overlap)") || strings.Contains(out, "beyond") {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	// Brackets apart, no load in common: not judged (before: "beyond the
	// noise: brackets apart").
	c := sweep("c", "cap", 3000, 3100, "sure")
	if out, _, _ := runPar(t, "compare", a, c); !strings.Contains(headline(t, out), "slo_crossing 2643.0–2777.0 → 3000.0–3100.0 ops/s (not judged: brackets apart, but no load both sweeps measured has p99 intervals to tell them apart (a bracket is not a confidence interval))") {
		t.Fatalf("apart:\n%s", out)
	}
	// At 2777/s A failed (p99 1600 ms) and E passed (23 ms): beyond.
	e := sweep("e", "cap", 2777, 3100, "sure")
	if out, _, _ := runPar(t, "compare", a, e); !strings.Contains(headline(t, out), "slo_crossing 2643.0–2777.0 → 2777.0–3100.0 ops/s (beyond the noise: at 2777 ops/s A failed and B passed, their p99 intervals apart)") {
		t.Fatalf("a common load apart:\n%s", out)
	}
	// The same with E's confidence low: not judged, and it says why.
	f := sweep("f", "cap", 2777, 3100, "low: 1 step(s) achieved less than a step at a lower load (non-monotone)")
	if out, _, _ := runPar(t, "compare", a, f); !strings.Contains(headline(t, out), "(not judged: B's confidence is low (its steps depend on what ran before them))") || strings.Contains(headline(t, out), "beyond") {
		t.Fatalf("low confidence:\n%s", out)
	}
	other := sweep("d", "other", 2643, 2777, "sure")
	if _, errs, code := runPar(t, "compare", a, other); code != int(ExitUsage) || !strings.Contains(errs, "not like-for-like: profile cap vs other;") {
		t.Fatalf("other profile: exit %d %s", code, errs)
	}
	if out, _, code := runPar(t, "compare", a, other, "--force"); code != int(ExitOK) || headline(t, out) != "NOT LIKE-FOR-LIKE [W-COMPARE-UNLIKE]: profile cap vs other — the differences below are not the servers' alone; remedy: compare runs of one profile and load against one target (docs/troubleshooting.md#w-compare-unlike)" {
		t.Fatalf("--force: exit %d\n%s", code, out)
	}
}

// Two runs of the same clean server (the embedded reference server, at
// once, so the machine's load is shared) compare like for like, with
// throughput, drops and errors within the noise (checked with the cores
// saturated by stress-ng --cpu 2 too).
func TestCompareCleanRunsWithinTheNoise(t *testing.T) {
	testenv.Long(t)
	t.Parallel()
	dir := t.TempDir()
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, name := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := testProfile(t, "smoke", "rate", 50.0, "duration", 4*time.Second, "warmup", time.Second)
			_, _, codes[i] = testRun(t, Spec{Command: "run", Profile: p, Out: filepath.Join(dir, name), Quiet: true}, (*Test).Run)
		}()
	}
	wg.Wait()
	if codes[0] != int(ExitOK) || codes[1] != int(ExitOK) {
		t.Fatalf("runs: exit %v", codes)
	}
	out, errs, code := runPar(t, "compare", filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	if code != int(ExitOK) {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	// With the cores saturated by another process both runs may drop
	// arrivals (the generator starved), alike: within the noise.
	h := headline(t, out)
	drops := strings.Contains(h, "dropped none in either run") || regexp.MustCompile(`dropped [−+][0-9.]+ pp \([0-9.]+% → [0-9.]+%, within the noise\)`).MatchString(h)
	if strings.HasPrefix(h, "NOT LIKE-FOR-LIKE") || !strings.Contains(h, "ops/s, within the noise)") || !drops || !strings.Contains(h, "errors none in either run") {
		t.Fatalf("headline %s\n%s", h, out)
	}
}

// A short sweep of the embedded reference server stays clean: every step
// passes, the one cool-down (between the two steps) settles and no
// re-check runs; nothing is non-monotone,
// no hysteresis, no step dropped an arrival, and the confidence is not
// lowered.
func TestSweepReferenceServerStaysClean(t *testing.T) {
	testenv.Long(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sw")
	p := testProfile(t, "smoke")
	p.Sweep = &profile.SweepSpec{}
	override(t, p, "sweep.from", 20.0, "sweep.to", 40.0, "sweep.steps", 2, "sweep.step", 2*time.Second, "sweep.warmup", 500*time.Millisecond, "sweep.slo.p99", 2*time.Second)
	out, errs, code := testRun(t, Spec{Command: "sweep", Profile: p, Out: dir, Quiet: true}, (*Test).Sweep)
	if code != int(ExitOK) {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	sw, err := results.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := sw.Verdict
	if len(sw.Results) != 2 || v.Crossing != nil || len(v.NonMonotone) != 0 || v.Hysteresis != "" || v.CoolDowns != 1 || v.Unsettled != 0 || strings.HasPrefix(v.Confidence, "low") {
		t.Fatalf("steps %+v, verdict %+v", sw.Results, v)
	}
	for _, s := range sw.Results {
		if !s.Pass || s.Recheck || (s.N == 1) != (s.CoolDown == nil) || (s.CoolDown != nil && !s.CoolDown.Settled) || s.Dropped != 0 {
			t.Fatalf("step %+v", s)
		}
	}
}

// slowSpec is run.json's spec of `--tool slow --args '{"ms":MS}'` (as
// the resolved profile is written: Go field names), with the fields two
// like-for-like runs may differ in set apart per run.
func slowSpec(ms float64, url string, seed int) map[string]any {
	return map[string]any{
		"Source": "ramp", "Name": "ramp", "URL": url, "Seed": seed, "Duration": "10s", "Rate": 1000,
		"Concurrency": 1, "ThinkTime": "0s",
		"Ops": []any{map[string]any{"Method": "tools/call", "Tool": "slow", "Arguments": map[string]any{"ms": ms}, "Weight": 1}},
	}
}

// Two runs of one profile name whose tool arguments differ (the
// reviewer's r1 --args '{"ms":20}' vs r2 '{"ms":2}') are not
// like-for-like: compare names the differing field of the resolved
// profile and refuses. Before, it compared the profile's name only and
// called them alike. Runs that differ only in seed, target port and
// length still compare.
func TestCompareRefusesAnotherResolvedProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fa, fb := like(), like()
	fa.spec, fb.spec = slowSpec(20, "http://127.0.0.1:1111/mcp", 1), slowSpec(2, "http://127.0.0.1:2222/mcp", 2)
	a, b := fa.write(t, filepath.Join(dir, "a")), fb.write(t, filepath.Join(dir, "b"))
	out, errs, code := runPar(t, "compare", a, b)
	if code != int(ExitUsage) || out != "" || !strings.Contains(errs, "are not like-for-like: spec Ops[0].Arguments.ms 20 vs 2; their differences") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	out, _, code = runPar(t, "compare", a, b, "--force")
	if code != int(ExitOK) || !strings.HasPrefix(headline(t, out), "NOT LIKE-FOR-LIKE [W-COMPARE-UNLIKE]: spec Ops[0].Arguments.ms 20 vs 2 — ") {
		t.Fatalf("--force: exit %d\n%s", code, out)
	}
	// Clean: the same resolved profile, another seed, port and length.
	fc := like()
	fc.spec = slowSpec(20, "http://127.0.0.1:3333/mcp", 3)
	fc.spec.(map[string]any)["Duration"] = "30s"
	out, errs, code = runPar(t, "compare", a, fc.write(t, filepath.Join(dir, "c")))
	if code != int(ExitOK) || strings.Contains(out, "NOT LIKE-FOR-LIKE") {
		t.Fatalf("alike: exit %d %s\n%s", code, errs, out)
	}
}
