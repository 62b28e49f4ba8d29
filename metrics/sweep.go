package metrics

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SLO is what a sweep step must meet to count as sustainable.
type SLO struct {
	P99MS       float64 `json:"p99_ms"`       // response-time p99 of all ops, at most
	ErrorRate   float64 `json:"error_rate"`   // errors / ops in %, at most
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
	ErrorRate float64 `json:"error_rate"` // %
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

// StepOf builds a sweep step from a step run's summary and the last
// measured interval row (which carries the process samples taken while
// the step's load and sessions were on).
func StepOf(n int, by string, value float64, s *Summary, last *Row, slo SLO) SweepStep {
	st := SweepStep{N: n, By: by, Value: value, Offered: s.TargetRate, Achieved: s.All.Rate, Count: s.All.Count,
		Errors: s.All.Errors, ErrorRate: round3(100 * s.All.ErrorRate), Dropped: s.Dropped,
		Latency: s.All.Response, Service: s.All.Service, GenCores: s.Generator.Cores, GenCPUOp: s.Generator.CPUPerOpUS,
		Warning: s.Generator.Bottleneck, Interrupted: s.Interrupted}
	if l := s.All.Ledger; l != nil {
		st.Faulty = l.Faulty
	}
	if g := s.GETStreams; g != nil && g.Ledger != nil {
		st.Faulty += g.Ledger.Faulty
	}
	if t := s.TargetProc; t != nil && t.Error == "" {
		st.TgtCores, st.TgtCPUOp = t.Cores, t.CPUPerOpUS
	}
	if last != nil {
		st.GenRSSMB, st.Sessions = last.Self.RSSMB, last.Sessions
		if last.Target != nil {
			st.TgtRSSMB, st.TgtFDs = last.Target.RSSMB, last.Target.FDs
		}
	}
	if st.Count == 0 {
		st.Reasons = append(st.Reasons, "no operation completed")
	}
	if st.Latency.P99 > slo.P99MS {
		st.Reasons = append(st.Reasons, fmt.Sprintf("p99 %s ms > %s ms", ms(st.Latency.P99), ms(slo.P99MS)))
	}
	if st.ErrorRate > slo.ErrorRate {
		st.Reasons = append(st.Reasons, fmt.Sprintf("error rate %.2f%% > %.2f%%", st.ErrorRate, slo.ErrorRate))
	}
	if slo.ReplayClean && st.Faulty > 0 {
		st.Reasons = append(st.Reasons, fmt.Sprintf("%d faulty streams", st.Faulty))
	}
	if st.Offered > 0 && st.Achieved < 0.95*st.Offered {
		st.Reasons = append(st.Reasons, fmt.Sprintf("achieved %.0f/s of %.0f/s offered", st.Achieved, st.Offered))
	}
	st.Pass = len(st.Reasons) == 0 && !st.Interrupted
	return st
}

// PastKnee reports whether a failed step is clearly past the knee, so a
// sweep may stop: p99 over 3 × the SLO, errors over 5 × the SLO, or under
// 80 % of the offered rate achieved.
func PastKnee(st SweepStep, slo SLO) bool {
	if st.Pass {
		return false
	}
	return st.Latency.P99 > 3*slo.P99MS || st.ErrorRate > 5*math.Max(slo.ErrorRate, 0.1) ||
		(st.Offered > 0 && st.Achieved < 0.8*st.Offered)
}

// Judge computes the verdict of a sweep's steps: the maximum sustainable
// rate over every passing step (refinements included), the SLO crossing
// interpolated between the highest passing load and the lowest failing
// load above it, and the knee on the main ladder.
func Judge(steps []SweepStep, slo SLO) SweepVerdict {
	var v SweepVerdict
	byLoad := slices.Clone(steps)
	slices.SortStableFunc(byLoad, func(a, b SweepStep) int { return cmpFloat(a.Value, b.Value) })
	var pass, fail *SweepStep
	for i := range byLoad {
		s := &byLoad[i]
		if s.Interrupted {
			continue
		}
		if s.Pass {
			if s.Achieved > v.MaxSustainable {
				v.MaxSustainable, v.MaxStep = round3(s.Achieved), s.N
			}
			if pass == nil || s.Value > pass.Value {
				pass, fail = s, nil
				v.MaxLoad = s.Value
			}
		} else if pass != nil && fail == nil && s.Value > pass.Value {
			fail = s
		}
	}
	if pass != nil && fail != nil {
		if fail.Latency.P99 > pass.Latency.P99 && fail.Latency.P99 > slo.P99MS && pass.Latency.P99 <= slo.P99MS {
			f := (slo.P99MS - pass.Latency.P99) / (fail.Latency.P99 - pass.Latency.P99)
			v.Estimate = round3(pass.Value + f*(fail.Value-pass.Value))
		} else {
			v.Estimate = pass.Value
		}
	}
	// The knee, on the main ladder: the step before the first one whose p99
	// at least doubles from the step before it (and rises by more than
	// max(1 ms, SLO p99 / 10)):
	// latency's growth turns steep there.
	var ladder []SweepStep
	for _, s := range steps {
		if !s.Refine && !s.Interrupted {
			ladder = append(ladder, s)
		}
	}
	// A rise smaller than a tenth of the SLO's p99 (and than 1 ms) is
	// sampling noise at these latencies, not a knee.
	minRise := max(1, slo.P99MS/10)
	for i := 1; i < len(ladder); i++ {
		prev, cur := ladder[i-1].Latency.P99, ladder[i].Latency.P99
		if cur >= 2*prev && cur > prev+minRise {
			v.Knee, v.KneeStep = ladder[i-1].Value, ladder[i-1].N
			break
		}
	}
	// Memory per session: least-squares slope of RSS (MB) on sessions.
	if len(steps) >= 2 && steps[0].By == "sessions" {
		xs := make([]float64, 0, len(steps))
		tg, gn := []float64{}, []float64{}
		for _, s := range steps {
			if s.Sessions > 0 {
				xs = append(xs, float64(s.Sessions))
				tg = append(tg, s.TgtRSSMB)
				gn = append(gn, s.GenRSSMB)
			}
		}
		if len(xs) >= 2 {
			if slices.ContainsFunc(tg, func(v float64) bool { return v > 0 }) {
				v.TargetKiBPerSession = round3(LeastSquares(xs, tg) * 1024)
			}
			v.GeneratorKiBPerSession = round3(LeastSquares(xs, gn) * 1024)
		}
	}
	return v
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// LeastSquares returns the slope of y on x.
func LeastSquares(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// WriteSweepText prints the step table and the verdict.
func WriteSweepText(w io.Writer, sw *Sweep) error {
	p := &printer{w: w}
	unit := LoadUnit(sw.By)
	p.f("mcpbench sweep  %s  ·  profile %s  ·  protocol %s\n", sw.Target, sw.Profile, sw.Protocol)
	p.f("%s from %g to %g %s in %d steps of %.0f s; SLO: p99 ≤ %s ms, errors ≤ %.2f%%%s\n\n", sw.By, sw.From, sw.To, unit, sw.Steps, sw.StepS,
		ms(sw.SLO.P99MS), sw.SLO.ErrorRate, map[bool]string{true: ", replay clean"}[sw.SLO.ReplayClean])
	p.f("%4s %10s %10s %8s %9s %9s %9s %9s %8s %7s %7s %8s %8s  %s\n", "step", sw.By, "achieved", "errors%", "p50 ms", "p90 ms", "p99 ms", "max ms", "faulty", "gen cpu", "tgt cpu", "tgt MB", "gen MB", "verdict")
	for _, s := range sw.Results {
		verdict := "PASS"
		if !s.Pass {
			verdict = "FAIL " + strings.Join(s.Reasons, "; ")
		}
		if s.Interrupted {
			verdict = "INTERRUPTED"
		}
		tc, tm := "-", "-"
		if s.TgtRSSMB > 0 {
			tc, tm = fmt.Sprintf("%.2f", s.TgtCores), fmt.Sprintf("%.0f", s.TgtRSSMB)
		}
		n := fmt.Sprint(s.N)
		if s.Refine {
			n += "r"
		}
		p.f("%4s %10s %10.1f %8.2f %9s %9s %9s %9s %8d %7.2f %7s %8s %8.0f  %s\n", n, load(s.Value), s.Achieved, s.ErrorRate,
			ms(s.Latency.P50), ms(s.Latency.P90), ms(s.Latency.P99), ms(s.Latency.Max), s.Faulty, s.GenCores, tc, tm, s.GenRSSMB, verdict)
		if s.Warning != "" {
			p.f("     warning: %s\n", s.Warning)
		}
	}
	v := sw.Verdict
	p.f("\n")
	if v.MaxSustainable > 0 {
		if sw.By != "rate" {
			p.f("Highest load under the SLO: %s %s\n", load(v.MaxLoad), unit)
		}
		p.f("Maximum sustainable rate under the SLO: %.1f ops/s (step %d)", v.MaxSustainable, v.MaxStep)
		if v.Estimate > 0 {
			p.f("; the SLO is crossed at about %.0f %s (interpolated)", v.Estimate, unit)
		}
		p.f("\n")
	} else {
		p.f("Maximum sustainable rate under the SLO: none of the steps met it\n")
	}
	if v.KneeStep > 0 {
		p.f("Knee: latency starts to climb steeply after %s %s (step %d)\n", load(v.Knee), unit, v.KneeStep)
	} else {
		p.f("Knee: none in the range (p99 never doubled, by more than %g ms, from one step to the next)\n", max(1, sw.SLO.P99MS/10))
	}
	if v.TargetKiBPerSession != 0 || v.GeneratorKiBPerSession != 0 {
		p.f("Memory per session: target %.1f KiB, mcpbench %.1f KiB (RSS slope across steps)\n", v.TargetKiBPerSession, v.GeneratorKiBPerSession)
	}
	if v.StoppedEarly != "" {
		p.f("Stopped early: %s\n", v.StoppedEarly)
	}
	for _, s := range sw.Results {
		if s.Refine {
			p.f("(steps marked r bisect between the highest passing and the lowest failing load)\n")
			break
		}
	}
	return p.err
}

// LoadUnit names the unit of a sweep's load by its by ("rate": "ops/s",
// "vus": "VUs", "sessions": "sessions").
func LoadUnit(by string) string {
	switch by {
	case "vus":
		return "VUs"
	case "sessions":
		return "sessions"
	}
	return "ops/s"
}

// FormatLoad formats a step's load with its unit: "1571 ops/s".
func FormatLoad(v float64, by string) string { return load(v) + " " + LoadUnit(by) }

// load formats a step's load: whole numbers, or three significant
// decimals below 100.
func load(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// WriteSweepFiles writes sweep.json (atomically) and sweep.csv into dir.
func WriteSweepFiles(dir string, sw *Sweep) error {
	if err := WriteJSON(filepath.Join(dir, "sweep.json"), sw); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	cw.Write([]string{"step", "by", "value", "offered_rate", "achieved_rate", "count", "errors", "error_rate", "dropped", "faulty_streams",
		"p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "max_ms", "service_p99_ms", "sessions", "generator_cores", "generator_rss_mb",
		"target_cores", "target_cpu_us_per_op", "target_rss_mb", "target_fds", "pass", "reasons"})
	for _, s := range sw.Results {
		cw.Write([]string{strconv.Itoa(s.N), s.By, f3(s.Value), f3(s.Offered), f3(s.Achieved), i64(s.Count), i64(s.Errors), f3(s.ErrorRate),
			i64(s.Dropped), i64(s.Faulty), f3(s.Latency.P50), f3(s.Latency.P90), f3(s.Latency.P99), f3(s.Latency.P999), f3(s.Latency.Max),
			f3(s.Service.P99), i64(s.Sessions), f3(s.GenCores), f3(s.GenRSSMB), f3(s.TgtCores), f3(s.TgtCPUOp), f3(s.TgtRSSMB),
			strconv.Itoa(s.TgtFDs), strconv.FormatBool(s.Pass), strings.Join(s.Reasons, "; ")})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadSweep reads sweep.json from dir.
func ReadSweep(dir string) (*Sweep, error) {
	var sw *Sweep
	if err := readJSON(filepath.Join(dir, "sweep.json"), &sw); err != nil {
		return nil, err
	}
	return sw, nil
}
