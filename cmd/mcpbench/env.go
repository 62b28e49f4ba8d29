package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/procrun"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// env is what run, soak and sweep share: the profile with the flags
// applied, the signal context, and the embedded reference server when no
// URL is given.
type env struct {
	cmd      *cobra.Command
	f        *runFlags
	profile  *profile.Profile
	ctx      context.Context
	stop     context.CancelFunc
	srv      *refserver.Server
	embedded bool
	ver, sdk string
	started  time.Time
	stdout   io.Writer
	stderr   io.Writer
	closers  []func()
	live     *liveOutputs
	out      *outDir // the results directory (nil: --no-results); out.go
	shownOut string  // the directory the printed summary names ("" none: removed, or its results lost)

	lostMu sync.Mutex
	lost   []string // results that could not be written (lose)

	hardMu sync.Mutex
	hard   func()      // a second Ctrl-C (setHardStop); nil: hardStop's default
	bound  *time.Timer // hardStop's exit, should the results not be written in time
	// now is done at a stop at once (hardStop): a run's engine then cuts
	// the sessions' closes (workload.Options.StopNow).
	now    context.Context
	cutNow context.CancelFunc
}

// claimOut claims the results directory (out.go) before anything runs:
// --out, or results/<time>-<profile>; none with --no-results. A
// directory left empty is removed when the command ends.
func (e *env) claimOut(p *profile.Profile) error {
	f := e.f
	if f.noResults {
		f.out = ""
		return nil
	}
	var err error
	if f.out == "" {
		e.out, err = claimDefaultOut("results", time.Now(), safeName(cmp.Or(p.Name, "run")))
	} else {
		e.out, err = claimOut("--out", f.out, f.overwrite)
	}
	if err != nil {
		return err
	}
	f.out = e.out.path
	e.shownOut = f.out
	e.closers = append(e.closers, e.out.dropIfEmpty) // first in, so it runs last
	return nil
}

// prepare loads the profile, applies the flags (and mod, for a command's
// own flags), chooses the results directory, raises the file limit, and
// starts the embedded server if there is no URL.
func prepare(cmd *cobra.Command, f *runFlags, mod func(*profile.Profile) error) (*env, error) {
	e := &env{cmd: cmd, f: f, stdout: cmd.OutOrStdout(), stderr: &syncWriter{w: cmd.ErrOrStderr()}, started: time.Now()}
	p, err := loadProfile(cmd, f, mod) // dryrun.go
	if err != nil {
		return nil, err
	}
	e.profile = p
	if cmd.Name() != "run" && (p.Iterations > 0 || len(p.AbortOnFail) > 0) { // workload/iterations.go, abort.go
		return nil, usageError("%s: --iterations and --abort-on-fail (iterations:, abort_on_fail:) are run's: a %s judges its own runs", cmd.Name(), cmd.Name())
	}
	if p.URL == "" && p.Server.Mode == "" && driver.IsModern(p.Protocol) {
		p.Server.Mode = string(refserver.Mode2026) // the embedded server speaks the version asked for
	}
	// Check the profile first (compiled, so the thresholds are checked
	// against the test's ops): a mistake must not wait for a server, nor
	// touch the results directory.
	pp := *p
	pp.URL = cmp.Or(pp.URL, "http://127.0.0.1:1/mcp")
	if _, err := workload.Compile(&pp, nil); err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if err := e.claimOut(p); err != nil {
		return nil, err
	}
	raiseFileLimit()
	e.ver, e.sdk = version()
	e.watchSignals(cmd.Context())
	if err := e.openLive(); err != nil {
		e.close()
		return nil, err
	}
	if p.URL == "" {
		e.embedded = true
		e.srv, err = refserver.Start(context.WithoutCancel(e.ctx), "127.0.0.1:0", refserver.Options{
			Mode: refserver.Mode(p.Server.Mode), GETRetry: p.Server.GETRetry.D(), TickInterval: p.Server.Tick.D(), PageSize: p.Server.PageSize,
			H2C: p.HTTP == httpclient.HTTP2}) // --http 2 against the embedded server: h2c
		if err != nil {
			e.close()
			return nil, &exitError{code: exitFailed, err: fmt.Errorf("start the embedded reference server: %w", err)}
		}
		e.closers = append(e.closers, func() { e.srv.Close() })
		p.URL = e.srv.URL()
		fmt.Fprintf(e.stderr, "mcpbench: no --url given: benchmarking the embedded reference server (%s mode) at %s\n", cmp.Or(p.Server.Mode, "stateful"), p.URL)
	}
	e.setProcs(p)
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			e.close()
			return nil, usageError("--cpuprofile: %v", err)
		}
		pprof.StartCPUProfile(pf)
		e.closers = append(e.closers, func() { pprof.StopCPUProfile(); pf.Close() })
	}
	return e, nil
}

// watchSignals makes the first stop signal (Ctrl-C's SIGINT, SIGTERM,
// SIGHUP) end the run gracefully: e.ctx is cancelled and the results so
// far are written; the command exits 128 + that signal's number. A second
// one calls the hard stop (e.setHardStop; by default hardStop: the
// sessions' closes are cut, the results written, then the exit). The
// signals are read from a channel of our own until the command returns,
// never handed back to the default action in between: a process started
// with SIGINT ignored (nohup, or & in a non-interactive shell) had its
// second Ctrl-C ignored when signal.Stop restored that disposition, and a
// parent of --processes killed by the default action left its children
// running.
//
// A child of --processes (procrun.ChildEnv) takes every stop signal after
// the first as the same graceful stop: a signal to the parent and its
// children at once (systemd's stop, a kill of all of them) reaches it
// directly and again through the parent, which is no second Ctrl-C. Its
// parent stops it at once with stopNowSignal.
func (e *env) watchSignals(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	e.ctx, e.stop = ctx, cancel
	e.now, e.cutNow = context.WithCancel(context.Background())
	child := os.Getenv(procrun.ChildEnv) == "1"
	sigs := earlySigs // a child's: what came before this is in it (main.go)
	if sigs == nil {
		sigs = make(chan os.Signal, 4)
	}
	signal.Notify(sigs, stopSignals...)
	if child && stopNowSignal != nil {
		signal.Notify(sigs, stopNowSignal)
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			var sig os.Signal
			select {
			case <-quit:
				return
			case sig = <-sigs:
			}
			switch {
			case stopNowSignal != nil && sig == stopNowSignal:
				e.hardStop()
			case ctx.Err() == nil:
				if n, ok := sig.(syscall.Signal); ok {
					caughtSignal.CompareAndSwap(0, int32(n))
				}
				cancel()
			case !child:
				e.hardStop()
			}
		}
	}()
	noticed := make(chan struct{})
	stopNotice := context.AfterFunc(ctx, func() {
		defer close(noticed)
		fmt.Fprintln(e.stderr, "mcpbench: interrupted: finishing the results (Ctrl-C again to stop at once)")
	})
	e.closers = append(e.closers, func() {
		signal.Stop(sigs)
		close(quit)
		<-done
		if !stopNotice() {
			<-noticed // the notice is being written: let it finish before the command returns
		}
		cancel()
		e.hardMu.Lock()
		if e.bound != nil {
			e.bound.Stop() // the command is done: its results are written
		}
		e.hardMu.Unlock()
	})
}

// setHardStop sets what a second Ctrl-C does (nil: hardStop's default);
// it returns the previous one.
func (e *env) setHardStop(f func()) (prev func()) {
	e.hardMu.Lock()
	defer e.hardMu.Unlock()
	prev, e.hard = e.hard, f
	return prev
}

// hardStopBound is how long a command stopped at once (a second Ctrl-C)
// has to write its results before the process exits anyway.
const hardStopBound = 10 * time.Second

// hardStop is a second Ctrl-C: the hard stop set, or by default a stop
// at once that still writes the results: e.now is cancelled (the run's
// engine cuts the sessions' closes: workload.Options.StopNow; the ops
// were cut by the first), so the command writes its summary and returns
// at once; should it not within hardStopBound, the process exits
// 128 + signal then, keeping what was written (a run's results directory
// has its run.json, intervals and histograms so far; summary.json once
// the run's measured part ended: it is written before the sessions are
// closed). Later ones change nothing.
func (e *env) hardStop() {
	e.hardMu.Lock()
	f := e.hard
	first := e.bound == nil
	if f == nil && first {
		e.bound = time.AfterFunc(hardStopBound, func() {
			fmt.Fprintf(e.stderr, "mcpbench: the results were not finished %v after the second interrupt: stopped, keeping what was written\n", hardStopBound)
			os.Exit(exitCode(exitInterrupted))
		})
	}
	e.hardMu.Unlock()
	if f != nil {
		f()
		return
	}
	if first {
		fmt.Fprintln(e.stderr, "mcpbench: interrupted again: stopping at once (the sessions' closes are cut), writing the results")
		e.cutNow()
	}
}

func (e *env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
}

// compile validates the profile and builds the plan, with the HTTP
// client its sessions share (planClient). e.profile is left defaulted.
func (e *env) compile() (*workload.Plan, error) {
	e.profile.Defaults()
	plan, err := workload.Compile(e.profile, nil)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	plan.Driver.HTTPClient = planClient(plan)
	return plan, nil
}

// planClient is the one HTTP client of a run's sessions, built for the
// plan's network settings (nil without a URL: nothing to reach).
func planClient(plan *workload.Plan) *http.Client {
	if plan.Driver.URL == "" {
		return nil
	}
	return driver.NewHTTPClient(&plan.Driver)
}

// serverStatsFunc reads the embedded server's counters (nil without one),
// for the engine to put in the summary before thresholds are checked.
func (e *env) serverStatsFunc() func() *results.ServerStats {
	if e.srv == nil {
		return nil
	}
	return func() *results.ServerStats {
		st := e.srv.Stats()
		return &results.ServerStats{ToolCalls: st.ToolCalls, DoubleExecutions: st.DoubleExecutions, CountKeys: int64(len(st.Executions)), Cancels: st.Cancels, Muted: st.Muted}
	}
}

// print writes the summary as --format says: text, JSON or markdown.
func (e *env) print(sum *results.Summary) error {
	switch {
	case e.f.jsonOut:
		return writeJSON(e.stdout, sum)
	case e.f.format == "markdown":
		return report.WriteMarkdown(e.stdout, sum)
	}
	return report.WriteTextIn(e.stdout, sum, e.shownOut)
}

// recording is a run's sinks as the command sets them up: the results
// directory (the only writer of its files; none with --no-results) and
// the progress display.
type recording struct {
	msg     string // what close says (settle)
	e       *env
	rd      *results.ResultsDir
	prog    *progress
	started atomic.Bool // the run's clock started (startMark)
}

func (e *env) newRecording(plan *workload.Plan, dir string) (*recording, error) {
	r := &recording{e: e, prog: newProgress(e.stderr, e.f.quiet, e.f.noProgress, plan)}
	if dir != "" {
		rd, err := results.NewResultsDir(dir)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("--out: %w", err)}
		}
		r.rd = rd
	}
	return r, nil
}

// options are the engine options of a recorded run.
func (r *recording) options(plan *workload.Plan) workload.Options {
	e := r.e
	sinks := []results.Sink{r.prog, startMark{&r.started}}
	if r.rd != nil {
		sinks = append(sinks, r.rd)
	}
	sinks = append(sinks, e.live.sinks()...)
	return workload.Options{
		Embedded:  e.embedded,
		Tool:      "mcpbench " + e.ver,
		TargetPID: e.f.targetPID,
		Server:    e.serverStatsFunc(),
		RunInfo:   e.runInfo(plan),
		Sinks:     sinks,
		StopNow:   e.now,

		NotApplicable: e.serverNotApplicable(plan), // server_applies.go
	}
}

// settle ends the recording once the run's writes are done (before the
// summary is printed, which then names the directory only when it holds
// the results): a whole run that never started (no session could be
// initialized; runErr workload.ErrSetup) leaves no results directory
// (out.go), a segment keeps its own for the merge; a results write that
// failed is lost results (env.lose: exit 3). An interrupted set-up keeps
// its directory: its summary says what the set-up did.
func (r *recording) settle(runErr error) {
	if r.rd == nil {
		return
	}
	e := r.e
	if !r.started.Load() && e.out != nil && !e.segment() && !errors.Is(runErr, workload.ErrInterrupted) {
		e.shownOut = ""
		if err := e.out.abandon(); err != nil {
			r.msg = fmt.Sprintf("mcpbench: removing the results of a run that never started: %v\n", err)
		} else {
			r.msg = fmt.Sprintf("mcpbench: the run never started: no results written to %s\n", r.rd.Dir())
		}
		return
	}
	if err := r.rd.Err(); err != nil {
		e.lose(r.rd.Dir(), err)
		return
	}
	r.msg = fmt.Sprintf("mcpbench: results in %s\n", r.rd.Dir())
}

// close says where the results are, or why there are none (settle).
func (r *recording) close() {
	if r.msg != "" {
		fmt.Fprint(r.e.stderr, r.msg)
	}
}

// lose records results that could not be written into dir (err: the
// first failed write) and says so: the command exits exitResultsLost
// (resultsExit), and the summary printed names no results directory.
func (e *env) lose(dir string, err error) { e.loseWhat(dir, err, missingResults(dir)) }

// loseWhat is lose with what says what is lost.
func (e *env) loseWhat(dir string, err error, what string) {
	e.lostMu.Lock()
	defer e.lostMu.Unlock()
	if dir == e.f.out {
		e.shownOut = ""
	}
	if msg := err.Error(); strings.Contains(msg, dir) {
		e.lost = append(e.lost, msg)
	} else {
		e.lost = append(e.lost, dir+": "+msg)
	}
	fmt.Fprintf(e.stderr, "mcpbench: results lost: writing %s failed (%v): %s; the summary printed is all that is left of this run\n", dir, err, what)
}

// missingResults names the files of a results directory dir lacks, for
// lose's message ("it lacks summary.json, run.json"; "its files are
// incomplete" when none is missing: one was cut short).
func missingResults(dir string) string {
	var missing []string
	for _, f := range []string{results.FileRun, results.FileIntervals, results.FileHistogram, results.FileSummary} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return "its files are incomplete"
	}
	return "it lacks " + strings.Join(missing, ", ")
}

// printFailed is the outcome of a summary that could not be printed
// (stdout on a full disk, a closed pipe): exit 1 naming the failure,
// or exitResultsLost when the results directory was lost too
// (resultsExit), never the usage code a plain error would get.
func (e *env) printFailed(err error) error {
	return e.resultsExit(&exitError{code: exitFailed, err: fmt.Errorf("printing the summary failed: %w", err)})
}

// resultsExit is the command's outcome err, made exitResultsLost when
// results were lost (env.lose), so that no caller reads success (nor a
// crossed threshold alone) from a run whose results are gone. A usage
// error and a stop signal's exit stay as they are (the loss was said).
func (e *env) resultsExit(err error) error {
	e.lostMu.Lock()
	lost := e.lost
	e.lostMu.Unlock()
	if len(lost) == 0 {
		return err
	}
	var ee *exitError
	if errors.As(err, &ee) && (ee.code == exitUsage || ee.code == exitInterrupted) {
		return err
	}
	msg := "results lost: " + strings.Join(lost, "; ")
	if err != nil && err.Error() != "" {
		msg += "; and " + err.Error()
	}
	return &exitError{code: exitResultsLost, err: errors.New(msg)}
}

// segment reports whether the command runs one segment of a test
// (--segment, a child of --processes, --sweep-step): its results are
// kept whatever happened, for the merge.
func (e *env) segment() bool {
	set := e.cmd.Flags().Changed
	return set("segment") || set("sweep-step")
}

func (e *env) runInfo(plan *workload.Plan) *results.RunInfo {
	return runInfo(plan, e.f, e.cmd, e.embedded, e.ver, e.sdk, e.started)
}

// setProcs sets GOMAXPROCS: --procs when given; else, for an open-model
// rate against a separate server, as few Ps as the rate needs
// (workload.AutoProcs: the policy and its measurements).
func (e *env) setProcs(p *profile.Profile) {
	if e.f.procs > 0 {
		runtime.GOMAXPROCS(e.f.procs)
		return
	}
	n, rate := workload.AutoProcs(p, e.embedded, runtime.NumCPU())
	if n > 0 && n < runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(n)
		fmt.Fprintf(e.stderr, "mcpbench: GOMAXPROCS %d of %d cores: enough for %g ops/s and cheaper per op (--procs N to choose)\n", n, runtime.NumCPU(), rate)
	}
}

// syncWriter serializes writes: stderr gets progress lines, notices from a
// signal's goroutine and messages from the command at once.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
