package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// env is what run, soak and sweep share: the profile with the flags
// applied, the signal context, and the embedded reference server when no
// URL is given.
type env struct {
	cmd      *cobra.Command
	f        *runFlags
	profile  *workload.Profile
	ctx      context.Context
	stop     context.CancelFunc
	srv      *refserver.Server
	embedded bool
	ver, sdk string
	started  time.Time
	stdout   io.Writer
	stderr   io.Writer
	closers  []func()
}

// prepare loads the profile, applies the flags (and mod, for a command's
// own flags), chooses the results directory, raises the file limit, and
// starts the embedded server if there is no URL.
func prepare(cmd *cobra.Command, f *runFlags, mod func(*workload.Profile) error) (*env, error) {
	e := &env{cmd: cmd, f: f, stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr(), started: time.Now()}
	p, err := workload.LoadProfile(f.profile)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if err := applyFlags(p, f, cmd.Flags()); err != nil {
		return nil, usageError("%v", err)
	}
	if mod != nil {
		if err := mod(p); err != nil {
			return nil, usageError("%v", err)
		}
	}
	e.profile = p
	if f.noResults {
		f.out = ""
	} else if f.out == "" {
		f.out = filepath.Join("results", time.Now().Format("20060102-150405")+"-"+safeName(cmpOr(p.Name, "run")))
	}
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return nil, usageError("--out: %v", err)
		}
	}
	raiseFileLimit()
	if f.procs > 0 {
		runtime.GOMAXPROCS(f.procs)
	}
	e.ver, e.sdk = version()
	e.ctx, e.stop = signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	e.closers = append(e.closers, e.stop)
	if p.URL == "" {
		// Check the profile first: a mistake must not wait for a server.
		pp := *p
		pp.URL = "http://127.0.0.1:1/mcp"
		pp.Defaults()
		if errs := pp.Validate(); len(errs) > 0 {
			e.close()
			return nil, &exitError{code: exitUsage, err: &workload.ProfileError{Source: p.Name, Errs: errs}}
		}
		e.embedded = true
		e.srv, err = refserver.Start(context.WithoutCancel(e.ctx), "127.0.0.1:0", refserver.Options{
			Mode: refserver.Mode(p.Server.Mode), GETRetry: p.Server.GETRetry.D(), TickInterval: p.Server.Tick.D()})
		if err != nil {
			e.close()
			return nil, &exitError{code: exitFailed, err: fmt.Errorf("start the embedded reference server: %w", err)}
		}
		e.closers = append(e.closers, func() { e.srv.Close() })
		p.URL = e.srv.URL()
		fmt.Fprintf(e.stderr, "mcpbench: no --url given: benchmarking the embedded reference server (%s mode) at %s\n", cmpOr(p.Server.Mode, "stateful"), p.URL)
	}
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

func (e *env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
}

// compile validates the profile and builds the plan.
func (e *env) compile() (*workload.Plan, error) {
	plan, err := workload.Compile(e.profile, nil)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	if e.f.insecure {
		plan.Driver.Insecure = true
		plan.SetURL(plan.Driver.URL, nil)
	}
	return plan, nil
}

// serverStats adds the embedded server's counters to a summary.
func (e *env) serverStats(sum *metrics.Summary) {
	if e.srv != nil && sum != nil {
		st := e.srv.Stats()
		sum.Server = &metrics.ServerStats{ToolCalls: st.ToolCalls, DoubleExecutions: st.DoubleExecutions, CountKeys: int64(len(st.Executions))}
	}
}

// print writes the summary as text or JSON.
func (e *env) print(sum *metrics.Summary) error {
	if e.f.jsonOut {
		return writeJSON(e.stdout, sum)
	}
	return metrics.WriteText(e.stdout, sum)
}

// recording ties a run to its progress display and results directory.
type recording struct {
	e     *env
	plan  *workload.Plan
	dir   string
	rec   *metrics.Recorder
	prog  *progress
	rw    *metrics.ResultsWriter
	rwErr error
}

func (e *env) newRecording(plan *workload.Plan, dir string) *recording {
	return &recording{e: e, plan: plan, dir: dir, rec: metrics.NewRecorder(plan.Names, plan.Profile.MaxVUs),
		prog: newProgress(e.stderr, e.f.quiet, e.f.noProgress, plan)}
}

// options are the engine options of a recorded run.
func (r *recording) options() workload.Options {
	e := r.e
	return workload.Options{
		Embedded:  e.embedded,
		Tool:      "mcpbench " + e.ver,
		Recorder:  r.rec,
		TargetPID: e.f.targetPID,
		OnStart: func(t0 time.Time, proto string) {
			if r.dir != "" {
				r.rw, r.rwErr = metrics.NewResultsWriter(r.dir, r.plan.Names, t0, e.runInfo(r.plan, proto))
			}
		},
		OnInterval: func(pr workload.Progress) {
			r.prog.interval(pr)
			if r.rw != nil {
				r.rw.Interval(pr.Interval, pr.Row, pr.Phase)
			}
		},
	}
}

// close finishes the results directory (summary.json, offenders.json).
func (r *recording) close(sum *metrics.Summary) {
	if r.dir == "" {
		return
	}
	if r.rw == nil && r.rwErr == nil { // the run never started (set-up failed)
		r.rw, r.rwErr = metrics.NewResultsWriter(r.dir, r.plan.Names, r.e.started, r.e.runInfo(r.plan, sum.Protocol))
	}
	if r.rwErr == nil {
		offs, faulty := r.rec.Offenders()
		r.rwErr = r.rw.Close(sum, offs, faulty)
	}
	if r.rwErr != nil {
		fmt.Fprintf(r.e.stderr, "mcpbench: writing results: %v\n", r.rwErr)
	} else {
		fmt.Fprintf(r.e.stderr, "mcpbench: results in %s\n", r.dir)
	}
}

func (e *env) runInfo(plan *workload.Plan, proto string) *metrics.RunInfo {
	return runInfo(plan, proto, e.f, e.cmd, e.embedded, e.ver, e.sdk, e.started)
}
