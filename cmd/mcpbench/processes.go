package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	if startAt.IsZero() {
		startAt = time.Now().Add(startDelay(f.scale.startDelay, plan, n))
	}
	kids, err := startChildren(cmd, f, env, n, startAt)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	fmt.Fprintf(env.stderr, "mcpbench: %d processes (segments 0/%d … %d/%d), the clock starts at %s (in %v); each writes %s\n",
		n, n, n-1, n, startAt.Format("15:04:05.000"), time.Until(startAt).Round(100*time.Millisecond), filepath.Join(f.out, "segment-I"))
	watchChildren(env, plan, kids, startAt)
	return finishProcesses(env, plan, kids)
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

// startChildren launches the n children.
func startChildren(cmd *cobra.Command, f *runFlags, env *env, n int, startAt time.Time) ([]*child, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	base := append([]string{"run"}, segmentArgs(cmd.Flags(), scaleDrop)...)
	if env.embedded {
		base = append(base, "--url="+env.profile.URL) // the parent's embedded server
	}
	grace := env.profile.GracefulStop.D()
	kids := make([]*child, n)
	for i := range n {
		k := &child{index: i, dir: filepath.Join(f.out, "segment-"+strconv.Itoa(i)), stderr: &lastBytes{max: 16 << 10}, done: make(chan struct{})}
		args := append(base[:len(base):len(base)], "--segment="+strconv.Itoa(i)+"/"+strconv.Itoa(n),
			"--start-at="+startAt.UTC().Format(time.RFC3339Nano), "--out="+k.dir, "--no-progress")
		k.cmd = exec.CommandContext(env.ctx, exe, args...)
		k.cmd.Stderr = k.stderr
		k.cmd.SysProcAttr = childAttr() // its own process group: a terminal's Ctrl-C reaches the parent, which forwards it
		k.cmd.Cancel = func() error { return interruptChild(k.cmd.Process) }
		k.cmd.WaitDelay = grace + 30*time.Second // then killed
		k.tail = metrics.NewTail(k.dir)
		if err := k.cmd.Start(); err != nil {
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

// finishProcesses merges the children's results into --out, checks the
// thresholds on the merged run and prints it.
func finishProcesses(env *env, plan *workload.Plan, kids []*child) error {
	var dirs []string
	usage := false
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
		if code != exitOK && code != exitThresholds && code != exitInterrupted {
			fmt.Fprintf(env.stderr, "mcpbench: process %d (segment %d/%d) exited %d:\n%s", k.index, k.index, len(kids), code, k.stderr.String())
		}
	}
	if usage {
		return &exitError{code: exitUsage, err: errors.New("the processes refused their flags")}
	}
	if len(dirs) == 0 {
		return &exitError{code: exitFailed, err: errors.New("no process wrote results")}
	}
	m, err := metrics.MergeResults(dirs)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	sum := m.Summary
	sum.Embedded = env.embedded
	if stats := env.serverStatsFunc(); stats != nil {
		sum.Server = stats()
	}
	if len(plan.Thresholds) > 0 {
		sum.Thresholds = verdict.CheckThresholds(sum, plan.Thresholds, m)
	}
	if err := m.Write(env.f.out); err != nil {
		fmt.Fprintf(env.stderr, "mcpbench: writing the merged results: %v\n", err)
	}
	if err := env.print(sum); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "mcpbench: merged results of %d processes in %s\n", len(dirs), env.f.out)
	if len(dirs) < len(kids) {
		return &exitError{code: exitFailed, err: fmt.Errorf("%d of %d processes wrote no results: the merged run is a share of the test", len(kids)-len(dirs), len(kids))}
	}
	return exitFor(sum, nil)
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
