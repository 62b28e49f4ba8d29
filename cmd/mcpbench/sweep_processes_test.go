package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// readSweep reads a sweep's sweep.json.
func readSweep(t *testing.T, dir string) *results.Sweep {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sw results.Sweep
	if err := json.Unmarshal(data, &sw); err != nil {
		t.Fatal(err)
	}
	return &sw
}

// segDirs are a step's two children's results directories.
func segDirs(dir string) (string, string) {
	return filepath.Join(dir, "segment-0"), filepath.Join(dir, "segment-1")
}

// sweep --processes 2: each step's two children run its segments against
// one server; the step's directory is their exact merge (its count the
// sum of theirs), and the step is judged from it: its count, p99 and p50
// are those of one histogram of every sample both children logged, its
// achieved rate the count over the merged window; and the server executed
// exactly the ops the steps counted, plus one warm-up op per step (the
// schedule's first arrival, due at the clock's start, 1 ms before the
// window opens).
func TestSweepProcessesMergesEachStep(t *testing.T) {
	testenv.Long(t)
	if testing.Short() {
		t.Skip("runs mcpbench as processes")
	}
	// Not parallel: both steps must pass (a sweep adds steps after a
	// failed one), and with the CPU shared by the other process tests a
	// step's children can fall behind its rate. (The children's rows need
	// not line up: the merge sums each one's latest gauges.)
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "sw")
	out, errs, code := runPar(t, "sweep", "--processes", "2", "--url", srv.URL(), "--tool", "echo", "--args", `{"text":"hi"}`, "--from", "50", "--to", "100",
		"--steps", "2", "--step", "1s", "--step-warmup", "1ms", "--slo-p99", "5s", "--start-delay", "1s", "-q", "--out", dir)
	if code != exitOK || !strings.Contains(errs, "2 processes") || !strings.Contains(out, "Maximum sustainable rate") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	sw := readSweep(t, dir)
	if len(sw.Results) != 2 {
		t.Fatalf("%d steps, want 2", len(sw.Results))
	}
	var counted int64
	for _, st := range sw.Results {
		d := filepath.Join(dir, st.Dir)
		a, b := segDirs(d)
		m, s0, s1 := readSum(t, d), readSum(t, a), readSum(t, b)
		if m.All.Count != s0.All.Count+s1.All.Count || st.Count != m.All.Count || s0.All.Count == 0 || s1.All.Count == 0 {
			t.Fatalf("step %d: %d ops, merged %d, segments %d + %d", st.N, st.Count, m.All.Count, s0.All.Count, s1.All.Count)
		}
		truth := allSamples(t, a, b)
		want := results.LatencyOf(truth)
		if truth.TotalCount() != st.Count || st.Latency.P99 != want.P99 || st.Latency.P50 != want.P50 {
			t.Errorf("step %d: p50 %v p99 %v of %d ops; every sample of both children: p50 %v p99 %v of %d", st.N, st.Latency.P50, st.Latency.P99, st.Count, want.P50, want.P99, truth.TotalCount())
		}
		if rate := math.Round(float64(st.Count)/m.DurationS*1000) / 1000; st.Achieved != rate || m.DurationS < 0.9 || m.DurationS > 1.1 {
			t.Errorf("step %d: achieved %v ops/s, want %d ops over the merged %v s window: %v", st.N, st.Achieved, st.Count, m.DurationS, rate)
		}
		if !st.Pass || st.Errors != 0 {
			t.Errorf("step %d: pass %v, %d errors", st.N, st.Pass, st.Errors)
		}
		// The step's collector got the merged rows: its generator memory is
		// the last measured row's, each child's memory then summed (its
		// latest row by then, whether or not the children's rows line up).
		last, at := lastMeasured(t, d)
		la, lb := rssAt(t, a, at), rssAt(t, b, at)
		if st.GenRSSMB != last || last != math.Round((la+lb)*1000)/1000 || st.Intervals == 0 {
			t.Errorf("step %d: generator RSS %v MB over %d intervals; the merged last measured row has %v MB, the children's %v + %v", st.N, st.GenRSSMB, st.Intervals, last, la, lb)
		}
		counted += st.Count
	}
	if got, want := srv.Stats().ToolCalls, counted+int64(len(sw.Results))+sw.ProbeOps; got != want || sw.ProbeOps == 0 {
		t.Errorf("the server executed %d tool calls; the steps counted %d (+1 warm-up op each), the cool-down probes %d", got, counted, sw.ProbeOps)
	}
}

// lastMeasured is the generator's RSS (MB) in the last measured row of a
// results directory, and when that row ended.
func lastMeasured(t *testing.T, dir string) (float64, time.Time) {
	t.Helper()
	res, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	var last float64
	var end time.Time
	for _, iv := range res.Intervals {
		if iv.Phase == results.PhaseMeasure {
			last, end = iv.Self.RSSMB, rowEnd(res, iv)
		}
	}
	return last, end
}

// rssAt is the generator's RSS (MB) of a results directory at time at:
// that of its latest row ended by then (with the merge's 5 ms of slack).
func rssAt(t *testing.T, dir string, at time.Time) float64 {
	t.Helper()
	res, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rss float64
	for _, iv := range res.Intervals {
		if !rowEnd(res, iv).After(at.Add(5 * time.Millisecond)) {
			rss = iv.Self.RSSMB
		}
	}
	return rss
}

// rowEnd is when an intervals.csv row ended (ms, as the merge reads it).
func rowEnd(res *results.Results, iv results.IntervalRec) time.Time {
	return res.Run.Started.Add(time.Duration(math.Round(iv.T*1000)) * time.Millisecond)
}

// queueFake serves one tools/call at a time, 10 ms each: 100 calls/s at
// most, whichever processes send them. The queue runs on computed times,
// not on how late each sleep wakes: a call starts when it arrives or when
// the one before it is computed to end, whichever is later, and is
// answered at its computed end (or as soon after as the machine wakes it).
// So a loaded machine adds its wake-up delays to each answer but never
// lowers the capacity: below 100 calls/s no queue builds, above it one
// grows by the excess every second.
func queueFake() *mcptest.Server {
	fake := mcptest.New()
	var mu sync.Mutex
	var free time.Time // when the server finishes the calls it has
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		mu.Lock()
		now := time.Now()
		if free.Before(now) {
			free = now
		}
		free = free.Add(10 * time.Millisecond) // the planted service time
		end := free
		mu.Unlock()
		time.Sleep(time.Until(end)) // the service time, not a wait for another goroutine
		w.Result(r, map[string]any{"content": []any{}})
	})
	return fake
}

// A server planted to hold 100 calls/s: a sweep from 40 to 240 calls/s
// passes its first step and fails the second on p99 (its queue grows by
// 140 calls, 1.4 s, a second; the SLO, 500 ms, leaves the first step room
// for a loaded machine's wake-up delays) — in one process and
// as two processes alike (the children share the server's capacity) —
// and each child's step runs exactly the in-process step's profile (its
// run.json's effective profile is the in-process step's).
func TestSweepProcessesFailsTheSLOAsInProcess(t *testing.T) {
	testenv.Long(t)
	if testing.Short() {
		t.Skip("runs mcpbench as processes")
	}
	t.Parallel()
	srv := httptest.NewServer(queueFake())
	defer srv.Close()
	prof := filepath.Join(t.TempDir(), "queue.yaml")
	yaml := "name: queue\nops:\n  - {method: tools/call, tool: work, weight: 1}\nsweep: {refine: -1}\n" // no bisection: two steps
	if err := os.WriteFile(prof, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"sweep", "--profile", prof, "--url", srv.URL, "--from", "40", "--to", "240", "--steps", "2", "--step", "1s", "--step-warmup", "1ms", "--slo-p99", "500ms", "-q"}
	inproc, procs := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "two")
	for _, args := range [][]string{append(common, "--out", inproc), append(common, "--out", procs, "--processes", "2", "--start-delay", "1s")} {
		out, errs, code := runPar(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errs)
		}
	}
	for _, d := range []string{inproc, procs} {
		sw := readSweep(t, d)
		// Step 3 re-checks 40/s after the overload and a cool-down.
		if len(sw.Results) != 3 || !sw.Results[0].Pass || sw.Results[1].Pass || len(sw.Results[1].Reasons) == 0 ||
			!strings.HasPrefix(sw.Results[1].Reasons[0], "p99 ") || sw.Verdict.MaxLoad != 40 || !sw.Results[2].Recheck || sw.Results[2].Value != 40 || sw.Results[2].CoolDown == nil {
			t.Errorf("%s: want step 1 passed, step 2 failed on p99, step 3 a re-check of 40/s, max load 40: %+v %+v", d, sw.Results, sw.Verdict)
		}
	}
	for _, step := range []string{"step-01", "step-02"} {
		want, got := specOf(t, filepath.Join(inproc, step)), specOf(t, filepath.Join(procs, step, "segment-1"))
		if d := cmp.Diff(want, got); d != "" || len(want) < 100 {
			t.Errorf("%s: the child's profile differs from the in-process step's (-in-process +child):\n%s", step, d)
		}
	}
}

// specOf is the effective profile a results directory's run.json records.
func specOf(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Spec json.RawMessage }
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	json.Indent(&b, info.Spec, "", "  ")
	return b.String()
}

// Ctrl-C during a sweep as processes is forwarded to the step's
// children: the finished step is kept as it was judged, the interrupted
// one is the merge of what both children measured, and the sweep exits
// 130.
func TestSweepProcessesInterruptKeepsFinishedSteps(t *testing.T) {
	testenv.Long(t)
	if testing.Short() {
		t.Skip("runs mcpbench as processes")
	}
	t.Parallel()
	url := startRefServer(t)
	dir := filepath.Join(t.TempDir(), "sw")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		errs string
		code int
	}
	done := make(chan result, 1)
	go func() {
		_, errs, code := cli(ctx, "sweep", "--processes", "2", "--url", url, "--tool", "echo", "--args", `{"text":"hi"}`, "--from", "50", "--to", "100",
			"--steps", "2", "--step", "2s", "--step-warmup", "1ms", "--slo-p99", "5s", "--start-delay", "1s", "-q", "--out", dir)
		done <- result{errs, code}
	}()
	a, b := segDirs(filepath.Join(dir, "step-02"))
	deadline := time.Now().Add(40 * time.Second)
	for !measuring(a) || !measuring(b) { // step 2's children are measuring
		if time.Now().After(deadline) {
			t.Fatal("step 2 did not start")
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline: other processes
	}
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("the interrupt did not end the sweep")
	}
	sw := readSweep(t, dir)
	if r.code != exitInterrupted || len(sw.Results) != 2 || !sw.Verdict.Interrupted {
		t.Fatalf("exit %d, %d steps, interrupted %v\n%s", r.code, len(sw.Results), sw.Verdict.Interrupted, r.errs)
	}
	if s1 := sw.Results[0]; s1.Interrupted || !s1.Pass || s1.Count != readSum(t, filepath.Join(dir, "step-01")).All.Count {
		t.Errorf("step 1 not kept as judged: %+v", s1)
	}
	m, s0, s1 := readSum(t, filepath.Join(dir, "step-02")), readSum(t, a), readSum(t, b)
	if st := sw.Results[1]; !st.Interrupted || !m.Interrupted || !s0.Interrupted || !s1.Interrupted || st.Count != s0.All.Count+s1.All.Count || s0.All.Count == 0 || s1.All.Count == 0 {
		t.Errorf("step 2: interrupted %v (merged %v, children %v %v), %d ops; children %d + %d", st.Interrupted, m.Interrupted, s0.Interrupted, s1.Interrupted, st.Count, s0.All.Count, s1.All.Count)
	}
}

// measuring reports whether the run writing dir has logged an interval.
func measuring(dir string) bool {
	b, _ := os.ReadFile(filepath.Join(dir, "intervals.csv"))
	return bytes.Count(b, []byte("\n")) >= 2
}

// The scale flags sweep does not take are refused, and so is a step
// that leaves a process without a VU. (A step's load reaches its
// children exactly: the step's resolved profile is in their launch file.)
func TestSweepProcessesFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--segment", "0/2"}, "--segment goes with a child of --processes"},
		{[]string{"--start-at", "+1s"}, "--start-at goes with a child of --processes"},
		{[]string{"--by", "vus", "--from", "1", "--to", "4", "--processes", "2"}, "step 1 (1 VUs): --processes 2"},
		{[]string{"--processes", "2", "--no-results"}, "--no-results"},
	} {
		_, errs, code := run(t, append([]string{"sweep", "--url", "http://127.0.0.1:1/mcp", "--steps", "2", "--from", "10", "--to", "20", "-q"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("sweep %v: exit %d, %q: want exit 2 naming %q", tt.args, code, errs, tt.want)
		}
	}
}
