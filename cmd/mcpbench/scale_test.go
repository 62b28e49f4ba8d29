package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// startRefServer serves the reference server on a loopback port for a test.
func startRefServer(t *testing.T) string {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.URL()
}

// allSamples merges every interval histogram of the response times in the
// directories' histograms.hlog, read with the HdrHistogram library alone:
// a histogram of every sample the segments recorded.
func allSamples(t *testing.T, dirs ...string) *hdr.Histogram {
	t.Helper()
	h := results.NewHistogram()
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, "histograms.hlog"))
		if err != nil {
			t.Fatal(err)
		}
		lr := hdr.NewHistogramLogReader(f)
		for {
			x, err := lr.NextIntervalHistogram()
			if err != nil || x == nil {
				break
			}
			if strings.HasSuffix(x.Tag(), ".response") {
				h.Merge(x)
			}
		}
		f.Close()
	}
	return h
}

// Two real segments of one test (against a real server, each its own
// run), merged: the merged directory's report prints the totals of the
// two added up, op by op, and the merged percentiles are those of one
// histogram of every sample of both.
func TestMergeTwoRealSegments(t *testing.T) {
	testenv.Long(t)
	t.Parallel()
	url := startRefServer(t)
	dir := t.TempDir()
	a, b, all := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "all")
	common := []string{"run", "--url", url, "--rate", "200", "--duration", "2s", "--warmup", "0s", "-q", "--threshold", "error_rate<1%"}
	for i, d := range []string{a, b} {
		_, errs, code := runPar(t, append(common, "--segment", []string{"0/2", "1/2"}[i], "--out", d)...)
		if code != exitOK {
			t.Fatalf("segment %d: exit %d: %s", i, code, errs)
		}
	}
	out, errs, code := runPar(t, "merge", a, b, "--out", all)
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	sa, sb := readSum(t, a), readSum(t, b)
	repJSON, errs, code := runPar(t, "report", all, "--format", "json")
	if code != exitOK {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	var rep results.Summary
	if err := json.Unmarshal([]byte(repJSON), &rep); err != nil {
		t.Fatal(err)
	}
	// 400 ops are due (200/s for 2 s); a loaded machine drops some, and
	// the merged run counts those too.
	if rep.All.Count != sa.All.Count+sb.All.Count || rep.All.Count == 0 || rep.All.Count+rep.Dropped < 350 || rep.Dropped != sa.Dropped+sb.Dropped ||
		rep.All.Errors != sa.All.Errors+sb.All.Errors {
		t.Fatalf("merged all: %d ops (%d dropped) %d errors; segments %d+%d ops (%d+%d dropped), %d+%d errors", rep.All.Count, rep.Dropped, rep.All.Errors,
			sa.All.Count, sb.All.Count, sa.Dropped, sb.Dropped, sa.All.Errors, sb.All.Errors)
	}
	for _, o := range rep.Ops {
		want := opCount(sa, o.Name) + opCount(sb, o.Name)
		if o.Count != want {
			t.Errorf("op %s: merged %d, segments add up to %d", o.Name, o.Count, want)
		}
	}
	if rep.Sessions.Opened != sa.Sessions.Opened+sb.Sessions.Opened || rep.VUs != sa.VUs+sb.VUs {
		t.Errorf("sessions %d (segments %d+%d), VUs %d (%d+%d)", rep.Sessions.Opened, sa.Sessions.Opened, sb.Sessions.Opened, rep.VUs, sa.VUs, sb.VUs)
	}
	if l := rep.All.Ledger; l == nil || l.Streams != sa.All.Ledger.Streams+sb.All.Ledger.Streams {
		t.Errorf("ledger streams %+v, segments %d+%d", l, sa.All.Ledger.Streams, sb.All.Ledger.Streams)
	}
	truth := allSamples(t, a, b)
	if truth.TotalCount() != rep.All.Count {
		t.Fatalf("the segments' histograms hold %d samples, the merged count is %d", truth.TotalCount(), rep.All.Count)
	}
	if want := results.LatencyOf(truth); rep.All.Response != want {
		t.Errorf("merged response time %+v, histogram of every sample %+v", rep.All.Response, want)
	}
	if len(rep.Segments) != 2 || rep.Segments[0].Generator.CPUSeconds != sa.Generator.CPUSeconds || rep.Segments[1].Generator.CPUSeconds != sb.Generator.CPUSeconds {
		t.Errorf("each segment's generator cost must be kept: %+v", rep.Segments)
	}
	if len(rep.Thresholds) != 1 || !rep.Thresholds[0].Pass {
		t.Errorf("the profile's threshold is checked on the merged run: %+v", rep.Thresholds)
	}
	text, _, _ := runPar(t, "report", all)
	if !strings.Contains(text, "Segments merged (2)") || !strings.Contains(out, "Segments merged (2)") {
		t.Errorf("the text report lists the segments:\n%s", text)
	}
	// The same segment twice would be counted twice: refused.
	if _, errs, code := runPar(t, "merge", a, a, "--out", filepath.Join(dir, "twice")); code != exitUsage || !strings.Contains(errs, "count it twice") {
		t.Errorf("merging a segment twice: exit %d: %s", code, errs)
	}
}

func readSum(t *testing.T, dir string) *results.Summary {
	t.Helper()
	s, err := results.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func opCount(s *results.Summary, name string) int64 {
	for _, o := range s.Ops {
		if o.Name == name {
			return o.Count
		}
	}
	return 0
}

// A segment run records its segment in run.json and summary.json, and a
// crossed threshold does not fail it (the test's thresholds are judged on
// the merged run).
func TestSegmentRecordedAndNotJudgedAlone(t *testing.T) {
	t.Parallel()
	url := startRefServer(t)
	d := filepath.Join(t.TempDir(), "seg")
	at := time.Now().Add(500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	_, errs, code := runPar(t, "run", "--url", url, "--rate", "90", "--duration", "1s", "--warmup", "0s", "-q", "--segment", "1/3",
		"--start-at", at, "--out", d, "--threshold", "p99<0.001ms")
	if code != exitOK || !strings.Contains(errs, "judged on the merged run") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSum(t, d)
	res, err := results.ReadResults(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, sg := range []*results.SegmentInfo{s.Segment, res.Run.Segment} {
		if sg == nil || sg.Segment != "1/3:2/3" || sg.Index != 1 || sg.Count != 3 || sg.StartAt.Format(time.RFC3339Nano) != at {
			t.Fatalf("segment recorded as %+v", sg)
		}
	}
	if !res.Run.Started.Equal(s.Segment.StartAt) {
		t.Errorf("the clock started at %v, not --start-at %v", res.Run.Started, s.Segment.StartAt)
	}
	// Arrivals: completed, or dropped or interrupted on a busy machine.
	if n := s.All.Count + s.All.Dropped + s.All.Interrupted; n != 30 || s.All.Count == 0 || s.TargetRate != 30 {
		t.Errorf("a third of 90 ops/s for 1 s: %d arrivals (%d completed) at a target of %v/s", n, s.All.Count, s.TargetRate)
	}
}

func TestScaleFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--segment", "4/4"}, "--segment"},
		{[]string{"--segment", "0/2", "--segment-sequence", "0,1/3"}, "--segment-sequence"},
		{[]string{"--start-at", "tomorrow"}, "--start-at"},
		{[]string{"--processes", "2", "--segment", "0/2"}, "--processes runs its own segments"},
		{[]string{"--processes", "2", "--no-results"}, "--no-results"},
		{[]string{"--processes", "4", "--vus", "2"}, "--processes 4"},
		{[]string{"--start-delay", "1s"}, "--start-delay goes with --processes"},
		{[]string{"--processes", "-1"}, "--processes -1"},
	} {
		_, errs, code := run(t, append([]string{"run", "--duration", "1s", "-q"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("run %v: exit %d, %q: want exit 2 naming %q", tt.args, code, errs, tt.want)
		}
	}
}

// mcpbenchProcess starts this test binary as mcpbench (see TestMain),
// with stderr kept.
func mcpbenchProcess(t *testing.T, args ...string) (*exec.Cmd, *lockedBuffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MCPBENCH_MAIN=1")
	errb := &lockedBuffer{}
	cmd.Stderr = errb
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, errb, done
}

// run --processes 2: two child processes run the segments (against the
// parent's embedded server), one merged progress line is shown, and the
// merged results are the two segments added up.
func TestProcessesRunAndMerge(t *testing.T) {
	testenv.Long(t)
	if testing.Short() {
		t.Skip("runs mcpbench as processes")
	}
	t.Parallel()
	out := filepath.Join(t.TempDir(), "res")
	jsonl := filepath.Join(t.TempDir(), "live.jsonl")
	_, errb, done := mcpbenchProcess(t, "run", "--processes", "2", "--rate", "100", "--duration", "2s", "--warmup", "0s", "--start-delay", "2s", "--out", out, "-q",
		"--out-jsonl", jsonl, "--prometheus", "127.0.0.1:0")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, errb)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("did not finish:\n%s", errb)
	}
	s0, s1, m := readSum(t, filepath.Join(out, "segment-0")), readSum(t, filepath.Join(out, "segment-1")), readSum(t, out)
	// 200 arrivals (100/s for 2 s) split over the two segments: each one
	// completed, or dropped (a busy machine can start one too late), or
	// interrupted at the end.
	arrivals := func(s *results.Summary) int64 { return s.All.Count + s.All.Dropped + s.All.Interrupted }
	if m.All.Count != s0.All.Count+s1.All.Count || arrivals(m) != 200 || arrivals(m) != arrivals(s0)+arrivals(s1) || len(m.Segments) != 2 || !m.Embedded || m.Server == nil {
		t.Fatalf("merged %d ops, %d dropped, %d interrupted (segments %d + %d), %d segments, embedded %v, server %+v", m.All.Count, m.All.Dropped, m.All.Interrupted, s0.All.Count, s1.All.Count, len(m.Segments), m.Embedded, m.Server)
	}
	if s0.Segment == nil || s0.Segment.Segment != "0:1/2" || s1.Segment == nil || s1.Segment.Segment != "1/2:1" || !s0.Segment.StartAt.Equal(s1.Segment.StartAt) {
		t.Fatalf("segments %+v %+v: want 0:1/2 and 1/2:1 on one clock", s0.Segment, s1.Segment)
	}
	var calls int64
	for _, o := range m.Ops {
		if strings.HasPrefix(o.Name, "tools/call") {
			calls += o.Count
		}
	}
	// An interrupted call may or may not have run on the server.
	if m.Server.ToolCalls < calls || m.Server.ToolCalls > calls+m.All.Interrupted || calls == 0 {
		t.Errorf("the parent's embedded server counted %d tool calls; the children made %d (+%d interrupted ops)", m.Server.ToolCalls, calls, m.All.Interrupted)
	}
	if !strings.Contains(errb.String(), "ops/s") || !strings.Contains(errb.String(), "2 processes") {
		t.Errorf("no merged progress line:\n%s", errb)
	}
	// The live outputs are the parent's (the children would share one
	// address and one file): it streams the merged run.
	lines, err := os.ReadFile(jsonl)
	if err != nil {
		t.Fatal(err)
	}
	var last struct {
		Type  string
		Count int64
	}
	all := bytes.Split(bytes.TrimSpace(lines), []byte("\n"))
	if err := json.Unmarshal(all[len(all)-1], &last); err != nil || last.Type != "end" || last.Count != m.All.Count {
		t.Errorf("--out-jsonl ends with %s: want the merged run's end, %d ops", all[len(all)-1], m.All.Count)
	}
}

// Ctrl-C reaches the parent, which forwards it to each child: every
// child finishes gracefully and keeps its results, the merged run says it
// was interrupted and adds up what the children measured, and the parent
// exits 130.
func TestProcessesForwardCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcpbench as processes")
	}
	t.Parallel()
	url := startRefServer(t)
	out := filepath.Join(t.TempDir(), "res")
	cmd, errb, done := mcpbenchProcess(t, "run", "--processes", "2", "--url", url, "--vus", "2", "--duration", "1m", "--warmup", "0s", "--start-delay", "1s", "--out", out, "-q")
	deadline := time.Now().Add(30 * time.Second)
	for { // wait until both children are measuring (a first interval written)
		n := 0
		for i := range 2 {
			if b, _ := os.ReadFile(filepath.Join(out, "segment-"+string(rune('0'+i)), "intervals.csv")); bytes.Count(b, []byte("\n")) >= 2 {
				n++
			}
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the children did not start:\n%s", errb)
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline: other processes
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Fatalf("exit %v, want 130\n%s", err, errb)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("Ctrl-C did not end the run:\n%s", errb)
	}
	var total int64
	for i := range 2 {
		s := readSum(t, filepath.Join(out, "segment-"+string(rune('0'+i))))
		if !s.Interrupted || s.All.Count == 0 {
			t.Errorf("segment %d: interrupted %v with %d ops: want its results kept", i, s.Interrupted, s.All.Count)
		}
		total += s.All.Count
	}
	m := readSum(t, out)
	if !m.Interrupted || m.All.Count != total || m.DurationS > 30 {
		t.Errorf("merged: interrupted %v, %d ops (children %d), %v s", m.Interrupted, m.All.Count, total, m.DurationS)
	}
}
