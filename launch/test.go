// Package launch runs a test as the commands run it: 'mcpbench run',
// 'sweep' and 'soak' in this process, as N child processes of mcpbench
// (--processes), or one segment of a test (--segment, a child, a pod of
// 'k8s-job', whose manifest it builds too). A command settles its flags
// into a Spec; Prepare validates it once, claims the results directory,
// opens the live outputs and starts the embedded reference server; a
// Test's Run, Sweep or Soak runs it, prints the summary and returns the
// outcome as an error carrying its exit code (ExitCode, CodeOf).
//
// The package parses no flags, installs no signal handler and never
// exits the process: the command owns signals and passes them in — the
// first stop signal cancels Prepare's context (the test ends
// gracefully, its results written), each later one is a value on
// Spec.StopNow (stop at once) — and exits with CodeOf the error.
package launch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// Spec is what a command's flags settled: the test (its profile, the
// flags applied) and how to run and record it. The zero values are the
// flags' defaults.
type Spec struct {
	// Command is "run", "sweep" or "soak": what runs, and the name in
	// messages and JUnit suites.
	Command string
	// Profile is the test: loaded, every flag applied (the command's own
	// too). Prepare fills in the embedded server's URL when it has none;
	// it is not validated yet (Prepare does it, once).
	Profile *profile.Profile

	Out       string // results directory; "": results/<time>-<profile>
	NoResults bool   // write no results directory
	Overwrite bool   // replace a results directory mcpbench wrote (ClaimOut)

	// Segment, SegmentSequence and StartAt are --segment,
	// --segment-sequence and --start-at as given ("": none).
	Segment, SegmentSequence, StartAt string
	// Processes > 1 runs the test (each of a sweep's runs) as that many
	// child processes; StartDelay is their clock's delay (0: StartDelay's
	// default).
	Processes  int
	StartDelay time.Duration

	Procs      int           // GOMAXPROCS; 0: auto (workload.AutoProcs)
	TargetPID  int           // the target server's process, sampled (> 0)
	CPUProfile string        // a Go CPU profile of this process to this file ("": none)
	Checkpoint time.Duration // soak: checkpoint.json this often (0: the profile's)

	Quiet, NoProgress bool   // progress: plain lines, or none
	Format            string // the summary: "text" (""), "json" or "markdown"
	Live              LiveSpec

	// Argv and Flags are the command line and the flags given as
	// run.json records them: credentials already redacted.
	Argv  []string
	Flags map[string]string
	// Version and SDK are mcpbench's version and the embedded server's
	// go-sdk's, for run.json.
	Version, SDK string

	Stdout io.Writer // the summary (nil: discarded)
	Stderr io.Writer // progress and notices (nil: discarded)

	// Invocation is how the user runs mcpbench, for the commands the
	// output tells them to run next ("Next: mcpbench plot DIR"): a
	// command line such as "go run ./cmd/mcpbench" or "./mcpbench", said
	// as given; "": "mcpbench".
	Invocation string

	// StopNow is the stop at once (a second Ctrl-C): on the first value
	// the sessions' closes are cut (or the children are stopped at once)
	// and the results written; nil: never. Exit, when set, is called with
	// the exit code should the results not be written within
	// HardStopBound after that (the command exits; the package never
	// does).
	StopNow <-chan struct{}
	Exit    func(code ExitCode)

	// child is the launch file a child of --processes was started with
	// (ReadChild): the test's segment, run as its parent asked.
	child *childFile
}

// Test is a prepared test (Prepare): the profile, the results directory
// claimed, the live outputs open and, with no URL, the embedded
// reference server running. Close releases them. A Test runs once.
type Test struct {
	spec     Spec
	profile  *profile.Profile
	plan     *workload.Plan // compiled once by Prepare (nil for a sweep: its steps are compiled by sweep.Run)
	ctx      context.Context
	srv      *refserver.Server
	embedded bool
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

// env is the Test under its old name, for the code moved from the
// command.
type env = Test

// claimOut claims the results directory (out.go) before anything runs:
// --out, or results/<time>-<profile>; none with --no-results. A
// directory left empty is removed when the command ends.
func (e *env) claimOut(p *profile.Profile) error {
	f := &e.spec
	if f.NoResults {
		f.Out = ""
		return nil
	}
	var err error
	if f.Out == "" {
		e.out, err = claimDefaultOut("results", time.Now(), safeName(cmp.Or(p.Name, "run")))
	} else {
		e.out, err = ClaimOut(setting.Out.String(), f.Out, f.Overwrite)
	}
	if err != nil {
		return err
	}
	f.Out = e.out.path
	e.shownOut = f.Out
	e.closers = append(e.closers, e.out.dropIfEmpty) // first in, so it runs last
	return nil
}

// Prepare starts the embedded reference server when the profile has no
// URL (quietly: the notice comes once the test is prepared), compiles
// the profile once against its target (a mistake exits ExitUsage before
// the results directory is touched or a request is sent), claims the
// results directory, raises the file limit, opens the live outputs and
// sets GOMAXPROCS. The test stops gracefully when ctx is done. Errors
// carry their exit code: ExitUsage for the spec or the profile,
// ExitFailed for the embedded server.
func Prepare(ctx context.Context, spec Spec) (*Test, error) {
	if spec.Stdout == nil {
		spec.Stdout = io.Discard
	}
	if spec.Stderr == nil {
		spec.Stderr = io.Discard
	}
	e := &Test{spec: spec, stdout: spec.Stdout, stderr: &syncWriter{w: spec.Stderr}, started: time.Now()}
	if err := e.checkScale(); err != nil {
		return nil, err
	}
	p := spec.Profile
	if spec.child != nil {
		if err := e.adoptChild(); err != nil {
			return nil, err
		}
		p = e.spec.Profile
	}
	e.profile = p
	if spec.Command != "run" && spec.child == nil && (p.Iterations > 0 || len(p.AbortOnFail) > 0) { // workload/iterations.go, abort.go
		return nil, Usagef("%s: %s and %s (iterations:, abort_on_fail:) are run's: a %s judges its own runs", spec.Command, setting.Iterations, setting.AbortOnFail, spec.Command)
	}
	if p.URL == "" && p.Server.Mode == "" && driver.IsModern(p.Protocol) {
		p.Server.Mode = string(refserver.Mode2026) // the embedded server speaks the version asked for
	}
	if p.URL == "" { // before the compile, so that it compiles against the real target: once
		e.embedded = true
		srv, err := refserver.Start(context.WithoutCancel(ctx), "127.0.0.1:0", refserver.Options{
			Mode: refserver.Mode(p.Server.Mode), GETRetry: p.Server.GETRetry.D(), TickInterval: p.Server.Tick.D(), PageSize: p.Server.PageSize,
			H2C: p.HTTP == httpclient.HTTP2}) // --http 2 against the embedded server: h2c
		if err != nil {
			return nil, WithExitCode(ExitFailed, fmt.Errorf("start the embedded reference server: %w", err))
		}
		e.srv = srv
		e.closers = append(e.closers, func() { e.srv.Close() })
		p.URL = e.srv.URL()
	}
	// Check the profile (compiled, so the thresholds are checked against
	// the test's ops) before anything else: a mistake must not touch the
	// results directory nor reach a server.
	if err := e.validate(); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.claimOut(p); err != nil {
		e.Close()
		return nil, err
	}
	RaiseFileLimit()
	e.watchStop(ctx)
	if err := e.openLive(); err != nil {
		e.Close()
		return nil, err
	}
	if e.embedded {
		fmt.Fprintf(e.stderr, "mcpbench: no %s given: benchmarking the embedded reference server (%s mode) at %s\n", setting.URL, cmp.Or(p.Server.Mode, "stateful"), p.URL)
	}
	e.setProcs(p)
	if spec.CPUProfile != "" {
		pf, err := os.Create(spec.CPUProfile)
		if err != nil {
			e.Close()
			return nil, Usagef("%s: %v", setting.CPUProfile, err)
		}
		pprof.StartCPUProfile(pf)
		e.closers = append(e.closers, func() { pprof.StopCPUProfile(); pf.Close() })
	}
	return e, nil
}

// validate checks the profile as the command will run it, and what the
// command asks of it: the one compile of a run's or a soak's plan (kept
// for Run: e.plan); a sweep's profile is compiled on a copy (each step
// is compiled from it as sweep.Run builds it).
func (e *env) validate() error {
	if _, _, err := e.segmentAndStart(); err != nil { // refused before anything runs; read again when the run starts
		return err
	}
	p := e.profile
	var plan *workload.Plan
	var err error
	if e.spec.Command == "sweep" && e.spec.child == nil {
		pp := *p
		plan, err = compile(&pp)
	} else {
		p.Defaults() // e.profile is left defaulted, as the run reads it
		plan, err = compile(p)
		if err == nil {
			plan.Driver.HTTPClient = planClient(plan)
			e.plan = plan
		}
	}
	if err != nil {
		return WithExitCode(ExitUsage, err)
	}
	n := e.spec.Processes
	if n < 2 {
		return nil
	}
	if e.spec.NoResults {
		return Usagef("%s merges its children's results into %s: leave %s out", setting.Processes, setting.Out, setting.NoResults)
	}
	if e.spec.Command == "sweep" {
		if err := checkSweepShare(p, n); err != nil {
			return WithExitCode(ExitUsage, err)
		}
		return nil
	}
	if err := CheckShare(plan, n); err != nil {
		return WithExitCode(ExitUsage, err)
	}
	if len(plan.Aborts) > 0 {
		return Usagef("%s (abort_on_fail) with %s: each process would judge only its own share of the load; run it in one process", setting.AbortOnFail, setting.Processes)
	}
	return nil
}

// watchStop makes ctx's end stop the test gracefully (e.ctx is done and
// the results so far are written) and each value on Spec.StopNow the
// hard stop (e.setHardStop; by default hardStop: the sessions' closes
// are cut, the results written, then Spec.Exit should they not be in
// time), until Close.
func (e *env) watchStop(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	e.ctx = ctx
	e.now, e.cutNow = context.WithCancel(context.Background())
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-e.spec.StopNow:
				e.hardStop()
			}
		}
	}()
	noticed := make(chan struct{})
	stopNotice := context.AfterFunc(ctx, func() {
		defer close(noticed)
		if parent.Err() != nil {
			fmt.Fprintln(e.stderr, "mcpbench: interrupted: finishing the results (Ctrl-C again to stop at once)")
		}
	})
	e.closers = append(e.closers, func() {
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

// HardStopBound is how long a command stopped at once (a second Ctrl-C)
// has to write its results before Spec.Exit is called.
const HardStopBound = 10 * time.Second

// hardStop is a second Ctrl-C: the hard stop set, or by default a stop
// at once that still writes the results: e.now is cancelled (the run's
// engine cuts the sessions' closes: workload.Options.StopNow; the ops
// were cut by the first), so the command writes its summary and returns
// at once; should it not within HardStopBound, Spec.Exit is called with
// ExitInterrupted then, keeping what was written (a run's results
// directory has its run.json, intervals and histograms so far;
// summary.json once the run's measured part ended: it is written before
// the sessions are closed). Later ones change nothing.
func (e *env) hardStop() {
	e.hardMu.Lock()
	f := e.hard
	first := e.bound == nil
	if f == nil && first {
		e.bound = time.AfterFunc(HardStopBound, func() {
			fmt.Fprintf(e.stderr, "mcpbench: the results were not finished %v after the second interrupt: stopped, keeping what was written\n", HardStopBound)
			if e.spec.Exit != nil {
				e.spec.Exit(ExitInterrupted)
			}
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

// Close ends what Prepare started (in reverse), the live outputs after
// their linger; a results directory left empty is removed.
func (e *env) Close() { e.close() }

func (e *env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
}

// compile validates the profile and builds the plan.
func (e *env) compile() (*workload.Plan, error) {
	if e.plan == nil {
		return nil, WithExitCode(ExitUsage, errors.New("the test has no plan: a sweep's runs are its steps'"))
	}
	return e.plan, nil
}

// compile is launch's one call of workload.Compile (pure: p is not
// changed; no HTTP client is built: planClient builds the run's).
func compile(p *profile.Profile) (*workload.Plan, error) { return workload.Compile(p, nil) }

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
	case e.spec.Format == "json":
		return writeJSON(e.stdout, sum)
	case e.spec.Format == "markdown":
		return report.WriteMarkdown(e.stdout, sum)
	}
	return report.WriteTextWith(e.stdout, sum, report.TextOptions{Dir: e.shownOut, Invocation: e.spec.Invocation})
}

// recording is a run's sinks as the command sets them up: the results
// directory (the only writer of its files; none with --no-results) and
// segmentRun is what a run in this process needs (run's, and a sweep
// step's child): this process's segment and start, the test's plan, its
// recording into the results directory and the engine's options with the
// segment and start set.
func (e *env) segmentRun() (*workload.Plan, *recording, workload.Options, error) {
	seg, startAt, err := e.segmentAndStart()
	if err != nil {
		return nil, nil, workload.Options{}, err
	}
	plan, err := e.compile()
	if err != nil {
		return nil, nil, workload.Options{}, err
	}
	r, err := e.newRecording(plan, e.spec.Out)
	if err != nil {
		return nil, nil, workload.Options{}, err
	}
	opts := r.options(plan)
	opts.Segment, opts.StartAt = seg, startAt
	return plan, r, opts, nil
}

// the progress display.
type recording struct {
	msg     string // what close says (settle)
	e       *env
	rd      *results.ResultsDir
	prog    *progress
	started atomic.Bool // the run's clock started (startMark)
}

func (e *env) newRecording(plan *workload.Plan, dir string) (*recording, error) {
	r := &recording{e: e, prog: newProgress(e.stderr, e.spec.Quiet, e.spec.NoProgress, plan)}
	if dir != "" {
		rd, err := results.NewResultsDir(dir)
		if err != nil {
			return nil, WithExitCode(ExitUsage, fmt.Errorf("%s: %w", setting.Out, err))
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
		Tool:      "mcpbench " + e.spec.Version,
		TargetPID: e.spec.TargetPID,
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
	if dir == e.spec.Out {
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
	return e.resultsExit(WithExitCode(ExitFailed, fmt.Errorf("printing the summary failed: %w", err)))
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
	if codeIs(err, ExitUsage) || codeIs(err, ExitInterrupted) {
		return err
	}
	msg := "results lost: " + strings.Join(lost, "; ")
	if err != nil && err.Error() != "" {
		msg += "; and " + err.Error()
	}
	return WithExitCode(ExitResultsLost, errors.New(msg))
}

// segment reports whether the command runs one segment of a test
// (--segment, a child of --processes, --sweep-step): its results are
// kept whatever happened, for the merge.
func (e *env) segment() bool {
	return e.spec.Segment != "" || e.spec.child != nil
}

func (e *env) runInfo(plan *workload.Plan) *results.RunInfo {
	return runInfo(plan, &e.spec, e.embedded, e.started)
}

// setProcs sets GOMAXPROCS: --procs when given; else, for an open-model
// rate against a separate server, as few Ps as the rate needs
// (workload.AutoProcs: the policy and its measurements).
func (e *env) setProcs(p *profile.Profile) {
	if e.spec.Procs > 0 {
		runtime.GOMAXPROCS(e.spec.Procs)
		return
	}
	n, rate := workload.AutoProcs(p, e.embedded, runtime.NumCPU())
	if n > 0 && n < runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(n)
		fmt.Fprintf(e.stderr, "mcpbench: GOMAXPROCS %d of %d cores: enough for %g ops/s and cheaper per op (%s N to choose)\n", n, runtime.NumCPU(), rate, setting.Procs)
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
