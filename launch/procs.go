// procs.go (once internal/procrun): one test as N child processes of
// mcpbench, and the merge of what they write: 'mcpbench run --processes
// N', 'soak --processes' and each run of a step of 'sweep --processes'.
//
// Child I runs the executable with the shared arguments plus
// --segment=I/N (its share of the arrival rate, VUs and churn; see
// workload.Segment), --start-at (one clock for all), --out=DIR/segment-I
// and --no-progress; the first child alone also gets --target-pid (one
// sampler of the target). Each child is in a process group of its own
// and, on Linux, dies with the parent (Pdeathsig), so a terminal's Ctrl-C
// reaches the parent alone, which forwards it: RunProcesses' context
// cancelled sends each child one interrupt (it finishes gracefully and
// writes its results); a value on Processes.StopNow (a second Ctrl-C)
// sends another, which stops a child at once, and kills it 5 s later if
// it still runs. While the children run, RunProcesses follows their
// results directories (results.Tail) and hands their k-th intervals,
// added up, to Processes.Progress. When all have exited it merges their
// results (results.MergeResults: histograms merged exactly, counters
// summed). It calls no os.Exit and installs no signal handler.

package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// ChildEnv is set to "1" in each child's environment: the child takes a
// second stop signal as its parent's forward of one it got itself (a
// signal to the whole group), and is stopped at once by its parent
// alone (see Processes.StopNow).
const ChildEnv = "MCPBENCH_PROCESS_CHILD"

var (
	// ErrUsage: a child exited ExitUsage (the children refused their
	// flags); no results are merged.
	ErrUsage = errors.New("the processes refused their flags")
	// ErrInterrupted: the launch was interrupted (its context was
	// cancelled). Run wraps it when no child wrote anything;
	// Result.InterruptedErr when the merged results are those written
	// until then.
	ErrInterrupted = errors.New("interrupted")
	// ErrNoResults: no child wrote results, and the launch was not
	// interrupted.
	ErrNoResults = errors.New("no process wrote results")
	// ErrResultsLost: no child's results could be written (each that
	// ran exited ExitResultsLost).
	ErrResultsLost = errors.New("the processes could not write their results")
	// ErrStart: a child could not be started (the executable is missing,
	// a fork failed); those started were killed.
	ErrStart = errors.New("start process")
)

// Progress shows the children's merged intervals (a results.Sink is one).
// Run calls it from one goroutine at a time.
type Progress interface {
	Interval(rec *results.IntervalRecord)
	End(end *results.RunEnd)
}

// Processes is how a command starts its children. Exe, N, Dir and Stderr are
// required.
type Processes struct {
	Exe  string   // the executable each child runs (mcpbench itself: os.Executable)
	Args []string // the command line every child shares (the subcommand and --launch-file=-: childfile.go)
	Env  []string // the children's environment; nil: the parent's
	// Stdin is what each child reads on its standard input (its launch
	// file: childfile.go); nil: nothing.
	Stdin []byte

	N       int       // children: segments 0/N … N−1/N
	Dir     string    // child I writes Dir/segment-I
	StartAt time.Time // the children's shared --start-at

	// Grace is the test's graceful stop: a child still running 30 s past
	// it after the interrupt is killed.
	Grace time.Duration
	// TargetPID, when > 0, is given to the first child alone
	// (--target-pid): one sampler of the target, whose samples the merge
	// takes.
	TargetPID int

	// Stderr gets the notices (the children started, one failed and its
	// stderr, a second interrupt): lines starting "mcpbench: ". It must be
	// safe for concurrent use with the command's other writes to it.
	Stderr io.Writer
	// Progress gets the merged intervals (nil: none); Window is the
	// test's warm-up and measured window from StartAt, for the time
	// remaining it shows.
	Progress Progress
	Window   time.Duration
	// Status gives each child a pipe to write its status to (StatusEnv;
	// Child.Status).
	Status bool
	// StopNow stops the children at once on each value (a second Ctrl-C:
	// a second interrupt each; killed if still running 5 s later); what
	// they wrote is still merged. Nil: never.
	StopNow <-chan struct{}
}

// Child is one child as it exited.
type Child struct {
	Index  int
	Dir    string // its results directory, Dir/segment-Index
	Err    error  // from exec.Cmd.Wait: nil when it exited 0
	Stderr string // the last 16 KiB it wrote on stderr
	Status string // what it wrote to its status pipe (StatusEnv): "setup" its run never started; "" none
}

// ExitCode is the child's exit code (0 when it exited cleanly; -1 when it
// was killed or could not be waited for).
func (c Child) ExitCode() int { return exitCodeOf(c.Err) }

// Result is what a launch's children left, merged.
type Result struct {
	*results.Merged
	Children    []Child  // those started, in segment order
	Dirs        []string // the results directories merged
	Missing     int      // children that wrote no results (or were not started: interrupted first)
	Interrupted bool     // the launch was interrupted (its context cancelled)
}

// Run starts the children of l, shows their merged progress until every
// one has exited, and merges their results. The merged summary is marked
// interrupted ("interrupted by signal") when ctx was cancelled and no
// child said so itself. Errors: ErrStart (wrapped) when a child could not
// start, ErrUsage when a child refused its flags, ErrInterrupted
// (wrapped) or ErrNoResults when no child wrote results, or the merge's.
// A launch interrupted at any point returns what its children wrote,
// merged, and Result.InterruptedErr.
func RunProcesses(ctx context.Context, l Processes) (*Result, error) {
	var mu sync.Mutex
	var started []*child
	stopped := make(chan struct{})
	defer close(stopped)
	if l.StopNow != nil {
		go func() {
			for {
				select {
				case <-stopped:
					return
				case <-l.StopNow:
				}
				fmt.Fprintln(l.Stderr, "mcpbench: interrupted again: stopping the processes at once, then merging what they wrote")
				mu.Lock()
				for _, k := range started {
					k.stopNow()
				}
				mu.Unlock()
			}
		}()
	}
	kids, err := startChildren(ctx, l, &mu, &started)
	if err != nil {
		return nil, err
	}
	if len(kids) == l.N {
		fmt.Fprintf(l.Stderr, "mcpbench: %d processes (segments 0/%d … %d/%d), the clock starts at %s (in %v); each writes %s\n",
			l.N, l.N, l.N-1, l.N, l.StartAt.Format("15:04:05.000"), time.Until(l.StartAt).Round(100*time.Millisecond), filepath.Join(l.Dir, "segment-I"))
	} else {
		fmt.Fprintf(l.Stderr, "mcpbench: interrupted while starting the processes: %d of %d started\n", len(kids), l.N)
	}
	watch(l, kids)
	interrupted := ctx.Err() != nil
	dirs, usage := reap(l.Stderr, kids, l.N, interrupted)
	if usage {
		return nil, ErrUsage
	}
	if len(dirs) == 0 {
		if interrupted {
			// Nothing to merge: the merged result of an interrupt before
			// any process wrote anything (before they caught signals) is
			// none; no file is written in Dir. A process interrupted in
			// its set-up writes an empty interrupted run, merged.
			return nil, fmt.Errorf("%w before any process wrote results: nothing to merge into %s", ErrInterrupted, l.Dir)
		}
		if n := lostResults(kids); n > 0 {
			return nil, fmt.Errorf("%w (%d of %d: see their errors above)", ErrResultsLost, n, l.N)
		}
		return nil, ErrNoResults
	}
	m, err := results.MergeResults(dirs)
	if err != nil {
		return nil, err
	}
	if interrupted && !m.Summary.Interrupted {
		m.Summary.Interrupted, m.Summary.StopReason = true, "interrupted by signal"
	}
	r := &Result{Merged: m, Dirs: dirs, Missing: l.N - len(dirs), Interrupted: interrupted}
	for _, k := range kids {
		r.Children = append(r.Children, Child{Index: k.index, Dir: k.dir, Err: k.err, Stderr: k.stderr.String(), Status: k.statusOf()})
	}
	return r, nil
}

// Failed returns the children that exited with neither a result nor an
// interrupt (not ExitOK, ExitThresholds or ExitInterrupted), and the last
// line each wrote on stderr.
func (r *Result) Failed() (n int, last []string) {
	for _, k := range r.Children {
		if c := k.ExitCode(); c != int(ExitOK) && c != int(ExitThresholds) && !Interrupted(c) {
			n++
			last = append(last, LastLine(k.Stderr))
		}
	}
	return n, last
}

// NeverStarted reports whether no child started its run: each failed
// because no session could be initialized (its status says so:
// workload.ErrSetup).
func (r *Result) NeverStarted() bool {
	failed, _ := r.Failed()
	if failed == 0 || failed < len(r.Children) {
		return false
	}
	for _, k := range r.Children {
		if k.Status != statusSetup {
			return false
		}
	}
	return true
}

// anySetup reports whether a child's run never started (its status).
func (r *Result) anySetup() bool {
	for _, k := range r.Children {
		if k.Status == statusSetup {
			return true
		}
	}
	return false
}

// LostErr names the children whose results could not be written (all or
// some: they exited ExitResultsLost); nil when none. The merged results
// then lack them, or part of them.
func (r *Result) LostErr() error {
	var lost []string
	for _, k := range r.Children {
		if k.ExitCode() == int(ExitResultsLost) {
			lost = append(lost, fmt.Sprintf("process %d (%s)", k.Index, LastLine(k.Stderr)))
		}
	}
	if len(lost) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrResultsLost, strings.Join(lost, "; "))
}

// lostResults counts the children that exited ExitResultsLost.
func lostResults(kids []*child) (n int) {
	for _, k := range kids {
		if exitCodeOf(k.err) == int(ExitResultsLost) {
			n++
		}
	}
	return n
}

// InterruptedErr wraps ErrInterrupted for a launch that was interrupted
// (nil when it was not), naming the processes that wrote nothing before
// it.
func (r *Result) InterruptedErr() error {
	if !r.Interrupted {
		return nil
	}
	msg := ": the merged results are what the processes wrote until then"
	if r.Missing > 0 {
		msg += fmt.Sprintf(" (%d of %d processes wrote nothing)", r.Missing, r.Missing+len(r.Dirs))
	}
	return fmt.Errorf("%w%s", ErrInterrupted, msg)
}

// MissingErr fails a merged run that lacks some children's results (nil
// when none lacks): it is a share of the test.
func (r *Result) MissingErr() error {
	if r.Missing == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d processes wrote no results: the merged run is a share of the test", r.Missing, r.Missing+len(r.Dirs))
}

// StepErr is the error of one step's run (sweep --processes) from its
// children, as the engine would give it: workload.ErrSetup (wrapped) when
// no child could start its sessions (the sweep stops: the next step will
// not do better), another when a child failed or wrote no results (the
// step is a share of its test); nil when every child ran.
func (r *Result) StepErr() error {
	failed, last := r.Failed()
	n := len(r.Children)
	switch {
	case failed == n && !r.Summary.Interrupted && r.anySetup():
		return fmt.Errorf("%w in any of the %d processes (%s)", workload.ErrSetup, n, last[0])
	case failed > 0:
		return fmt.Errorf("%d of %d processes failed: %s", failed, n, strings.Join(last, "; "))
	case r.Missing > 0:
		return fmt.Errorf("%d of %d processes wrote no results: the step's run is a share of it", r.Missing, n)
	}
	return nil
}

// LastLine is s's last non-empty line (a child's error, from its stderr).
func LastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// CheckShare refuses a closed-model test with fewer VUs than n processes:
// some would have none.
func CheckShare(plan *workload.Plan, n int) error {
	if !plan.Open && !plan.Staged && plan.VUs < n {
		return fmt.Errorf("%s %d: the test's %d VUs leave some processes without one: use %s %d or more, or fewer processes", setting.Processes, n, plan.VUs, setting.VUs, n)
	}
	return nil
}

// StartDelay is how long after launching n children of plan their clock
// starts: given when > 0, else 5 s plus 1 ms per session a child sets up
// (a child starts, negotiates the protocol and initializes its sessions,
// 64 at a time, before its clock starts).
func StartDelay(given time.Duration, plan *workload.Plan, n int) time.Duration {
	if given > 0 {
		return given
	}
	return 5*time.Second + time.Duration((plan.VUs+n-1)/n)*time.Millisecond
}
