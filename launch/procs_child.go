package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// child is one child process.
type child struct {
	index  int
	dir    string
	cmd    *exec.Cmd
	stderr *lastBytes
	done   chan struct{}
	err    error       // from Wait; read once done is closed
	status chan string // its status (Processes.Status), sent once it has exited; nil: none
	tail   *results.Tail
}

// args is child i's command line: the shared arguments, its segment, the
// clock, its results directory, and the target process for the first.
func (l *Processes) args(i int, dir string) []string {
	args := append(l.Args[:len(l.Args):len(l.Args)], "--segment="+strconv.Itoa(i)+"/"+strconv.Itoa(l.N),
		"--start-at="+l.StartAt.UTC().Format(time.RFC3339Nano), "--out="+dir, "--no-progress")
	if i == 0 && l.TargetPID > 0 {
		args = append(args, "--target-pid="+strconv.Itoa(l.TargetPID))
	}
	return args
}

// startChildren launches the children, adding each to *started (under
// mu) as it starts. Interrupted (ctx done), it starts no more: those
// started have their interrupt, and it returns them.
func startChildren(ctx context.Context, l Processes, mu *sync.Mutex, started *[]*child) ([]*child, error) {
	kids := make([]*child, l.N)
	for i := range l.N {
		if ctx.Err() != nil {
			return kids[:i], nil
		}
		k := &child{index: i, dir: filepath.Join(l.Dir, "segment-"+strconv.Itoa(i)), stderr: &lastBytes{max: 16 << 10}, done: make(chan struct{})}
		k.cmd = exec.CommandContext(ctx, l.Exe, l.args(i, k.dir)...)
		k.cmd.Env = childEnv(l.Env)
		statusW := k.statusPipe(l.Status)
		k.cmd.Stderr = k.stderr
		if l.Stdin != nil {
			k.cmd.Stdin = bytes.NewReader(l.Stdin)
		}
		k.cmd.SysProcAttr = childAttr() // its own process group: a terminal's Ctrl-C reaches the parent, which forwards it
		k.cmd.Cancel = func() error { return interruptChild(k.cmd.Process) }
		k.cmd.WaitDelay = l.Grace + 30*time.Second // then killed
		k.tail = results.NewTail(k.dir)
		mu.Lock() // a second Ctrl-C stops the children started
		err := k.cmd.Start()
		if err == nil {
			*started = append(*started, k)
		}
		mu.Unlock()
		if statusW != nil {
			statusW.Close() // the child's copy stays open until it exits
		}
		if err != nil && ctx.Err() != nil {
			return kids[:i], nil // exec.CommandContext starts nothing once interrupted
		}
		if err != nil {
			for _, s := range kids[:i] {
				s.cmd.Process.Kill()
				<-s.done
			}
			return nil, fmt.Errorf("%w %d: %w", ErrStart, i, err)
		}
		go func() { k.err = k.cmd.Wait(); close(k.done) }()
		kids[i] = k
	}
	return kids, nil
}

// statusPipe gives the child, when on, a pipe on its fd 3 to write its
// status to (StatusEnv=3; writeStatus), read into k.status once it is
// closed (the child exited); it returns the parent's write end, to close
// once the child is started. Without a pipe the child has no status.
func (k *child) statusPipe(on bool) *os.File {
	if !on {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	k.cmd.ExtraFiles = []*os.File{w}
	k.cmd.Env = append(k.cmd.Env, StatusEnv+"=3")
	k.status = make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, 64))
		io.Copy(io.Discard, r)
		r.Close()
		k.status <- strings.TrimSpace(string(b))
	}()
	return w
}

// statusOf is the status child k wrote ("" none); it waits for the
// pipe's end (call it once k has exited).
func (k *child) statusOf() string {
	if k.status == nil {
		return ""
	}
	return <-k.status
}

// childEnv is a child's environment: env (nil: the parent's) and
// ChildEnv.
func childEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return append(env[:len(env):len(env)], ChildEnv+"=1")
}

// exited reports whether child k has exited.
func (k *child) exited() bool {
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// stopNowKill is how long a child stopped at once has to write its
// results (it cuts its sessions' closes: at once, unless its machine
// stalls) before it is killed.
const stopNowKill = 15 * time.Second

// stopNow stops the child at once (stopChildNow), which still writes its
// results, and kills it if it is still running stopNowKill later.
func (k *child) stopNow() {
	if k.exited() {
		return
	}
	stopChildNow(k.cmd.Process)
	go func() {
		t := time.NewTimer(stopNowKill)
		defer t.Stop()
		select {
		case <-k.done:
		case <-t.C:
			k.cmd.Process.Kill()
		}
	}()
}

// reap returns the results directories the exited children (of n) wrote
// (run.json or summary.json there) and whether one refused its flags; it
// shows the stderr of each that failed. After an interrupt, a child
// stopped by a signal (interrupted before it caught signals, or killed
// after a second Ctrl-C) is not a failure.
func reap(w io.Writer, kids []*child, n int, interrupted bool) (dirs []string, usage bool) {
	for _, k := range kids {
		code := exitCodeOf(k.err)
		if code == int(ExitUsage) {
			usage = true
		}
		_, runErr := os.Stat(filepath.Join(k.dir, results.FileRun))
		_, sumErr := os.Stat(filepath.Join(k.dir, results.FileSummary))
		if runErr == nil || sumErr == nil {
			dirs = append(dirs, k.dir)
		}
		switch {
		case code == -1 && interrupted:
			fmt.Fprintf(w, "mcpbench: process %d (segment %d/%d) stopped by the interrupt: %v\n", k.index, k.index, n, k.err)
		case code != int(ExitOK) && code != int(ExitThresholds) && !Interrupted(code):
			fmt.Fprintf(w, "mcpbench: process %d (segment %d/%d) exited %d:\n%s", k.index, k.index, n, code, k.stderr.String())
		}
	}
	return dirs, usage
}

// exitCodeOf is a child's exit code (0 when it exited cleanly; -1 when it
// was killed or could not be waited for).
func exitCodeOf(err error) int {
	if err == nil {
		return int(ExitOK)
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
