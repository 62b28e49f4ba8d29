package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// Options configure Run.
type Options struct {
	// Dir receives one results directory per step (step-01 …) and
	// sweep.json and sweep.csv, rewritten after each step (this package is
	// their only writer).
	Dir string
	// HTTPClient is shared by every step (nil: each step's run builds its
	// own, workload.Run's zero value).
	HTTPClient *http.Client
	Embedded   bool
	Tool       string
	TargetPID  int
	// Server reads the embedded reference server's counters (nil: none).
	Server func() *results.ServerStats
	// RunInfo describes a step's run for its run.json (nil: a minimal one).
	RunInfo func(pl *workload.Plan) *results.RunInfo
	// Sinks, when set, gives each step more sinks than its results
	// directory (the progress display).
	Sinks func(step int, pl *workload.Plan) []results.Sink
	// OnStep reports each finished step (between steps).
	OnStep func(st results.SweepStep)
	// RunStep, when set, runs one run of a step instead of the engine in
	// this process (mcpbench sweep --processes runs it as child processes
	// and merges them). It must write the run's results directory
	// (run.Dir), hand sinks the run as the engine would — Start, every
	// interval with its phase, row and response- and service-time
	// histograms, End — and return its summary; errors as workload.Run's
	// (workload.ErrSetup: no session could start, which ends the sweep).
	// The step is judged from what sinks got and the summary, as an
	// in-process step is. nil: InProcess.
	RunStep func(ctx context.Context, run StepRun, sinks []results.Sink) (*results.Summary, error)
	// Probe, when set, runs one cool-down probe (run.Plan at the probe
	// load, ProbeDuration long, no results directory) and returns its
	// summary; nil: the engine in this process (InProcessProbe).
	Probe func(ctx context.Context, run StepRun) (*results.Summary, error)
	// CoolDownMax bounds each cool-down (0: DefaultCoolDownMax; negative:
	// no cool-downs, no re-check).
	CoolDownMax time.Duration
	// StopNow is each in-process run's workload.Options.StopNow (a second
	// Ctrl-C cuts its sessions' closes); nil: none.
	StopNow context.Context
}

// Cool-downs. A step may leave the server slow (queues draining, a
// garbage collector catching up, a pool grown) — a failed step, and a
// passing one near the knee too — and the next step would measure that,
// not its own load. So before the sweep's first step a probe at a low
// load (ProbeLoad, ProbeDuration) measures the server's baseline p50,
// and between every two steps probes run one after the other until
// one's p50 is back to max(1.5 × baseline, baseline + 1 ms), at most
// CoolDownMax. A server that recovered at once settles on the first
// probe, so a cool-down costs one probe (ProbeDuration) per step. The
// baseline is warmed by step 1: a first probe can be cold (connections,
// caches, a JIT), so when step 1 passes with a lower p50 than the probe
// — at a higher load, which a warm server answers no faster than a low
// one — its p50 is the baseline instead (Sweep.ProbeFirstP50MS keeps
// the probe's own). The cool-down is recorded on the next step
// (SweepStep.CoolDown) and counted in the verdict. After the main series ends above the highest
// passing load, that load is re-run once (a re-check, after its
// cool-down): a failure is hysteresis (SweepVerdict.Hysteresis).
const (
	DefaultCoolDownMax = 30 * time.Second
	ProbeDuration      = time.Second
)

// ProbeLoad is the load a cool-down probe offers: a tenth of the sweep's
// lowest rate (at least 1/s) for a rate sweep, one VU or one session
// otherwise.
func ProbeLoad(spec profile.SweepSpec) float64 {
	if spec.By == results.SweepByRate {
		return max(1, math.Round(spec.From/10))
	}
	return 1
}

// StepRun is one run of a sweep step: what Options.RunStep runs.
type StepRun struct {
	N      int            // the step's number, 1-based
	Value  float64        // its load: ops/s, VUs or sessions (the sweep's by)
	Repeat int            // which run of the step, 1-based (--repeat)
	Plan   *workload.Plan // the step's plan: StepProfile(N, Value), compiled
	Dir    string         // the run's results directory (…/step-NN, …/step-NN-rK)
	// Settle: a sessions sweep, whose memory per session reads the
	// generator's memory settled (workload.Options.SettleMemory).
	Settle bool
}

// Run runs a profile's sweep: one run per step, each judged against the
// SLO; it stops once a step is clearly past the knee (unless KeepGoing)
// or when ctx ends, keeping every finished step. The returned sweep is
// also in Dir/sweep.json.
func Run(ctx context.Context, p *profile.Profile, opts Options) (*results.Sweep, error) {
	if p.Sweep == nil {
		return nil, errors.New("profile has no sweep section")
	}
	spec := *p.Sweep
	spec.Defaults()
	if errs := spec.Validate(); len(errs) > 0 {
		return nil, &profile.ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}
	}
	slo := spec.SLO.SLO()
	target := profile.ShowURL(p.URL, os.LookupEnv)
	if opts.Embedded {
		target += " (embedded reference server)"
	}
	sr := &sweeper{p: p, spec: spec, opts: opts, sw: &results.Sweep{Tool: opts.Tool, Target: target, Profile: p.Name, Started: time.Now(),
		By: spec.By, From: spec.From, To: spec.To, Steps: spec.Steps, StepS: spec.Step.D().Seconds(), SLO: slo, Repeat: spec.Repeat}}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	sr.baseline(ctx)
	for _, v := range spec.Values() {
		stop, err := sr.step(ctx, v, false)
		if err != nil {
			return sr.sw, err
		}
		if stop || sr.sw.Verdict.StoppedEarly != "" {
			break
		}
	}
	// Re-check: the highest passing load once more, after the overload
	// above it and a cool-down.
	if lo, _, ok := edge(sr.sw.Results); ok && sr.lastFailed() && sr.coolDowns() && ctx.Err() == nil && !sr.sw.Verdict.Interrupted {
		sr.recheck = true
		stop, err := sr.step(ctx, lo, true)
		sr.recheck = false
		if err != nil {
			return sr.sw, err
		}
		if stop {
			return sr.sw, nil
		}
	}
	// Refine: bisect between the highest passing and the lowest failing
	// load above it, to whole ops/s, VUs or sessions.
	for k := 0; k < spec.Refine && ctx.Err() == nil && !sr.sw.Verdict.Interrupted; k++ {
		lo, hi, ok := edge(sr.sw.Results)
		if !ok {
			break
		}
		mid := math.Round((lo + hi) / 2)
		if mid <= lo || mid >= hi {
			break
		}
		stop, err := sr.step(ctx, mid, true)
		if err != nil {
			return sr.sw, err
		}
		if stop {
			break
		}
	}
	return sr.sw, nil
}

// sweeper is one sweep in progress; Run's goroutine owns it.
type sweeper struct {
	p     *profile.Profile
	spec  profile.SweepSpec
	opts  Options
	sw    *results.Sweep
	ran   int // steps run so far
	fails int // consecutive failed steps of the main series
	// base is the probe's p50 before the first step (ms; 0: not
	// measured, no cool-downs); recheck marks the step being run as a
	// re-check.
	base    float64
	recheck bool
}

func (sr *sweeper) coolDowns() bool { return sr.opts.CoolDownMax >= 0 && sr.base > 0 }

// lastFailed reports whether the last step run failed the SLO.
func (sr *sweeper) lastFailed() bool {
	r := sr.sw.Results
	return len(r) > 0 && !r[len(r)-1].Pass && !r[len(r)-1].Interrupted
}

// probe runs one cool-down probe and returns its p50 (ms; ok false when
// it completed no op or failed).
func (sr *sweeper) probe(ctx context.Context) (float64, bool) {
	sp := sr.stepProfile(0, ProbeLoad(sr.spec))
	sp.Name = sr.p.Name + " cool-down probe"
	sp.Duration, sp.Warmup = profile.Duration(ProbeDuration), 0
	pl, err := workload.Compile(sp, sr.opts.HTTPClient)
	if err != nil {
		return 0, false
	}
	run := StepRun{Value: ProbeLoad(sr.spec), Plan: pl}
	var sum *results.Summary
	if sr.opts.Probe != nil {
		sum, err = sr.opts.Probe(ctx, run)
	} else {
		sum, err = InProcessProbe(ctx, run, sr.opts)
	}
	if sum != nil {
		sr.sw.ProbeOps += sum.All.Count
	}
	if err != nil || sum == nil || sum.All.Count == 0 {
		return 0, false
	}
	return sum.All.Response.P50, true
}

// baseline measures the probe's p50 before the first step.
func (sr *sweeper) baseline(ctx context.Context) {
	if sr.opts.CoolDownMax < 0 {
		return
	}
	if p50, ok := sr.probe(ctx); ok {
		sr.base = max(p50, 1e-3)
		sr.sw.ProbeBaselineMS = textfmt.Round3(p50)
	}
}

// warmBaseline lowers the baseline to step 1's p50 when step 1 passed
// with a lower p50 than the (possibly cold) first probe: a load at least
// the probe's, answered faster, bounds the warm server's low-load p50
// from above.
func (sr *sweeper) warmBaseline(res results.SweepStep) {
	if len(sr.sw.Results) != 1 || !res.Pass || sr.base <= 0 || res.Latency.P50 <= 0 || res.Latency.P50 >= sr.base {
		return
	}
	sr.sw.ProbeFirstP50MS = sr.sw.ProbeBaselineMS
	sr.base = res.Latency.P50
	sr.sw.ProbeBaselineMS = textfmt.Round3(res.Latency.P50)
}

// coolDown probes until the server's p50 is back to its baseline or the
// time is up.
func (sr *sweeper) coolDown(ctx context.Context) *results.CoolDown {
	limit := cmp.Or(sr.opts.CoolDownMax, DefaultCoolDownMax)
	back := max(1.5*sr.base, sr.base+1)
	c := &results.CoolDown{Baseline: textfmt.Round3(sr.base)}
	start := time.Now()
	for ctx.Err() == nil {
		p50, ok := sr.probe(ctx)
		c.Probes++
		if ok {
			c.P50MS = textfmt.Round3(p50)
		}
		if ok && p50 <= back {
			c.Settled = true
			break
		}
		if time.Since(start)+ProbeDuration > limit || c.Probes >= int(limit/ProbeDuration) {
			break
		}
	}
	c.Seconds = textfmt.Round3(time.Since(start).Seconds())
	return c
}

// InProcessProbe runs a cool-down probe in this process: the engine,
// without a results directory.
func InProcessProbe(ctx context.Context, run StepRun, opts Options) (*results.Summary, error) {
	return workload.Run(ctx, run.Plan, workload.Options{Embedded: opts.Embedded, Tool: opts.Tool, Server: opts.Server})
}

// StepProfile is the profile step n of p's sweep runs at load v, as Run
// makes it: p with its sweep section's defaults, its load held at v for
// the step's window. A process that runs one step of a sweep (a child of
// sweep --processes) builds it here, so its step is the sweep's.
func StepProfile(p *profile.Profile, n int, v float64) (*profile.Profile, error) {
	if p.Sweep == nil {
		return nil, errors.New("profile has no sweep section")
	}
	spec := *p.Sweep
	spec.Defaults()
	if errs := spec.Validate(); len(errs) > 0 {
		return nil, &profile.ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}
	}
	return (&sweeper{p: p, spec: spec}).stepProfile(n, v), nil
}

// stepProfile is the profile of step n at load v: the sweep's profile with
// its load constant at v for the step's window.
func (sr *sweeper) stepProfile(n int, v float64) *profile.Profile {
	sp := *sr.p
	sp.Sweep = nil
	sp.Stages = nil // a step holds its load constant
	sp.Name = fmt.Sprintf("%s step %d", sr.p.Name, n)
	sp.Duration, sp.Warmup = sr.spec.Step, sr.spec.Warmup
	switch sr.spec.By {
	case results.SweepByRate:
		sp.Rate = v
		// max_vus unset (0) is sized from the step's rate by Defaults
		// when the step is compiled; only a set one is raised to vus.
		if sp.MaxVUs != 0 && sp.MaxVUs < sp.VUs {
			sp.MaxVUs = sp.VUs
		}
	case results.SweepByVUs:
		sp.Rate, sp.VUs, sp.MaxVUs = 0, int(v), int(v)
	case results.SweepBySessions:
		sp.VUs, sp.MaxVUs, sp.GETStream = int(v), int(v), true
	}
	return &sp
}

// step runs one step of load v (Repeat runs of it) and records it; it
// reports whether the sweep must stop (interrupted, no session could
// start, or an error).
func (sr *sweeper) step(ctx context.Context, v float64, refine bool) (stop bool, err error) {
	var cool *results.CoolDown
	if len(sr.sw.Results) > 0 && sr.coolDowns() && ctx.Err() == nil {
		cool = sr.coolDown(ctx)
	}
	sr.ran++
	n, slo := sr.ran, sr.sw.SLO
	var runs []stepRun
	var runErr error
	for r := 1; r <= max(1, sr.spec.Repeat); r++ {
		pl, err := workload.Compile(sr.stepProfile(n, v), sr.opts.HTTPClient)
		if err != nil {
			return true, err
		}
		dir := fmt.Sprintf("step-%02d", n)
		if r > 1 {
			dir += fmt.Sprintf("-r%d", r)
		}
		st, err := runStep(ctx, StepRun{N: n, Value: v, Repeat: r, Plan: pl, Dir: filepath.Join(sr.opts.Dir, dir), Settle: sr.spec.By == results.SweepBySessions}, sr.opts)
		st.Dir = dir
		if st.Summary != nil {
			runs = append(runs, st)
		}
		if runErr = err; err != nil || ctx.Err() != nil {
			break
		}
	}
	if len(runs) > 0 {
		sr.sw.Protocol = runs[0].Summary.Protocol
		res := sr.judgeRuns(n, v, runs)
		res.Refine, res.Recheck, res.CoolDown = refine && !sr.recheck, sr.recheck, cool
		sr.sw.Results = append(sr.sw.Results, res)
		sr.warmBaseline(res)
		if sr.opts.OnStep != nil {
			sr.opts.OnStep(res)
		}
		if !refine {
			sr.stopRule(n, res)
		}
	}
	stoppedEarly := sr.sw.Verdict.StoppedEarly
	sr.sw.Verdict = Judge(sr.sw.Results, slo)
	sr.sw.Verdict.StoppedEarly = stoppedEarly
	if ctx.Err() != nil {
		sr.sw.Verdict.Interrupted = true
		sr.sw.Verdict.StoppedEarly = fmt.Sprintf("interrupted during step %d (%s); the finished steps are kept", n, FormatLoad(v, sr.spec.By))
	}
	if werr := WriteFiles(sr.opts.Dir, sr.sw); werr != nil {
		return true, werr
	}
	if runErr != nil && !errors.Is(runErr, workload.ErrSetup) {
		return true, runErr
	}
	if runErr != nil { // no session could start: the next step will not do better
		sr.sw.Verdict.StoppedEarly = fmt.Sprintf("step %d: %v", n, runErr)
		return true, WriteFiles(sr.opts.Dir, sr.sw)
	}
	return ctx.Err() != nil, nil
}

// judgeRuns makes step n at load v of its runs (one, or Repeat): their
// numbers, pooled when repeated, the confidence intervals from every
// run's intervals, and the verdict against the SLO.
func (sr *sweeper) judgeRuns(n int, v float64, runs []stepRun) results.SweepStep {
	steps := make([]results.SweepStep, len(runs))
	for i, r := range runs {
		steps[i] = numbersOf(n, sr.spec.By, v, r.Summary, r.col.last)
		steps[i].Sessions, steps[i].Dir = r.col.sessions, r.Dir
	}
	res := steps[0]
	if len(runs) > 1 {
		res = pooled(steps, runs)
	}
	stepCIs(&res, runs)
	judgeStep(&res, sr.sw.SLO)
	return res
}

// stopRule ends the main series early (unless KeepGoing) once step n is
// clearly past the knee, or after two failed steps in a row.
func (sr *sweeper) stopRule(n int, res results.SweepStep) {
	switch {
	case res.Pass:
		sr.fails = 0
	case !sr.spec.KeepGoing && PastKnee(res, sr.sw.SLO):
		sr.sw.Verdict.StoppedEarly = fmt.Sprintf("step %d is clearly past the knee (%v)", n, res.Reasons)
	default:
		sr.fails++
		if !sr.spec.KeepGoing && sr.fails >= 2 {
			sr.sw.Verdict.StoppedEarly = fmt.Sprintf("steps %d and %d both failed the SLO", n-1, n)
		}
	}
}

// edge returns the highest passing load and the lowest failing load above
// it.
func edge(steps []results.SweepStep) (lo, hi float64, ok bool) {
	lo = -1
	for _, s := range steps {
		if s.Pass && s.Value > lo {
			lo = s.Value
		}
	}
	if lo < 0 {
		return 0, 0, false
	}
	hi = -1
	for _, s := range steps {
		if !s.Pass && !s.Interrupted && s.Value > lo && (hi < 0 || s.Value < hi) {
			hi = s.Value
		}
	}
	return lo, hi, hi > 0
}

// stepRun is one run of a step: its summary, its results directory
// (relative to the sweep's) and what its collector kept.
type stepRun struct {
	Summary *results.Summary
	Dir     string
	col     *stepCollector
}

// runStep runs one run of a step with the step's collector and its other
// sinks, by opts.RunStep or in this process.
func runStep(ctx context.Context, run StepRun, opts Options) (stepRun, error) {
	col := &stepCollector{}
	sinks := []results.Sink{col}
	if opts.Sinks != nil {
		sinks = append(sinks, opts.Sinks(run.N, run.Plan)...)
	}
	var sum *results.Summary
	var err error
	if opts.RunStep != nil {
		sum, err = opts.RunStep(ctx, run, sinks)
	} else {
		sum, err = InProcess(ctx, run, sinks, opts)
	}
	return stepRun{Summary: sum, col: col}, err
}

// InProcess runs one run of a step in this process: the engine, with the
// run's results directory (run.Dir) and sinks, and opts' target, server
// and run description; settled memory for a sessions sweep (memory per
// session is the slope of RSS over the steps: read it settled, see
// workload.Options.SettleMemory).
func InProcess(ctx context.Context, run StepRun, sinks []results.Sink, opts Options) (*results.Summary, error) {
	rd, err := results.NewResultsDir(run.Dir)
	if err != nil {
		return nil, err
	}
	var info *results.RunInfo
	if opts.RunInfo != nil {
		info = opts.RunInfo(run.Plan)
	}
	sum, err := workload.Run(ctx, run.Plan, workload.Options{Embedded: opts.Embedded, Tool: opts.Tool, TargetPID: opts.TargetPID,
		Server: opts.Server, RunInfo: info, Sinks: append([]results.Sink{rd}, sinks...), SettleMemory: run.Settle,
		StopNow: opts.StopNow})
	if err == nil {
		err = rd.Err()
	}
	return sum, err
}
