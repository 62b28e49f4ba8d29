package sweep

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/metrics"
)

// WriteText prints the step table and the verdict: the maximum
// sustainable rate with the SLO crossing and its interval, the knee with
// its interval and how it was found, how sure the verdict is, and memory
// per session.
func WriteText(w io.Writer, sw *metrics.Sweep) error {
	p := &textfmt.Printer{W: w}
	unit := metrics.SweepLoadUnit(sw.By)
	p.F("mcpbench sweep  %s  ·  profile %s  ·  protocol %s\n", sw.Target, sw.Profile, sw.Protocol)
	rep := ""
	if sw.Repeat > 1 {
		rep = fmt.Sprintf(", each run %d times", sw.Repeat)
	}
	p.F("%s from %g to %g %s in %d steps of %.0f s%s; SLO: p99 ≤ %s ms, errors ≤ %.2f%%%s\n\n", sw.By, sw.From, sw.To, unit, sw.Steps, sw.StepS, rep,
		textfmt.MS(sw.SLO.P99MS), 100*sw.SLO.ErrorRate, map[bool]string{true: ", replay clean"}[sw.SLO.ReplayClean])
	p.F("%4s %10s %10s %9s %8s %9s %9s %9s %17s %9s %8s %7s %7s %8s %8s  %s\n", "step", sw.By, "achieved", "dropped", "errors%", "p50 ms", "p90 ms", "p99 ms", "p99 95% CI", "max ms", "faulty", "gen cpu", "tgt cpu", "tgt MB", "gen MB", "verdict")
	for _, s := range sw.Results {
		writeStep(p, s)
	}
	p.F("\n")
	writeVerdict(p, sw)
	return p.Err
}

// writeStep prints one row of the step table.
func writeStep(p *textfmt.Printer, s metrics.SweepStep) {
	verdict := "PASS"
	if !s.Pass {
		verdict = "FAIL " + strings.Join(s.Reasons, "; ")
	}
	if s.Interrupted {
		verdict = "INTERRUPTED"
	}
	if s.Marginal && !s.Interrupted {
		verdict += " (marginal: the SLO is inside the interval)"
	}
	tc, tm := "-", "-"
	if s.TgtRSSMB > 0 {
		tc, tm = fmt.Sprintf("%.2f", s.TgtCores), fmt.Sprintf("%.0f", s.TgtRSSMB)
	}
	n := fmt.Sprint(s.N)
	switch {
	case s.Refine:
		n += "r"
	case s.Recheck:
		n += "c"
	}
	if c := s.CoolDown; c != nil {
		settled := fmt.Sprintf("back to its baseline %s ms", textfmt.MS(c.Baseline))
		if !c.Settled {
			settled = fmt.Sprintf("not back to its baseline %s ms when the time was up", textfmt.MS(c.Baseline))
		}
		p.F("     cool-down: %d probe(s), %.1f s; probe p50 %s ms, %s\n", c.Probes, c.Seconds, textfmt.MS(c.P50MS), settled)
	}
	p.F("%4s %10s %10.1f %9d %8.2f %9s %9s %9s %17s %9s %8d %7.2f %7s %8s %8.0f  %s\n", n, load(s.Value), s.Achieved, s.Dropped, 100*s.ErrorRate,
		textfmt.MS(s.Latency.P50), textfmt.MS(s.Latency.P90), textfmt.MS(s.Latency.P99), ciMS(s.P99CI), textfmt.MS(s.Latency.Max), s.Faulty, s.GenCores, tc, tm, s.GenRSSMB, verdict)
	if len(s.Repeats) > 1 {
		var parts []string
		for _, r := range s.Repeats {
			parts = append(parts, fmt.Sprintf("%.1f ops/s p99 %s ms", r.Achieved, textfmt.MS(r.P99)))
		}
		p.F("     runs: %s\n", strings.Join(parts, " · "))
	}
	if s.Warning != "" {
		p.F("     warning: %s\n", s.Warning)
	}
}

// writeVerdict prints the verdict's lines.
func writeVerdict(p *textfmt.Printer, sw *metrics.Sweep) {
	v, unit := sw.Verdict, metrics.SweepLoadUnit(sw.By)
	if v.MaxSustainable > 0 {
		if sw.By != metrics.SweepByRate {
			p.F("Highest load under the SLO: %s %s\n", load(v.MaxLoad), unit)
		}
		p.F("Maximum sustainable rate under the SLO: %.1f ops/s (step %d)", v.MaxSustainable, v.MaxStep)
		if b := v.Crossing; b != nil {
			p.F("; the SLO is crossed between %s (step %d, passed) and %s (step %d, failed)", FormatLoad(b.Lo, sw.By), b.LoStep, FormatLoad(b.Hi, sw.By), b.HiStep)
		}
		p.F("\n")
	} else {
		p.F("Maximum sustainable rate under the SLO: none of the steps met it\n")
	}
	switch {
	case v.KneeStep > 0:
		p.F("Knee: %s %s", load(v.Knee), unit)
		if c := v.KneeCI; c != nil {
			p.F(" (95%% CI %s–%s)", load(c.Lo), load(c.Hi))
		}
		if sw.By != metrics.SweepByRate || v.KneeRate != v.Knee {
			p.F(", %.1f ops/s achieved", v.KneeRate)
		}
		p.F(": p99 reaches %s ms there, %s", textfmt.MS(v.KneeThreshold), v.KneeRule())
		if v.KneeCapped {
			p.F("; the curve's own knee lies above the highest load under the SLO, so the knee is put there")
		}
		p.F("\n")
	case v.KneeCapped:
		p.F("Knee: none under the SLO (no step met it)\n")
	case v.KneeThreshold > 0:
		p.F("Knee: none in the range (p99 stayed under %s ms, %s)\n", textfmt.MS(v.KneeThreshold), v.KneeRule())
	default:
		p.F("Knee: none in the range\n")
	}
	for _, n := range v.NonMonotone {
		p.F("Non-monotone [%s]: %s\n", metrics.WarnSweepNonMonotone, n)
	}
	if len(v.NonMonotone) > 0 {
		p.F("  remedy: %s\n", metrics.RemedySweepNonMonotone)
	}
	if v.Hysteresis != "" {
		p.F("Hysteresis [%s]: %s\n  remedy: %s\n", metrics.WarnSweepHysteresis, v.Hysteresis, metrics.RemedySweepHysteresis)
	}
	if v.CoolDowns > 0 {
		p.F("Cool-downs: %d after failed steps, %.1f s in all", v.CoolDowns, v.CoolDownS)
		if v.Unsettled > 0 {
			p.F("; [%s] %d not back to the baseline when the time was up\n  remedy: %s", metrics.WarnSweepCoolDown, v.Unsettled, metrics.RemedySweepCoolDown)
		}
		p.F("\n")
	}
	if v.Confidence != "" {
		p.F("Confidence: %s\n", v.Confidence)
	}
	if v.TargetKiBPerSession != 0 || v.GeneratorKiBPerSession != 0 {
		p.F("Memory per session: target %s, mcpbench %.1f KiB (RSS slope across steps)\n", v.TargetKiBText(), v.GeneratorKiBPerSession)
	}
	if v.StoppedEarly != "" {
		p.F("Stopped early: %s\n", v.StoppedEarly)
	}
	for _, s := range sw.Results {
		if s.Refine {
			p.F("(steps marked r bisect between the highest passing and the lowest failing load)\n")
			break
		}
	}
	for _, s := range sw.Results {
		if s.Recheck {
			p.F("(steps marked c re-check the highest passing load after an overload and a cool-down)\n")
			break
		}
	}
}

// FormatLoad formats a step's load with its unit: "1571 ops/s".
func FormatLoad(v float64, by string) string { return load(v) + " " + metrics.SweepLoadUnit(by) }

// load formats a step's load: whole numbers, or three significant
// decimals below 100.
func load(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
