package results

import (
	"path/filepath"
	"strconv"
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

// ConfidenceLevel is the level of every confidence interval a sweep
// reports: 95 %.
const ConfidenceLevel = 0.95

// CI is a confidence interval (ConfidenceLevel), in the unit of the value
// it bounds.
type CI struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Contains reports whether v lies in the interval (bounds included).
func (c *CI) Contains(v float64) bool { return c != nil && c.Lo <= v && v <= c.Hi }

// SweepRepeat is one run of a step repeated with --repeat.
type SweepRepeat struct {
	Dir       string  `json:"dir"`
	Achieved  float64 `json:"achieved_rate"`
	Count     int64   `json:"count"`
	Errors    int64   `json:"errors"`
	P99       float64 `json:"p99_ms"`
	DurationS float64 `json:"duration_s"`
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

	// P99CI is the confidence interval of Latency.P99 (ms) and ErrorRateCI
	// that of ErrorRate (0..1), by the block bootstrap over the step's
	// one-second intervals (every repeat's); nil with fewer than 5
	// intervals. Intervals is how many measured intervals they come from.
	P99CI       *CI `json:"p99_ci_ms,omitempty"`
	ErrorRateCI *CI `json:"error_rate_ci,omitempty"`
	Intervals   int `json:"intervals,omitempty"`
	// Marginal: the SLO's p99 or error rate lies inside the step's
	// interval, so a re-run could judge the step the other way.
	Marginal bool `json:"marginal,omitempty"`
	// Repeats are the step's runs with --repeat K (nil for one run); the
	// step's numbers pool them (counts added, percentiles of the merged
	// histograms).
	Repeats []SweepRepeat `json:"repeats,omitempty"`

	GenCores float64 `json:"generator_cores"`
	GenCPUOp float64 `json:"generator_cpu_us_per_op"`
	GenRSSMB float64 `json:"generator_rss_mb"` // while the step's sessions were open
	TgtCores float64 `json:"target_cores,omitempty"`
	TgtCPUOp float64 `json:"target_cpu_us_per_op,omitempty"`
	TgtRSSMB float64 `json:"target_rss_mb,omitempty"`
	TgtFDs   int     `json:"target_fds,omitempty"`
	Warning  string  `json:"generator_warning,omitempty"`
	// Warnings are the step run's warnings (its summary's: id, the
	// numbers seen, cause, remedy; a repeated step's, each run's, its text
	// prefixed "run K: "), NotApplicable the features it could not apply.
	// The sweep's reports print them (report.BuildSweep).
	Warnings      []Warning       `json:"warnings,omitempty"`
	NotApplicable []NotApplicable `json:"not_applicable,omitempty"`

	Pass        bool     `json:"pass"`
	Reasons     []string `json:"reasons,omitempty"` // why the step failed the SLO
	Interrupted bool     `json:"interrupted,omitempty"`
	// Refine marks a step added after the ladder to bisect between the
	// highest passing and the lowest failing load.
	Refine bool `json:"refine,omitempty"`
	// Recheck marks a re-run of the highest passing load after an
	// overload (and a cool-down): if it fails, the server did not recover
	// (hysteresis; SweepVerdict.Hysteresis).
	Recheck bool `json:"recheck,omitempty"`
	// CoolDown is the cool-down run before this step (nil: none; one is
	// run between every two steps).
	CoolDown *CoolDown `json:"cool_down,omitempty"`
}

// CoolDown is a wait between sweep steps after an overload: probes at a
// low load, one after the other, until the probe's p50 is back to its
// baseline (measured before the first step) or the time is up.
type CoolDown struct {
	Probes   int     `json:"probes"`  // probes run
	Seconds  float64 `json:"seconds"` // time spent
	P50MS    float64 `json:"p50_ms"`  // the last probe's p50
	Baseline float64 `json:"baseline_p50_ms"`
	Settled  bool    `json:"settled"` // the last probe was back to the baseline
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
	// Crossing is where the SLO is crossed, as the bracket the steps
	// measured: the highest passing load and the lowest failing load
	// above it (bisect steps inside it narrow it); nil when no step
	// above the highest passing one failed. Any load inside is as
	// consistent with the data as any other: no interpolation.
	Crossing *Bracket `json:"slo_crossing,omitempty"`
	// NonMonotone names the steps that achieved less than a step at a
	// lower load (by more than 2 %); each lowers the confidence.
	NonMonotone []string `json:"non_monotone,omitempty"`
	// Hysteresis says the re-check of the highest passing load after an
	// overload failed: the server did not recover ("" when it passed or
	// was not run).
	Hysteresis string `json:"hysteresis,omitempty"`
	// CoolDowns counts the cool-downs run, CoolDownS their time in all,
	// Unsettled those that ran out of time before the probe was back to
	// its baseline.
	CoolDowns int     `json:"cool_downs,omitempty"`
	CoolDownS float64 `json:"cool_down_s,omitempty"`
	Unsettled int     `json:"cool_downs_unsettled,omitempty"`
	// Knee is the load (ops/s, VUs or sessions) where p99 departs from
	// its low-load baseline: where the isotonic fit of p99 against load
	// reaches KneeThreshold, max(2 × KneeBaseline, KneeBaseline + max(1 ms,
	// SLO p99 / 10)), interpolated between steps (sweep/knee.go has the
	// method and its sources); 0: no knee in the range. It is never above
	// MaxLoad (KneeCapped says it was put there), and KneeRate, the
	// achieved rate there, never above MaxSustainable. KneeStep is the
	// last step at or below it.
	Knee          float64 `json:"knee"`
	KneeStep      int     `json:"knee_step"`
	KneeRate      float64 `json:"knee_rate,omitempty"`
	KneeCI        *CI     `json:"knee_ci,omitempty"` // where the p99 band crosses the threshold, capped like Knee
	KneeBaseline  float64 `json:"knee_baseline_p99_ms,omitempty"`
	KneeThreshold float64 `json:"knee_threshold_p99_ms,omitempty"`
	KneeCapped    bool    `json:"knee_capped,omitempty"`
	// Confidence says in words how sure the verdict is: whether the
	// SLO lies inside the interval of the step that decides the maximum
	// sustainable rate.
	Confidence string `json:"confidence,omitempty"`
	// Per-session memory (sessions sweeps): the slope of RSS against open
	// sessions across steps, KiB per session.
	TargetKiBPerSession    float64 `json:"target_kib_per_session,omitempty"`
	GeneratorKiBPerSession float64 `json:"generator_kib_per_session,omitempty"`
	// TargetMeasured says the target's RSS was sampled (--target-pid):
	// without it TargetKiBPerSession is not measured, not 0.
	TargetMeasured bool `json:"target_measured,omitempty"`
	// The fits' RSS at zero sessions (MB), so a chart can draw the lines.
	TargetRSSAtZeroMB    float64 `json:"target_rss_at_zero_mb,omitempty"`
	GeneratorRSSAtZeroMB float64 `json:"generator_rss_at_zero_mb,omitempty"`
	StoppedEarly         string  `json:"stopped_early,omitempty"` // why the sweep stopped before its last step
	Interrupted          bool    `json:"interrupted,omitempty"`
}

// Bracket is the load range the SLO is crossed in: Lo passed (step
// LoStep), Hi failed (step HiStep).
type Bracket struct {
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	LoStep int     `json:"lo_step"`
	HiStep int     `json:"hi_step"`
}

// TargetMemoryMeasured reports whether the target's memory per session
// was measured (sweep.json files written before TargetMeasured existed
// carry a slope only when it was).
func (v *SweepVerdict) TargetMemoryMeasured() bool {
	return v.TargetMeasured || v.TargetKiBPerSession != 0
}

// TargetKiBText is the target's memory per session for a line of text:
// "12.3 KiB", or "not measured (no --target-pid)".
func (v *SweepVerdict) TargetKiBText() string {
	if !v.TargetMemoryMeasured() {
		return "not measured (no --target-pid)"
	}
	return strconv.FormatFloat(v.TargetKiBPerSession, 'f', 1, 64) + " KiB"
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
	Repeat   int          `json:"repeat,omitempty"` // runs per step (--repeat; 0 and 1: one)
	SLO      SLO          `json:"slo"`
	Results  []SweepStep  `json:"results"`
	Verdict  SweepVerdict `json:"verdict"`
	// ProbeBaselineMS is the cool-downs' baseline: the probe's p50 before
	// the first step, or step 1's when it passed with a lower one (0: not
	// measured, no cool-downs); ProbeOps counts the ops every
	// probe completed (the baseline's and the cool-downs'), which no step
	// counts.
	ProbeBaselineMS float64 `json:"probe_baseline_p50_ms,omitempty"`
	// ProbeFirstP50MS is the first probe's own p50 when step 1 passed
	// faster and its p50 became the baseline (0: the probe's p50 is).
	ProbeFirstP50MS float64 `json:"probe_first_p50_ms,omitempty"`
	ProbeOps        int64   `json:"probe_ops,omitempty"`
}

// ReadSweep reads sweep.json from dir.
func ReadSweep(dir string) (*Sweep, error) {
	var sw *Sweep
	if err := readJSON(filepath.Join(dir, "sweep.json"), &sw); err != nil {
		return nil, err
	}
	return sw, nil
}

// KneeRule says in words which threshold the knee used: "twice its
// low-load baseline of 3.100 ms" or, when the floor was larger, "its
// low-load baseline of 0.400 ms + 5.00 ms".
func (v SweepVerdict) KneeRule() string {
	ms := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	if v.KneeThreshold <= 2*v.KneeBaseline+1e-9 {
		return "twice its low-load baseline of " + ms(v.KneeBaseline) + " ms"
	}
	return "its low-load baseline of " + ms(v.KneeBaseline) + " ms + " + ms(v.KneeThreshold-v.KneeBaseline) + " ms (the larger of 1 ms and a tenth of the SLO's p99)"
}

// A sweep's warnings: stable ids (docs/troubleshooting.md has a section
// for each) and their remedies, printed with the verdict's lines.
const (
	WarnSweepNonMonotone   = "W-SWEEP-NONMONOTONE"
	RemedySweepNonMonotone = "longer steps (--step) or --repeat 3 tell noise from a server whose throughput falls under more load (it collapses past its knee: the lower load is its capacity) (docs/troubleshooting.md#w-sweep-nonmonotone)"
	WarnSweepHysteresis    = "W-SWEEP-HYSTERESIS"
	RemedySweepHysteresis  = "the server stays slow after an overload (queues, pools, a collector behind): find what does not drain; until then plan with less than the re-checked load (docs/troubleshooting.md#w-sweep-hysteresis)"
	WarnSweepCoolDown      = "W-SWEEP-COOLDOWN"
	RemedySweepCoolDown    = "the server needed longer than the cool-down's bound to recover, so the steps after it measured a server still recovering: check its recovery, or sweep to a lower --to (docs/troubleshooting.md#w-sweep-cooldown)"
)

// RemedyNonMonotone, RemedyHysteresis and RemedyCoolDown give the
// remedies to a template that holds the verdict.
func (SweepVerdict) RemedyNonMonotone() string { return RemedySweepNonMonotone }
func (SweepVerdict) RemedyHysteresis() string  { return RemedySweepHysteresis }
func (SweepVerdict) RemedyCoolDown() string    { return RemedySweepCoolDown }
