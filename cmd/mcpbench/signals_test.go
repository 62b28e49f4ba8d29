package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
)

// Signals and processes (issue 20 item 8): every Ctrl-C ends in exit 130
// with the results written so far (merged, with --processes), children
// die with their parent, and summary.json is written before the sessions
// are closed. Each test runs mcpbench as a process (this test binary as
// mcpbench: TestMain), against a loopback server, and waits on its
// stderr, its files or the server, with deadlines.

// mcpbenchProc is mcpbench running as a process.
type mcpbenchProc struct {
	cmd    *exec.Cmd
	stderr *sigBuffer
	done   chan struct{}
	err    error
}

// sigBuffer is a bytes.Buffer safe for concurrent use.
type sigBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *sigBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *sigBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startMCPBench starts mcpbench with args; ignoreINT starts it with SIGINT
// ignored, as nohup or & in a non-interactive shell do (sh's trap "" INT
// is kept across exec).
func startMCPBench(t *testing.T, ignoreINT bool, args ...string) *mcpbenchProc {
	t.Helper()
	if testing.Short() {
		t.Skip("runs mcpbench as a process")
	}
	if runtime.GOOS != "linux" {
		t.Skip("signals and /proc: Linux")
	}
	cmd := exec.Command(os.Args[0], args...)
	if ignoreINT {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `trap "" INT; exec "$0" "$@"`, os.Args[0]}, args...)...)
	}
	p := &mcpbenchProc{cmd: cmd, stderr: &sigBuffer{}, done: make(chan struct{})}
	cmd.Env = append(os.Environ(), "MCPBENCH_MAIN=1")
	cmd.Stdout, cmd.Stderr = p.stderr, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	return p
}

// signal sends sig to the process.
func (p *mcpbenchProc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits for the process to exit within d and returns its exit code.
func (p *mcpbenchProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("mcpbench still running %v later; it wrote:\n%s", d, p.stderr.String())
	}
	var ee *exec.ExitError
	if p.err != nil && !errors.As(p.err, &ee) {
		t.Fatalf("wait: %v", p.err)
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitFor polls cond (another process's files or output) every 20 ms
// until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		<-tick.C
	}
}

// sigMeasuring reports whether the run writing dir has closed an interval
// of its clock (intervals.csv: header and a row).
func sigMeasuring(dir string) bool {
	b, _ := os.ReadFile(filepath.Join(dir, results.FileIntervals))
	return bytes.Count(b, []byte("\n")) >= 2
}

// hangingDeleteServer is the reference server on loopback, except that
// DELETE never answers (a graceful end then waits its 5 s timeout);
// deleting is closed when the n-th DELETE arrives.
func hangingDeleteServer(t *testing.T, n int) (url string, deleting <-chan struct{}) {
	t.Helper()
	h, err := refserver.NewHandler(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	var mu sync.Mutex
	seen := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			mu.Lock()
			if seen++; seen == n {
				close(ch)
			}
			mu.Unlock()
			<-r.Context().Done()
			return
		}
		h.ServeHTTP(w, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String() + "/mcp", ch
}

// procsWith returns the children of --processes whose command line
// contains s (a test's children: their --out is under its temporary
// directory).
func procsWith(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(s)) || !bytes.Contains(b, []byte("--segment=")) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue // exited, not yet reaped by its parent
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// noChildrenLeft fails the test when a process with dir in its command
// line is still running 10 s later (and kills it).
func noChildrenLeft(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		left := procsWith(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v still running: orphans of mcpbench", left)
		}
		<-tick.C
	}
}

func readSummaryFile(t *testing.T, dir string) *results.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, results.FileSummary))
	if err != nil {
		t.Fatalf("no summary: %v", err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

var sigintModes = []struct {
	name      string
	ignoreINT bool
}{{"default", false}, {"started-with-SIGINT-ignored", true}}

// A second Ctrl-C while the sessions close (DELETE hangs) stops the run
// at once with exit 130, and summary.json is there: the DELETEs are cut,
// and the summary is written before the exit. Started with SIGINT ignored too (the second Ctrl-C
// was ignored then).
func TestSecondInterruptDuringDeleteKeepsSummary(t *testing.T) {
	t.Parallel()
	for _, m := range sigintModes {
		t.Run(m.name, func(t *testing.T) {
			url, deleting := hangingDeleteServer(t, 4)
			out := filepath.Join(t.TempDir(), "res")
			p := startMCPBench(t, m.ignoreINT, "run", "--url", url, "--vus", "4", "--duration", "1m", "--out", out, "-q")
			waitFor(t, 20*time.Second, "the run to measure", func() bool { return sigMeasuring(out) })
			p.signal(t, syscall.SIGINT)
			select {
			case <-deleting:
			case <-time.After(10 * time.Second):
				t.Fatalf("no DELETE after the first Ctrl-C:\n%s", p.stderr.String())
			}
			t0 := time.Now()
			p.signal(t, syscall.SIGINT)
			code := p.wait(t, 10*time.Second)
			took := time.Since(t0)
			if code != exitInterrupted {
				t.Fatalf("exit %d %v after the second Ctrl-C, want 130:\n%s", code, took, p.stderr.String())
			}
			t.Logf("exit %d %v after the second Ctrl-C", code, took)
			// The summary is the whole run's: the second Ctrl-C cut the
			// DELETEs (its note counts them) instead of waiting for them,
			// and the process wrote it before it exited.
			s := readSummaryFile(t, out)
			if !s.Interrupted || s.All.Count == 0 || !strings.Contains(strings.Join(s.Notes, "\n"), "stopped at once (a second interrupt): 4 sessions' closes (DELETE) were cut") {
				t.Fatalf("summary.json: interrupted %v, %d ops, notes %q", s.Interrupted, s.All.Count, s.Notes)
			}
		})
	}
}

// run --processes: a second Ctrl-C (here while the children's DELETEs
// hang) stops the children at once, and the parent still merges what
// they wrote and exits 130, leaving no child running.
func TestProcessesSecondInterruptMerges(t *testing.T) {
	testenv.Long(t)
	for _, m := range sigintModes {
		t.Run(m.name, func(t *testing.T) {
			url, deleting := hangingDeleteServer(t, 4)
			tmp := t.TempDir()
			out := filepath.Join(tmp, "res")
			p := startMCPBench(t, m.ignoreINT, "run", "--url", url, "--processes", "2", "--start-delay", "1s", "--vus", "4", "--duration", "1m", "--out", out, "-q")
			waitFor(t, 30*time.Second, "both processes to measure", func() bool {
				return sigMeasuring(filepath.Join(out, "segment-0")) && sigMeasuring(filepath.Join(out, "segment-1"))
			})
			p.signal(t, syscall.SIGINT)
			select {
			case <-deleting:
			case <-time.After(10 * time.Second):
				t.Fatalf("no DELETE after the first Ctrl-C:\n%s", p.stderr.String())
			}
			t0 := time.Now()
			p.signal(t, syscall.SIGINT)
			code := p.wait(t, 15*time.Second)
			took := time.Since(t0)
			errs := p.stderr.String()
			if code != exitInterrupted || !strings.Contains(errs, "merged results of 2 processes") {
				t.Fatalf("exit %d %v after the second Ctrl-C, want 130 with the merged results:\n%s", code, took, errs)
			}
			t.Logf("exit %d %v after the second Ctrl-C", code, took)
			// Each child stopped at once: its DELETEs were cut (they
			// would have timed out after 5 s), its summary written.
			for i := range 2 {
				s := readSummaryFile(t, filepath.Join(out, "segment-"+strconv.Itoa(i)))
				if notes := strings.Join(s.Notes, "\n"); !strings.Contains(notes, "2 sessions' closes (DELETE) were cut") {
					t.Errorf("segment-%d/summary.json: notes %q, want the DELETEs cut", i, s.Notes)
				}
			}
			s := readSummaryFile(t, out)
			if !s.Interrupted || s.All.Count == 0 {
				t.Fatalf("merged summary.json: interrupted %v, %d ops", s.Interrupted, s.All.Count)
			}
			noChildrenLeft(t, tmp)
		})
	}
}

// run --processes: Ctrl-C while the children start (the parent signalled
// as soon as it said it benchmarks the embedded server, so the children
// are not started, starting, or setting up) exits 130 — with the merged
// results when a child wrote some, else saying nothing was merged —
// never 1, and leaves no child running.
func TestProcessesInterruptWhileStarting(t *testing.T) {
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "res")
			p := startMCPBench(t, false, "run", "--processes", "2", "--start-delay", "10s", "--vus", "2", "--duration", "1m", "--out", out, "-q")
			waitFor(t, 20*time.Second, "the embedded server", func() bool {
				return strings.Contains(p.stderr.String(), "benchmarking the embedded reference server")
			})
			p.signal(t, syscall.SIGINT)
			code := p.wait(t, 20*time.Second)
			errs := p.stderr.String()
			nothing := strings.Contains(errs, "interrupted before any process wrote results: nothing to merge")
			merged := strings.Contains(errs, "merged results of")
			if code != exitInterrupted || nothing == merged {
				t.Fatalf("exit %d, want 130 saying what was merged:\n%s", code, errs)
			}
			if merged && !readSummaryFile(t, out).Interrupted {
				t.Fatal("the merged summary is not marked interrupted")
			}
			noChildrenLeft(t, tmp)
		})
	}
}

// run --processes: the parent killed with SIGKILL (it cannot forward
// anything) takes its children with it (PR_SET_PDEATHSIG).
func TestProcessesDieWithParent(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	out := filepath.Join(tmp, "res")
	p := startMCPBench(t, false, "run", "--processes", "2", "--start-delay", "1s", "--vus", "2", "--duration", "1m", "--out", out, "-q")
	waitFor(t, 30*time.Second, "both processes to measure", func() bool {
		return sigMeasuring(filepath.Join(out, "segment-0")) && sigMeasuring(filepath.Join(out, "segment-1"))
	})
	if n := len(procsWith(tmp)); n != 2 {
		t.Fatalf("%d children running, want 2", n)
	}
	p.signal(t, syscall.SIGKILL)
	p.wait(t, 10*time.Second)
	noChildrenLeft(t, tmp)
}
