package profile

import (
	"fmt"
	"time"

	"github.com/mcpbench/mcpbench/results"
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
	// Repeat runs each step this many times (default 1); the step's
	// numbers pool the runs and its confidence intervals resample every
	// run's intervals, so run-to-run noise is in them.
	Repeat int `yaml:"repeat"`
}

// SLOSpec is the service level a step must meet.
type SLOSpec struct {
	P99         Duration `yaml:"p99"`          // response-time p99 of all ops (default 50 ms)
	ErrorRate   *float64 `yaml:"error_rate"`   // in % (default 1); sweep.json keeps it as 0..1
	ReplayClean *bool    `yaml:"replay_clean"` // no faulty stream (default true)
}

// SLO returns the SLO with its defaults.
func (s SLOSpec) SLO() results.SLO {
	out := results.SLO{P99MS: 50, ErrorRate: 0.01, ReplayClean: true}
	if s.P99 > 0 {
		out.P99MS = float64(s.P99.D()) / float64(time.Millisecond)
	}
	if s.ErrorRate != nil {
		out.ErrorRate = *s.ErrorRate / 100
	}
	if s.ReplayClean != nil {
		out.ReplayClean = *s.ReplayClean
	}
	return out
}

// Defaults fills the documented defaults.
func (s *SweepSpec) Defaults() {
	if s.By == "" {
		s.By = results.SweepByRate
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

// Validate reports the sweep section's problems, each naming its field.
func (s *SweepSpec) Validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf("sweep."+format, args...)) }
	switch s.By {
	case results.SweepByRate, results.SweepByVUs, results.SweepBySessions:
	default:
		add("by: %q, want rate, vus or sessions", s.By)
	}
	if s.From <= 0 || s.To <= 0 {
		add("from, to: want > 0 (got %g, %g)", s.From, s.To)
	}
	if s.Steps < 2 {
		add("steps: %d, want at least 2", s.Steps)
	}
	if s.Repeat < 0 || s.Repeat > 20 {
		add("repeat: %d, want 1 to 20", s.Repeat)
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
		if s.By != results.SweepByRate {
			v = float64(int(v + 0.5))
		} else {
			v = float64(int(v*1000+0.5)) / 1000
		}
		out[i] = v
	}
	return out
}

// SoakSpec is a profile's soak: section.
type SoakSpec struct {
	// Checkpoint writes the summary so far this often (default 1 min), so
	// an hours-long run that dies keeps its figures.
	Checkpoint Duration `yaml:"checkpoint"`
}

// CheckpointEvery returns the checkpoint period with its default.
func (s *SoakSpec) CheckpointEvery() time.Duration {
	if s == nil || s.Checkpoint == 0 {
		return time.Minute
	}
	return s.Checkpoint.D()
}
