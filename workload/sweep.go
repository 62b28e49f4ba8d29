package workload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpbench/mcpbench/metrics"
)

// SweepSpec is a profile's sweep: section: the load stepped from From to
// To in Steps equal steps, each run for Step after its own Warmup.
type SweepSpec struct {
	// By: rate (arrival rate, ops/s; the default), vus (closed-model VUs)
	// or sessions (concurrent sessions, each holding a GET stream, with
	// ops at the profile's rate).
	By    string  `yaml:"by"`
	From  float64 `yaml:"from"`
	To    float64 `yaml:"to"`
	Steps int     `yaml:"steps"` // ≥ 2
	// Step is each step's measured time (default 15 s); Warmup runs before
	// it (default 3 s).
	Step   Duration `yaml:"step"`
	Warmup Duration `yaml:"warmup"`
	SLO    SLOSpec  `yaml:"slo"`
	// KeepGoing runs every step, even past the knee.
	KeepGoing bool `yaml:"keep_going"`
	// Refine adds up to this many steps after the ladder, each bisecting
	// between the highest passing and the lowest failing load, so the
	// maximum sustainable rate is found to a finer grain than the ladder's
	// (default 3; -1 disables).
	Refine int `yaml:"refine"`
}

// SLOSpec is the service level a step must meet.
type SLOSpec struct {
	P99         Duration `yaml:"p99"`          // response-time p99 of all ops (default 50 ms)
	ErrorRate   *float64 `yaml:"error_rate"`   // % (default 1)
	ReplayClean *bool    `yaml:"replay_clean"` // no faulty stream (default true)
}

// slo returns the SLO with its defaults.
func (s SLOSpec) slo() metrics.SLO {
	out := metrics.SLO{P99MS: 50, ErrorRate: 1, ReplayClean: true}
	if s.P99 > 0 {
		out.P99MS = float64(s.P99.D()) / float64(time.Millisecond)
	}
	if s.ErrorRate != nil {
		out.ErrorRate = *s.ErrorRate
	}
	if s.ReplayClean != nil {
		out.ReplayClean = *s.ReplayClean
	}
	return out
}

func (s *SweepSpec) defaults() {
	if s.By == "" {
		s.By = "rate"
	}
	if s.Step == 0 {
		s.Step = Duration(15 * time.Second)
	}
	if s.Warmup == 0 {
		s.Warmup = Duration(3 * time.Second)
	}
	if s.Refine == 0 {
		s.Refine = 3
	}
}

// validate reports the sweep section's problems.
func (s *SweepSpec) validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("sweep."+format, args...)) }
	switch s.By {
	case "rate", "vus", "sessions":
	default:
		add("by: %q, want rate, vus or sessions", s.By)
	}
	if s.From <= 0 || s.To <= 0 {
		add("from, to: want > 0 (got %g, %g)", s.From, s.To)
	}
	if s.Steps < 2 {
		add("steps: %d, want at least 2", s.Steps)
	}
	if s.Step < 0 || s.Warmup < 0 {
		add("step, warmup: want ≥ 0")
	}
	if s.SLO.P99 < 0 || (s.SLO.ErrorRate != nil && *s.SLO.ErrorRate < 0) {
		add("slo: want p99 and error_rate ≥ 0")
	}
	return errs
}

// Values returns the load of each step: From to To in equal steps
// (rounded to whole VUs or sessions).
func (s *SweepSpec) Values() []float64 {
	out := make([]float64, s.Steps)
	for i := range out {
		v := s.From + (s.To-s.From)*float64(i)/float64(s.Steps-1)
		if s.By != "rate" {
			v = float64(int(v + 0.5))
		} else {
			v = float64(int(v*1000+0.5)) / 1000
		}
		out[i] = v
	}
	return out
}

// SweepOptions configure RunSweep.
type SweepOptions struct {
	// Dir receives one results directory per step (step-01 …) and
	// sweep.json and sweep.csv, rewritten after each step.
	Dir string
	// HTTPClient is shared by every step (nil: the driver's default).
	HTTPClient *http.Client
	Embedded   bool
	Tool       string
	TargetPID  int
	// RunInfo describes a step's run for its run.json.
	RunInfo func(pl *Plan, protocol string) *metrics.RunInfo
	// OnInterval and OnStep report progress (from the engine's collector
	// goroutine, and between steps).
	OnInterval func(step int, p Progress)
	OnStep     func(st metrics.SweepStep)
}

// RunSweep runs a profile's sweep: one run per step, each judged against
// the SLO; it stops once a step is clearly past the knee (unless
// KeepGoing) or when ctx ends, keeping every finished step. The returned
// sweep is also in Dir/sweep.json.
func RunSweep(ctx context.Context, p *Profile, opts SweepOptions) (*metrics.Sweep, error) {
	if p.Sweep == nil {
		return nil, errors.New("profile has no sweep section")
	}
	spec := *p.Sweep
	spec.defaults()
	if errs := spec.validate(); len(errs) > 0 {
		return nil, &ProfileError{Source: cmp.Or(p.Source, p.Name), Errs: errs}
	}
	slo := spec.SLO.slo()
	sw := &metrics.Sweep{Tool: opts.Tool, Target: ShowURL(p.URL, os.LookupEnv), Profile: p.Name, Started: time.Now(), By: spec.By, From: spec.From, To: spec.To,
		Steps: spec.Steps, StepS: spec.Step.D().Seconds(), SLO: slo}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	var fails int
	ran := 0
	// step runs one step of load v and records it; it reports whether the
	// sweep must stop (interrupted, or an error).
	step := func(v float64, refine bool) (stop bool, err error) {
		ran++
		n := ran
		sp := *p
		sp.Sweep = nil
		sp.Name = fmt.Sprintf("%s step %d", p.Name, n)
		sp.Duration, sp.Warmup = spec.Step, spec.Warmup
		switch spec.By {
		case "rate":
			sp.Rate = v
			if sp.MaxVUs < sp.VUs {
				sp.MaxVUs = sp.VUs
			}
		case "vus":
			sp.Rate, sp.VUs, sp.MaxVUs = 0, int(v), int(v)
		case "sessions":
			sp.VUs, sp.MaxVUs, sp.GETStream = int(v), int(v), true
		}
		pl, err := Compile(&sp, opts.HTTPClient)
		if err != nil {
			return true, err
		}
		dir := fmt.Sprintf("step-%02d", n)
		st, runErr := runStep(ctx, pl, filepath.Join(opts.Dir, dir), n, opts)
		if st.Summary != nil {
			sw.Protocol = st.Summary.Protocol
			res := metrics.StepOf(n, spec.By, v, st.Summary, st.Last, slo)
			res.Dir, res.Refine = dir, refine
			res.Sessions = st.Sessions
			sw.Results = append(sw.Results, res)
			if opts.OnStep != nil {
				opts.OnStep(res)
			}
			if !refine {
				switch {
				case res.Pass:
					fails = 0
				case !spec.KeepGoing && metrics.PastKnee(res, slo):
					sw.Verdict.StoppedEarly = fmt.Sprintf("step %d is clearly past the knee (%v)", n, res.Reasons)
				default:
					fails++
					if !spec.KeepGoing && fails >= 2 {
						sw.Verdict.StoppedEarly = fmt.Sprintf("steps %d and %d both failed the SLO", n-1, n)
					}
				}
			}
		}
		stoppedEarly := sw.Verdict.StoppedEarly
		sw.Verdict = metrics.Judge(sw.Results, slo)
		sw.Verdict.StoppedEarly = stoppedEarly
		if ctx.Err() != nil {
			sw.Verdict.Interrupted = true
			sw.Verdict.StoppedEarly = fmt.Sprintf("interrupted during step %d (%s); the finished steps are kept", n, metrics.FormatLoad(v, spec.By))
		}
		if werr := metrics.WriteSweepFiles(opts.Dir, sw); werr != nil {
			return true, werr
		}
		if runErr != nil && !errors.Is(runErr, ErrSetup) {
			return true, runErr
		}
		if runErr != nil { // no session could start: the next step will not do better
			sw.Verdict.StoppedEarly = fmt.Sprintf("step %d: %v", n, runErr)
			metrics.WriteSweepFiles(opts.Dir, sw)
			return true, nil
		}
		return ctx.Err() != nil, nil
	}
	for _, v := range spec.Values() {
		stop, err := step(v, false)
		if err != nil {
			return sw, err
		}
		if stop || sw.Verdict.StoppedEarly != "" {
			break
		}
	}
	// Refine: bisect between the highest passing and the lowest failing
	// load above it.
	for k := 0; k < spec.Refine && ctx.Err() == nil && !sw.Verdict.Interrupted; k++ {
		lo, hi, ok := edge(sw.Results)
		if !ok {
			break
		}
		mid := (lo + hi) / 2
		if spec.By != "rate" {
			mid = float64(int(mid + 0.5))
		} else {
			mid = float64(int(mid + 0.5))
		}
		if mid <= lo || mid >= hi {
			break
		}
		stop, err := step(mid, true)
		if err != nil {
			return sw, err
		}
		if stop {
			break
		}
	}
	return sw, nil
}

// edge returns the highest passing load and the lowest failing load above
// it.
func edge(steps []metrics.SweepStep) (lo, hi float64, ok bool) {
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

type stepRun struct {
	Summary *metrics.Summary
	Last    *metrics.Row // the last measured interval
	// Sessions is the most sessions open at once in a measured interval
	// (the last row may be sampled as the window closes them).
	Sessions int64
}

// runStep runs one step into its results directory.
func runStep(ctx context.Context, pl *Plan, dir string, n int, opts SweepOptions) (stepRun, error) {
	var out stepRun
	rec := metrics.NewRecorder(pl.Names, pl.Profile.MaxVUs)
	var rw *metrics.ResultsWriter
	var rwErr error
	info := func(proto string) *metrics.RunInfo {
		if opts.RunInfo != nil {
			return opts.RunInfo(pl, proto)
		}
		return &metrics.RunInfo{Tool: "mcpbench", Target: pl.Target, Profile: pl.Profile.Name, ProtocolNegotiated: proto}
	}
	sum, err := Run(ctx, pl, Options{
		Recorder:  rec,
		Embedded:  opts.Embedded,
		Tool:      opts.Tool,
		TargetPID: opts.TargetPID,
		OnStart: func(t0 time.Time, proto string) {
			rw, rwErr = metrics.NewResultsWriter(dir, pl.Names, t0, info(proto))
		},
		OnInterval: func(p Progress) {
			if p.Phase == "measure" {
				row := p.Row
				out.Last = &row
				out.Sessions = max(out.Sessions, row.Sessions)
			}
			if rw != nil {
				rw.Interval(p.Interval, p.Row, p.Phase)
			}
			if opts.OnInterval != nil {
				opts.OnInterval(n, p)
			}
		},
	})
	out.Summary = sum
	if sum != nil {
		if rw == nil && rwErr == nil {
			rw, rwErr = metrics.NewResultsWriter(dir, pl.Names, time.Now(), info(sum.Protocol))
		}
		if rwErr == nil {
			offs, faulty := rec.Offenders()
			rwErr = rw.Close(sum, offs, faulty)
		}
	}
	if err == nil {
		err = rwErr
	}
	return out, err
}
