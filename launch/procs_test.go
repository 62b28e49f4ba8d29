package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// TestMain makes this test binary the children's executable: with
// PROCRUN_TEST_CHILD=1 (set only in Processes.Env, never in the tests'
// own environment) it acts as one child (testChild) and exits without
// running any test, so a child can never start children of its own.
func TestMain(m *testing.M) {
	if os.Getenv("PROCRUN_TEST_CHILD") == "1" {
		os.Exit(testChild(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// The child's modes (PROCRUN_TEST_MODE):
//   - ok: writes a finished segment run of 10×(I+1) ops, exits 0;
//   - usage: exits ExitUsage with nothing written;
//   - nothing: exits ExitFailed with nothing written;
//   - setup: writes a run of no op (as a run that
//     could not initialize its sessions), exits ExitFailed with
//     workload.ErrSetup's text on stderr and "setup" on its status pipe
//     (StatusEnv);
//   - graceful: catches SIGINT, says so (PROCRUN_TEST_SYNC/ready-I),
//     and on the first SIGINT writes its segment run and exits
//     ExitInterrupted;
//   - stubborn: as graceful, but notes the first SIGINT
//     (PROCRUN_TEST_SYNC/first-I) and exits only on the stop at once
//     (StopNowSignal: a second Ctrl-C's).
//
// Each writes its arguments to PROCRUN_TEST_SYNC/args-I, one a line.
func testChild(args []string) int {
	var seg, out, startAt string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--segment="); ok {
			seg = v
		}
		if v, ok := strings.CutPrefix(a, "--out="); ok {
			out = v
		}
		if v, ok := strings.CutPrefix(a, "--start-at="); ok {
			startAt = v
		}
	}
	is, ns, _ := strings.Cut(seg, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	start, err3 := time.Parse(time.RFC3339Nano, startAt)
	if err := errors.Join(err1, err2, err3); err != nil || out == "" {
		fmt.Fprintf(os.Stderr, "child: bad arguments %q: %v\n", args, err)
		return int(ExitUsage)
	}
	sync := os.Getenv("PROCRUN_TEST_SYNC")
	note := func(name string) { os.WriteFile(filepath.Join(sync, name+"-"+is), nil, 0o644) }
	os.WriteFile(filepath.Join(sync, "args-"+is), []byte(strings.Join(args, "\n")), 0o644)
	switch os.Getenv("PROCRUN_TEST_MODE") {
	case "ok":
		return writeSegment(out, i, n, start, 10*(i+1), true, int(ExitOK))
	case "usage":
		fmt.Fprintln(os.Stderr, "child: unknown flag --bogus")
		return int(ExitUsage)
	case "nothing":
		fmt.Fprintln(os.Stderr, "child: failed before writing anything")
		return int(ExitFailed)
	case "setup":
		if c := writeSegment(out, i, n, start, 0, true, int(ExitFailed)); c != int(ExitFailed) {
			return c
		}
		fmt.Fprintf(os.Stderr, "child: %v: 0 of 1 sessions\n", workload.ErrSetup)
		os.NewFile(3, "status").Write([]byte(statusSetup + "\n")) // as a child's writeStatus (StatusEnv=3)
		return int(ExitFailed)
	case "graceful", "stubborn":
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, os.Interrupt, StopNowSignal)
		note("ready")
		<-sigs
		if os.Getenv("PROCRUN_TEST_MODE") == "stubborn" {
			note("first")
			for s := range sigs { // more interrupts are the first's: only the stop at once ends it
				if s == StopNowSignal {
					break
				}
			}
		}
		return writeSegment(out, i, n, start, 10*(i+1), true, int(ExitInterrupted))
	}
	return int(ExitFailed)
}

// writeSegment writes segment i/n's run of ops results (1 ms each) in
// one interval from start, as a run writes it; end: with its summary.
// It returns code, or ExitFailed when the files could not be written.
func writeSegment(dir string, i, n int, start time.Time, ops int, end bool, code int) int {
	names := []string{"tools/call:echo"}
	rec := metrics.NewRecorder(names, 1)
	rec.Begin(start, start.Add(time.Second))
	w, err := results.NewResultsDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return int(ExitFailed)
	}
	sg := &results.SegmentInfo{Segment: fmt.Sprintf("%d/%d:%d/%d", i, n, i+1, n), Index: i, Count: n, StartAt: start}
	info := &results.RunInfo{Tool: "mcpbench", Target: "http://x/mcp", Profile: "p", Started: start, Ops: names, Segment: sg,
		Spec: map[string]any{"Thresholds": []string{"p99<1s"}}} // as run.json has the profile
	w.Start(info)
	for k := range ops {
		at := start.Add(time.Duration(k) * time.Millisecond)
		rec.Shard(k).Record(&driver.Result{Intended: at, Start: at, FirstByte: at, End: at.Add(time.Millisecond), Class: driver.ClassOK, Status: 200})
	}
	iv := rec.Tick(start.Add(time.Second), time.Time{})
	w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Phase: results.PhaseMeasure, VUs: 1})
	if end {
		opsSum, all := rec.Summarize(1)
		sum := &results.Summary{Tool: "mcpbench", Target: "http://x/mcp", Profile: "p", Model: "open", Started: start, DurationS: 1,
			Ops: opsSum, All: all, Segment: sg, VUs: 1, MaxVUs: 1, Interrupted: code == int(ExitInterrupted),
			Generator: results.Generator{MaxRSSMB: float64(10 * (i + 1))}}
		w.End(&results.RunEnd{Info: info, Summary: sum, Histograms: rec.Histograms()})
	}
	if err := w.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return int(ExitFailed)
	}
	return code
}

// lockedBuffer is a strings.Builder safe for concurrent use (Stderr).
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// recordProgress keeps the merged intervals Run shows.
type recordProgress struct {
	recs []results.IntervalRecord
	ends int
}

func (r *recordProgress) Interval(rec *results.IntervalRecord) { r.recs = append(r.recs, *rec) }
func (r *recordProgress) End(*results.RunEnd)                  { r.ends++ }

// testLaunch is a launch of n children of this binary in mode.
func testLaunch(t *testing.T, n int, mode string) (Processes, string, *lockedBuffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sync := t.TempDir()
	errb := &lockedBuffer{}
	return Processes{
		Exe: exe, Args: []string{"run", "--rate=100"}, N: n, Dir: t.TempDir(), StartAt: time.Now().Truncate(time.Millisecond),
		Env:    append(os.Environ(), "PROCRUN_TEST_CHILD=1", "PROCRUN_TEST_MODE="+mode, "PROCRUN_TEST_SYNC="+sync),
		Stderr: errb, Window: 2 * time.Second, Status: true,
	}, sync, errb
}

// waitFiles polls until each of names exists in dir (30 s at most).
func waitFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, name := range names {
		for {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s in %s after 30 s", name, dir)
			}
			time.Sleep(10 * time.Millisecond) // polling a file, with a deadline
		}
	}
}

// Three children each get the shared arguments, their own segment and
// results directory, one --start-at and --no-progress, and the first
// alone --target-pid; their results merge exactly (every child's ops
// counted once), each child's generator cost is kept, and the merged
// progress shows their interval added up, then ends once.
func TestRunMergesEveryChild(t *testing.T) {
	t.Parallel()
	l, sync, errb := testLaunch(t, 3, "ok")
	l.TargetPID = 4242
	pr := &recordProgress{}
	l.Progress = pr
	r, err := RunProcesses(t.Context(), l)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, errb)
	}
	at := l.StartAt.UTC().Format(time.RFC3339Nano)
	for i := range 3 {
		b, err := os.ReadFile(filepath.Join(sync, "args-"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"run", "--rate=100", fmt.Sprintf("--segment=%d/3", i), "--start-at=" + at,
			"--out=" + filepath.Join(l.Dir, "segment-"+strconv.Itoa(i)), "--no-progress"}
		if i == 0 {
			want = append(want, "--target-pid=4242")
		}
		if diff := cmp.Diff(want, strings.Split(string(b), "\n")); diff != "" {
			t.Errorf("child %d's arguments (-want +got):\n%s", i, diff)
		}
	}
	if got, want := r.Summary.All.Count, int64(10+20+30); got != want {
		t.Errorf("merged count %d, want %d (each child's once)", got, want)
	}
	var rss []float64
	for _, s := range r.Summary.Segments {
		rss = append(rss, s.Generator.MaxRSSMB)
	}
	if diff := cmp.Diff([]float64{10, 20, 30}, rss); diff != "" {
		t.Errorf("each segment's generator RSS (-want +got):\n%s", diff)
	}
	if r.Missing != 0 || r.Interrupted || len(r.Children) != 3 || r.InterruptedErr() != nil || r.MissingErr() != nil || r.StepErr() != nil {
		t.Errorf("missing %d, interrupted %v, %d children, errors %v %v %v", r.Missing, r.Interrupted, len(r.Children), r.InterruptedErr(), r.MissingErr(), r.StepErr())
	}
	var shown int64
	for _, rec := range pr.recs {
		shown += rec.Row.All.Count
	}
	if shown != 60 || pr.ends != 1 {
		t.Errorf("progress showed %d ops in %d intervals and ended %d times; want 60, ended once", shown, len(pr.recs), pr.ends)
	}
	if !strings.Contains(errb.String(), "mcpbench: 3 processes (segments 0/3 … 2/3)") {
		t.Errorf("no start notice:\n%s", errb)
	}
}

// A cancelled context is a Ctrl-C forwarded: each child gets one
// interrupt, writes its results and exits 130; the merged run is marked
// interrupted and InterruptedErr wraps ErrInterrupted.
func TestRunForwardsInterrupt(t *testing.T) {
	t.Parallel()
	l, sync, errb := testLaunch(t, 2, "graceful")
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		waitFiles(t, sync, "ready-0", "ready-1")
		cancel()
	}()
	r, err := RunProcesses(ctx, l)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, errb)
	}
	if !r.Interrupted || !r.Summary.Interrupted || r.Summary.All.Count != 30 {
		t.Errorf("interrupted %v, summary interrupted %v, count %d; want true, true, 30", r.Interrupted, r.Summary.Interrupted, r.Summary.All.Count)
	}
	for _, c := range r.Children {
		if c.ExitCode() != int(ExitInterrupted) {
			t.Errorf("child %d exited %d, want %d", c.Index, c.ExitCode(), int(ExitInterrupted))
		}
	}
	if err := r.InterruptedErr(); !errors.Is(err, ErrInterrupted) {
		t.Errorf("InterruptedErr = %v, want ErrInterrupted", err)
	}
	if n, _ := r.Failed(); n != 0 {
		t.Errorf("%d children failed; an interrupted child is no failure", n)
	}
}

// A value on StopNow (a second Ctrl-C) sends each child the stop at once
// (StopNowSignal): children that finish only on it exit, and what they
// wrote is merged.
func TestRunStopNow(t *testing.T) {
	t.Parallel()
	l, sync, errb := testLaunch(t, 2, "stubborn")
	again := make(chan struct{})
	l.StopNow = again
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		waitFiles(t, sync, "ready-0", "ready-1")
		cancel()
		waitFiles(t, sync, "first-0", "first-1")
		again <- struct{}{}
	}()
	r, err := RunProcesses(ctx, l)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, errb)
	}
	if r.Summary.All.Count != 30 || r.Missing != 0 {
		t.Errorf("merged %d ops, %d missing; want 30, 0", r.Summary.All.Count, r.Missing)
	}
	if !strings.Contains(errb.String(), "interrupted again: stopping the processes at once") {
		t.Errorf("no notice of the second interrupt:\n%s", errb)
	}
}

// What the children's exits mean: a child refusing its flags is
// ErrUsage; none writing anything is ErrNoResults; a child that cannot
// start is ErrStart; children that could not set up their sessions merge
// as a run that never started, whose step error is workload.ErrSetup.
func TestRunExits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode string
		want error
	}{
		{"usage", ErrUsage},
		{"nothing", ErrNoResults},
	} {
		l, _, _ := testLaunch(t, 2, tt.mode)
		if _, err := RunProcesses(t.Context(), l); !errors.Is(err, tt.want) {
			t.Errorf("%s: Run = %v, want %v", tt.mode, err, tt.want)
		}
	}
	l, _, _ := testLaunch(t, 2, "ok")
	l.Exe = filepath.Join(t.TempDir(), "no-such-mcpbench")
	if _, err := RunProcesses(t.Context(), l); !errors.Is(err, ErrStart) {
		t.Errorf("a missing executable: Run = %v, want ErrStart", err)
	}

	l, _, errb := testLaunch(t, 2, "setup")
	r, err := RunProcesses(t.Context(), l)
	if err != nil {
		t.Fatalf("setup: Run = %v\n%s", err, errb)
	}
	if !r.NeverStarted() {
		t.Errorf("setup: NeverStarted false")
	}
	if err := r.StepErr(); !errors.Is(err, workload.ErrSetup) {
		t.Errorf("setup: StepErr = %v, want workload.ErrSetup", err)
	}
	if n, last := r.Failed(); n != 2 || !strings.Contains(last[0], workload.ErrSetup.Error()) {
		t.Errorf("setup: Failed = %d, %q", n, last)
	}
}

// A launch interrupted before any child wrote anything is
// ErrInterrupted, naming the directory it left alone.
func TestRunInterruptedBeforeResults(t *testing.T) {
	t.Parallel()
	l, _, _ := testLaunch(t, 2, "ok")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := RunProcesses(ctx, l)
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), l.Dir) {
		t.Errorf("Run = %v, want ErrInterrupted naming %s", err, l.Dir)
	}
}
