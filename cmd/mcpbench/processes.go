package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// run --processes N: the test as N child processes of mcpbench itself,
// each running segment i/N (its share of the arrival rate, VUs and churn;
// see workload/segment.go) with one --start-at, each writing its results
// to --out/segment-i and raising its own open-file limit. The parent
// starts the embedded reference server when there is no --url (the
// children share it), shows one merged progress line from the children's
// result files, forwards Ctrl-C to each child (every child's results are
// kept), and merges the segments into --out when they are done.

// child is one child process.
type child struct {
	index  int
	dir    string
	cmd    *exec.Cmd
	stderr *lastBytes
	done   chan struct{}
	err    error // from Wait
	tail   *metrics.Tail
}

func runProcesses(cmd *cobra.Command, f *runFlags) error {
	n := f.scale.processes
	startAt, err := parseStartAt(f.scale.startAt, time.Now())
	if err != nil {
		return usageError("%v", err)
	}
	if f.noResults {
		return usageError("--processes merges its children's results into --out: leave --no-results out")
	}
	env, err := prepare(cmd, f, nil)
	if err != nil {
		return err
	}
	defer env.close()
	plan, err := env.compile()
	if err != nil {
		return err
	}
	if err := checkProcessShare(plan, n); err != nil {
		return usageError("%v", err)
	}
	m, err := runChildren(env, plan, env.launch(childBase(cmd, env, processDrop), f.out, plan, startAt))
	if err != nil {
		return err
	}
	if m.neverStarted() {
		return env.abandonRun(fmt.Errorf("no process could start its run: %s", lastLine(m.kids[0].stderr.String())))
	}
	sum := m.Summary
	if len(plan.Thresholds) > 0 {
		sum.Thresholds = verdict.CheckThresholds(sum, plan.Thresholds, m)
	}
	env.keepMerged(m.Merged, f.out)
	if err := env.print(sum); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "mcpbench: merged results of %d processes in %s\n", n-m.missing, env.f.out)
	if err := m.interruptedErr(); err != nil {
		return err
	}
	if err := missingErr(m.missing, n); err != nil {
		return err
	}
	return exitFor(sum, nil)
}

// checkProcessShare refuses a closed-model test with fewer VUs than
// processes: some would have none.
func checkProcessShare(plan *workload.Plan, n int) error {
	p := &plan.Profile
	if !p.Open() && len(p.Stages) == 0 && p.VUs < n {
		return fmt.Errorf("--processes %d: the test's %d VUs leave some processes without one: use --vus %d or more, or fewer processes", n, p.VUs, n)
	}
	return nil
}

// startDelay is how long after launching the children their clock
// starts: --start-delay, else 5 s plus 1 ms per session a child sets up
// (a child starts, negotiates the protocol and initializes its sessions,
// 64 at a time, before its clock starts).
func startDelay(given time.Duration, plan *workload.Plan, n int) time.Duration {
	if given > 0 {
		return given
	}
	return 5*time.Second + time.Duration((plan.Profile.VUs+n-1)/n)*time.Millisecond
}

// processDrop are the flags the children of --processes do not get: those
// a segment's command line sets itself (scaleDrop), the target process
// (the first child alone samples it: see launch), and the live outputs
// (one address, one file: the parent serves them from the merged run).
var processDrop = func() map[string]bool {
	m := maps.Clone(scaleDrop)
	for _, n := range []string{"target-pid", "prometheus", "prometheus-linger", "out-jsonl"} {
		m[n] = true
	}
	return m
}()

// childBase is the command line every child of cmd shares: the
// subcommand, the user's flags less drop and, without --url, the
// parent's embedded server (the children share it).
func childBase(cmd *cobra.Command, env *env, drop map[string]bool) []string {
	base := append([]string{cmd.Name()}, segmentArgs(cmd.Flags(), drop)...)
	if env.embedded {
		base = append(base, "--url="+env.profile.URL)
	}
	return base
}

// launch is how a command starts its children: child I runs args with
// --segment=I/N, the shared --start-at, --out=DIR/segment-I and
// --no-progress; the first child alone gets --target-pid (one sampler
// of the target; the merge takes its samples).
type launch struct {
	ctx       context.Context // cancelled: each child gets Ctrl-C (interruptChild)
	args      []string
	n         int
	dir       string
	startAt   time.Time
	grace     time.Duration // the test's graceful stop: a child still running 30 s past it after Ctrl-C is killed
	targetPID int
}

// launch is the launch of the --processes children of the test plan
// into dir, on the clock startAt (zero: --start-delay from now).
func (e *env) launch(args []string, dir string, plan *workload.Plan, startAt time.Time) launch {
	n := e.f.scale.processes
	if startAt.IsZero() {
		startAt = time.Now().Add(startDelay(e.f.scale.startDelay, plan, n))
	}
	return launch{ctx: e.ctx, args: args, n: n, dir: dir, startAt: startAt, grace: plan.Profile.GracefulStop.D(), targetPID: e.f.targetPID}
}

// merged is what a launch's children left, merged.
type merged struct {
	*metrics.Merged
	kids        []*child
	missing     int  // children that wrote no results (or were not started: interrupted first)
	interrupted bool // the launch was interrupted (Ctrl-C, SIGTERM)
	dirs        []string
}

// interruptedErr is exit 130 for a launch that was interrupted (nil when
// it was not), naming the processes that wrote nothing before it.
func (m *merged) interruptedErr() error {
	if !m.interrupted {
		return nil
	}
	msg := "interrupted: the merged results are what the processes wrote until then"
	if m.missing > 0 {
		msg += fmt.Sprintf(" (%d of %d processes wrote nothing)", m.missing, m.missing+len(m.dirs))
	}
	return &exitError{code: exitInterrupted, err: errors.New(msg)}
}

// failed returns the children that exited with neither a result nor an
// interrupt (not 0, 99 or 130), and the last line each wrote on stderr.
func (m *merged) failed() (n int, last []string) {
	for _, k := range m.kids {
		if c := exitCodeOf(k.err); c != exitOK && c != exitThresholds && c != exitInterrupted {
			n++
			last = append(last, lastLine(k.stderr.String()))
		}
	}
	return n, last
}

// lastLine is s's last non-empty line.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// runChildren starts the children, shows their merged progress until
// every one has exited, and merges their results (with the embedded
// server's counters). Errors are exit errors: a child could not start,
// the children refused their flags, or none wrote results (exit 130 when
// interrupted: a launch interrupted at any point returns what its
// children wrote, merged, and merged.interruptedErr).
func runChildren(env *env, plan *workload.Plan, l launch) (*merged, error) {
	// A second Ctrl-C stops the children at once (a second SIGINT each;
	// killed if still running 5 s later); the parent still merges what
	// they wrote.
	var kidsMu sync.Mutex
	var started []*child
	prev := env.setHardStop(func() {
		fmt.Fprintln(env.stderr, "mcpbench: interrupted again: stopping the processes at once, then merging what they wrote")
		kidsMu.Lock()
		defer kidsMu.Unlock()
		for _, k := range started {
			k.stopNow()
		}
	})
	defer env.setHardStop(prev)
	kids, err := startChildren(l, &kidsMu, &started)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	if len(kids) == l.n {
		fmt.Fprintf(env.stderr, "mcpbench: %d processes (segments 0/%d … %d/%d), the clock starts at %s (in %v); each writes %s\n",
			l.n, l.n, l.n-1, l.n, l.startAt.Format("15:04:05.000"), time.Until(l.startAt).Round(100*time.Millisecond), filepath.Join(l.dir, "segment-I"))
	} else {
		fmt.Fprintf(env.stderr, "mcpbench: interrupted while starting the processes: %d of %d started\n", len(kids), l.n)
	}
	watchChildren(env, plan, kids, l.startAt)
	interrupted := l.ctx.Err() != nil
	dirs, usage := reap(env.stderr, kids, l.n, interrupted)
	if usage {
		return nil, &exitError{code: exitUsage, err: errors.New("the processes refused their flags")}
	}
	if len(dirs) == 0 {
		if interrupted {
			// Nothing to merge: the merged result of an interrupt before
			// any process wrote anything (before they caught signals) is
			// none; no file is written in --out. A process interrupted
			// in its set-up writes an empty interrupted run, merged.
			return nil, &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted before any process wrote results: nothing to merge into %s", l.dir)}
		}
		return nil, &exitError{code: exitFailed, err: errors.New("no process wrote results")}
	}
	m, err := metrics.MergeResults(dirs)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	m.Summary.Embedded = env.embedded
	if stats := env.serverStatsFunc(); stats != nil {
		m.Summary.Server = stats()
	}
	if interrupted && !m.Summary.Interrupted {
		m.Summary.Interrupted, m.Summary.StopReason = true, "interrupted by signal"
	}
	return &merged{Merged: m, kids: kids, missing: l.n - len(dirs), interrupted: interrupted, dirs: dirs}, nil
}

// stopNow sends the child a second interrupt, which stops it at once
// keeping what it wrote, and kills it if it is still running 5 s later.
func (k *child) stopNow() {
	if k.exited() {
		return
	}
	interruptChild(k.cmd.Process)
	go func() {
		t := time.NewTimer(5 * time.Second)
		defer t.Stop()
		select {
		case <-k.done:
		case <-t.C:
			k.cmd.Process.Kill()
		}
	}()
}

// startChildren launches the children, adding each to *started (under
// mu) as it starts. Interrupted (l.ctx done), it starts no more: those
// started have their interrupt, and it returns them.
func startChildren(l launch, mu *sync.Mutex, started *[]*child) ([]*child, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	kids := make([]*child, l.n)
	for i := range l.n {
		if l.ctx.Err() != nil {
			return kids[:i], nil
		}
		k := &child{index: i, dir: filepath.Join(l.dir, "segment-"+strconv.Itoa(i)), stderr: &lastBytes{max: 16 << 10}, done: make(chan struct{})}
		args := append(l.args[:len(l.args):len(l.args)], "--segment="+strconv.Itoa(i)+"/"+strconv.Itoa(l.n),
			"--start-at="+l.startAt.UTC().Format(time.RFC3339Nano), "--out="+k.dir, "--no-progress")
		if i == 0 && l.targetPID > 0 {
			args = append(args, "--target-pid="+strconv.Itoa(l.targetPID))
		}
		k.cmd = exec.CommandContext(l.ctx, exe, args...)
		k.cmd.Stderr = k.stderr
		k.cmd.SysProcAttr = childAttr() // its own process group: a terminal's Ctrl-C reaches the parent, which forwards it
		k.cmd.Cancel = func() error { return interruptChild(k.cmd.Process) }
		k.cmd.WaitDelay = l.grace + 30*time.Second // then killed
		k.tail = metrics.NewTail(k.dir)
		mu.Lock() // a second Ctrl-C stops the children started
		err := k.cmd.Start()
		if err == nil {
			*started = append(*started, k)
		}
		mu.Unlock()
		if err != nil && l.ctx.Err() != nil {
			return kids[:i], nil // exec.CommandContext starts nothing once interrupted
		}
		if err != nil {
			for _, s := range kids[:i] {
				s.cmd.Process.Kill()
				<-s.done
			}
			return nil, fmt.Errorf("start process %d: %w", i, err)
		}
		go func() { k.err = k.cmd.Wait(); close(k.done) }()
		kids[i] = k
	}
	return kids, nil
}

// reap returns the results directories the exited children (of n) wrote
// (run.json or summary.json there) and whether one refused its flags; it
// shows the stderr of each that failed. After an interrupt, a child
// stopped by a signal (interrupted before it caught signals, or killed
// after a second Ctrl-C) is not a failure.
func reap(w io.Writer, kids []*child, n int, interrupted bool) (dirs []string, usage bool) {
	for _, k := range kids {
		code := exitCodeOf(k.err)
		if code == exitUsage {
			usage = true
		}
		_, runErr := os.Stat(filepath.Join(k.dir, metrics.FileRun))
		_, sumErr := os.Stat(filepath.Join(k.dir, metrics.FileSummary))
		if runErr == nil || sumErr == nil {
			dirs = append(dirs, k.dir)
		}
		switch {
		case code == -1 && interrupted:
			fmt.Fprintf(w, "mcpbench: process %d (segment %d/%d) stopped by the interrupt: %v\n", k.index, k.index, n, k.err)
		case code != exitOK && code != exitThresholds && code != exitInterrupted:
			fmt.Fprintf(w, "mcpbench: process %d (segment %d/%d) exited %d:\n%s", k.index, k.index, n, code, k.stderr.String())
		}
	}
	return dirs, usage
}

// keepMerged writes the merged results into dir and hands them to the
// live outputs (--prometheus, --out-jsonl: the children have none).
func (e *env) keepMerged(m *metrics.Merged, dir string) {
	if err := m.Write(dir); err != nil {
		fmt.Fprintf(e.stderr, "mcpbench: writing the merged results: %v\n", err)
	}
	if live := e.live.sinks(); len(live) > 0 {
		m.Replay(live...)
	}
}

// missingErr fails a merged run that lacks some children's results: it is
// a share of the test.
func missingErr(missing, n int) error {
	if missing == 0 {
		return nil
	}
	return &exitError{code: exitFailed, err: fmt.Errorf("%d of %d processes wrote no results: the merged run is a share of the test", missing, n)}
}

// exitCodeOf is a child's exit code (0 when it exited cleanly; -1 when it
// was killed or could not be waited for).
func exitCodeOf(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// lastBytes keeps the last max bytes written (a child's stderr, shown when
// it fails). Safe for concurrent use.
type lastBytes struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if over := len(l.b) - l.max; over > 0 {
		l.b = append(l.b[:0], l.b[over:]...)
	}
	return len(p), nil
}

func (l *lastBytes) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
