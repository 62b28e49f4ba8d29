package metrics

import (
	"path/filepath"
	"time"
)

// Sweep dimensions: what a sweep's steps raise (SweepSpec.By, Sweep.By).
const (
	SweepByRate     = "rate"     // open-model arrival rate, ops/s
	SweepByVUs      = "vus"      // closed-model VUs
	SweepBySessions = "sessions" // concurrent sessions, each holding a GET stream
)

// SweepLoadUnit names the unit of a sweep's load by its dimension:
// "ops/s" (rate, and an unknown or empty by), "VUs" or "sessions".
func SweepLoadUnit(by string) string {
	switch by {
	case SweepByVUs:
		return "VUs"
	case SweepBySessions:
		return "sessions"
	}
	return "ops/s"
}

// SLO is what a sweep step must meet to count as sustainable.
type SLO struct {
	P99MS       float64 `json:"p99_ms"`       // response-time p99 of all ops, at most
	ErrorRate   float64 `json:"error_rate"`   // errors / ops, 0..1, at most
	ReplayClean bool    `json:"replay_clean"` // no faulty stream
}

// SweepStep is one step of a sweep: the load offered and what it gave.
type SweepStep struct {
	N         int     `json:"step"`         // 1-based
	By        string  `json:"by"`           // rate, vus or sessions
	Value     float64 `json:"value"`        // the load offered: ops/s, VUs or sessions
	Dir       string  `json:"dir"`          // the step's results directory (relative)
	Offered   float64 `json:"offered_rate"` // ops/s asked for (rate sweeps)
	Achieved  float64 `json:"achieved_rate"`
	Count     int64   `json:"count"`
	Errors    int64   `json:"errors"`
	ErrorRate float64 `json:"error_rate"` // errors / ops, 0..1 (as in summary.json)
	Dropped   int64   `json:"dropped"`
	Faulty    int64   `json:"faulty_streams"`
	Latency   Latency `json:"response_time_ms"`
	Service   Latency `json:"service_time_ms"`
	Sessions  int64   `json:"sessions"` // the most open at once in a measured interval

	GenCores float64 `json:"generator_cores"`
	GenCPUOp float64 `json:"generator_cpu_us_per_op"`
	GenRSSMB float64 `json:"generator_rss_mb"` // while the step's sessions were open
	TgtCores float64 `json:"target_cores,omitempty"`
	TgtCPUOp float64 `json:"target_cpu_us_per_op,omitempty"`
	TgtRSSMB float64 `json:"target_rss_mb,omitempty"`
	TgtFDs   int     `json:"target_fds,omitempty"`
	Warning  string  `json:"generator_warning,omitempty"`

	Pass        bool     `json:"pass"`
	Reasons     []string `json:"reasons,omitempty"` // why the step failed the SLO
	Interrupted bool     `json:"interrupted,omitempty"`
	// Refine marks a step added after the ladder to bisect between the
	// highest passing and the lowest failing load.
	Refine bool `json:"refine,omitempty"`
}

// SweepVerdict is the outcome of a sweep.
type SweepVerdict struct {
	// MaxSustainable is the highest achieved rate of a step that met the
	// SLO (0: none did).
	MaxSustainable float64 `json:"max_sustainable_rate"`
	MaxStep        int     `json:"max_sustainable_step"`
	// MaxLoad is the highest offered load (ops/s, VUs or sessions, as the
	// sweep's by) of a step that met the SLO (0: none did).
	MaxLoad float64 `json:"max_load"`
	// Estimate interpolates the load at which p99 crosses the SLO between
	// the last passing step and the next one (0 when no crossing is in
	// range); it is less quantised than the step grid.
	Estimate float64 `json:"slo_crossing_estimate"`
	// Knee is the load of the last step before latency climbs steeply: the
	// next step's p99 is at least twice its own (and max(1 ms, SLO p99/10)
	// more); 0: no knee in the range.
	Knee     float64 `json:"knee"`
	KneeStep int     `json:"knee_step"`
	// Per-session memory (sessions sweeps): the slope of RSS against open
	// sessions across steps, KiB per session.
	TargetKiBPerSession    float64 `json:"target_kib_per_session,omitempty"`
	GeneratorKiBPerSession float64 `json:"generator_kib_per_session,omitempty"`
	StoppedEarly           string  `json:"stopped_early,omitempty"` // why the sweep stopped before its last step
	Interrupted            bool    `json:"interrupted,omitempty"`
}

// Sweep is sweep.json: the steps and the verdict.
type Sweep struct {
	Tool     string       `json:"tool"`
	Target   string       `json:"target"`
	Profile  string       `json:"profile"`
	Protocol string       `json:"protocol"`
	Started  time.Time    `json:"started"`
	By       string       `json:"by"`
	From     float64      `json:"from"`
	To       float64      `json:"to"`
	Steps    int          `json:"steps"`
	StepS    float64      `json:"step_s"`
	SLO      SLO          `json:"slo"`
	Results  []SweepStep  `json:"results"`
	Verdict  SweepVerdict `json:"verdict"`
}

// ReadSweep reads sweep.json from dir.
func ReadSweep(dir string) (*Sweep, error) {
	var sw *Sweep
	if err := readJSON(filepath.Join(dir, "sweep.json"), &sw); err != nil {
		return nil, err
	}
	return sw, nil
}
