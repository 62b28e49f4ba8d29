package verdict

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// SweepRow is one figure of two sweeps side by side, with its 95 %
// intervals when the sweeps have them.
type SweepRow struct {
	Name     string      `json:"name"` // max_sustainable_rate, max_load, slo_crossing, knee, knee_rate, …, or "p99 at LOAD"
	Unit     string      `json:"unit"` // ops/s, VUs, sessions, ms, KiB
	A        float64     `json:"a"`
	B        float64     `json:"b"`
	ACI      *results.CI `json:"a_ci,omitempty"`
	BCI      *results.CI `json:"b_ci,omitempty"`
	InA, InB bool        `json:"-"`
	Abs      float64     `json:"abs"`      // B − A
	Rel      float64     `json:"relative"` // (B − A) / A; 0 when A is 0
	// Beyond says the difference is beyond the noise: both intervals
	// known and not overlapping (nil: no intervals to judge by).
	Beyond *bool `json:"beyond_noise,omitempty"`
	// Bracket: ACI and BCI are the SLO's brackets (highest passing,
	// lowest failing load), not confidence intervals.
	Bracket bool `json:"bracket,omitempty"`
	// Why says what the noise verdict (or its absence) rests on, e.g.
	// "at 600 ops/s A passed and B failed, their p99 intervals apart",
	// "B's confidence is low"; "" for a plain interval comparison.
	Why string `json:"why,omitempty"`
}

// SweepComparison is two sweeps' verdicts and common steps side by side.
type SweepComparison struct {
	// NotLikeForLike: what the sweeps differ in (compared anyway:
	// --force).
	NotLikeForLike []Mismatch `json:"not_like_for_like,omitempty"`
	Verdict        []SweepRow `json:"verdict"`
	Steps          []SweepRow `json:"steps"` // p99 at each load both swept
}

// CompareSweeps lines up two sweeps: the maximum sustainable rate, the
// highest load under the SLO and the SLO crossing with the brackets the
// steps measured (highest passing, lowest failing load), the knee with
// its interval, the knee's rate, memory per session; then the p99 (with
// its step's interval) at each load both ran. A difference is beyond the
// noise when the two intervals (or brackets) do not overlap (a
// conservative test: two non-overlapping 95 % intervals differ at well
// under 5 %; two brackets that do not overlap cannot hold the same
// crossing). A figure without an interval or bracket is not judged.
//
// The bracket figures (max_sustainable_rate, max_load, slo_crossing) are
// judged from the steps' intervals where both sweeps measured the same
// load (re-checks and interrupted steps left out; see bracketNoise): a
// bracket is not a confidence interval, so brackets apart are not by
// themselves beyond the noise. When either sweep's confidence is low
// (non-monotone steps, hysteresis, an unsettled cool-down: its steps
// depend on what ran before them), no verdict figure is judged and Why
// says whose.
func CompareSweeps(a, b *results.Sweep) SweepComparison {
	unit := results.SweepLoadUnit(a.By)
	va, vb := a.Verdict, b.Verdict
	var c SweepComparison
	add := func(rows *[]SweepRow, name, unit string, x, y float64, xc, yc *results.CI, inA, inB bool) {
		r := SweepRow{Name: name, Unit: unit, A: x, B: y, ACI: xc, BCI: yc, InA: inA, InB: inB}
		if inA && inB {
			r.Abs = y - x
			if x != 0 {
				r.Rel = r.Abs / x
			}
			if xc != nil && yc != nil {
				beyond := xc.Hi < yc.Lo || yc.Hi < xc.Lo
				r.Beyond = &beyond
			}
		}
		*rows = append(*rows, r)
	}
	bracket := func(b *results.Bracket) *results.CI {
		if b == nil {
			return nil
		}
		return &results.CI{Lo: b.Lo, Hi: b.Hi}
	}
	lo := func(b *results.Bracket) float64 {
		if b == nil {
			return 0
		}
		return b.Lo
	}
	add(&c.Verdict, "max_sustainable_rate", "ops/s", va.MaxSustainable, vb.MaxSustainable, nil, nil, true, true)
	add(&c.Verdict, "max_load", unit, va.MaxLoad, vb.MaxLoad, bracket(va.Crossing), bracket(vb.Crossing), true, true)
	c.Verdict[len(c.Verdict)-1].Bracket = true
	add(&c.Verdict, "slo_crossing", unit, lo(va.Crossing), lo(vb.Crossing), bracket(va.Crossing), bracket(vb.Crossing), va.Crossing != nil, vb.Crossing != nil)
	c.Verdict[len(c.Verdict)-1].Bracket = true
	add(&c.Verdict, "knee", unit, va.Knee, vb.Knee, va.KneeCI, vb.KneeCI, va.KneeStep > 0, vb.KneeStep > 0)
	add(&c.Verdict, "knee_rate", "ops/s", va.KneeRate, vb.KneeRate, nil, nil, va.KneeStep > 0, vb.KneeStep > 0)
	if va.TargetMemoryMeasured() || vb.TargetMemoryMeasured() {
		// A sweep without --target-pid did not measure it: not 0.
		add(&c.Verdict, "target_kib_per_session", "KiB", va.TargetKiBPerSession, vb.TargetKiBPerSession, nil, nil, va.TargetMemoryMeasured(), vb.TargetMemoryMeasured())
	}
	if va.GeneratorKiBPerSession != 0 || vb.GeneratorKiBPerSession != 0 {
		add(&c.Verdict, "generator_kib_per_session", "KiB", va.GeneratorKiBPerSession, vb.GeneratorKiBPerSession, nil, nil, true, true)
	}
	steps := func(sw *results.Sweep) map[float64]results.SweepStep {
		m := map[float64]results.SweepStep{}
		for _, s := range sw.Results {
			if !s.Interrupted && !s.Recheck {
				m[s.Value] = s
			}
		}
		return m
	}
	sa, sb := steps(a), steps(b)
	var loads []float64
	for v := range sa {
		if _, ok := sb[v]; ok {
			loads = append(loads, v)
		}
	}
	slices.Sort(loads)
	for _, v := range loads {
		x, y := sa[v], sb[v]
		add(&c.Steps, "p99 at "+textfmt.Num(v)+" "+unit, "ms", x.Latency.P99, y.Latency.P99, x.P99CI, y.P99CI, true, true)
	}
	beyond, why := bracketNoise(sa, sb, loads, va.Crossing, vb.Crossing, unit)
	low := lowConfidence(va.Confidence, vb.Confidence)
	for i := range c.Verdict {
		r := &c.Verdict[i]
		if !r.InA || !r.InB {
			continue
		}
		switch {
		case low != "":
			r.Beyond, r.Why = nil, low
		case r.Name == "max_sustainable_rate" || r.Bracket:
			r.Beyond, r.Why = beyond, why
		}
	}
	return c
}

// lowConfidence names the sweeps whose confidence is low ("A's
// confidence is low", "A's and B's …"); "" when neither's is.
func lowConfidence(a, b string) string {
	la, lb := strings.HasPrefix(a, "low"), strings.HasPrefix(b, "low")
	switch {
	case la && lb:
		return "A's and B's confidence is low (their steps depend on what ran before them)"
	case la:
		return "A's confidence is low (its steps depend on what ran before them)"
	case lb:
		return "B's confidence is low (its steps depend on what ran before them)"
	}
	return ""
}

// bracketNoise judges whether two sweeps' SLO brackets differ beyond the
// noise, from the steps both measured at the same load (loads, sorted):
// beyond when at one such load one sweep passed and the other failed
// and their p99 intervals do not overlap (the first such load is
// named); within when no such load exists among the loads with
// intervals on both sides, or the brackets overlap (the data cannot
// tell the crossings apart); not judged (nil) when the brackets are
// apart and no load both measured has intervals on both sides.
func bracketNoise(sa, sb map[float64]results.SweepStep, loads []float64, ba, bb *results.Bracket, unit string) (*bool, string) {
	t, f := true, false
	judged := 0
	for _, v := range loads {
		x, y := sa[v], sb[v]
		if x.P99CI == nil || y.P99CI == nil {
			continue
		}
		judged++
		if x.Pass != y.Pass && (x.P99CI.Hi < y.P99CI.Lo || y.P99CI.Hi < x.P99CI.Lo) {
			word := map[bool]string{true: "passed", false: "failed"}
			return &t, fmt.Sprintf("at %s %s A %s and B %s, their p99 intervals apart", textfmt.Num(v), unit, word[x.Pass], word[y.Pass])
		}
	}
	overlap := ba != nil && bb != nil && ba.Lo <= bb.Hi && bb.Lo <= ba.Hi
	switch {
	case judged > 0:
		return &f, fmt.Sprintf("at the %d load(s) both measured with intervals, the steps agree or their p99 intervals overlap", judged)
	case overlap:
		return &f, "brackets overlap"
	case ba != nil && bb != nil:
		return nil, "brackets apart, but no load both sweeps measured has p99 intervals to tell them apart (a bracket is not a confidence interval)"
	}
	return nil, "no interval"
}

// SweepLimit is a --fail-if limit on two sweeps, written like a run's
// (see Regression) on a verdict figure: max_sustainable_rate, max_load,
// slo_crossing (the lower end of the SLO's bracket: the highest load
// that passed below a failing one), knee or knee_rate, e.g.
// "max_sustainable_rate<-5%" or "knee<-200" (absolute, in the figure's
// unit).
type SweepLimit struct {
	Expr     string
	Metric   string
	Cmp      string
	Change   float64 // relative: a fraction; absolute: in the unit
	Relative bool
}

var reSweepLimit = regexp.MustCompile(`^([a-z_0-9.()]+)\s*(<|>)\s*([-+][0-9]*\.?[0-9]+)\s*(%)?$`)

// SweepLimitMetrics are the figures a sweep limit may read.
var SweepLimitMetrics = []string{"max_sustainable_rate", "max_load", "slo_crossing", "knee", "knee_rate"}

// ParseSweepLimit parses one --fail-if expression for sweeps; an unknown
// figure is an error listing the valid ones.
func ParseSweepLimit(expr string) (SweepLimit, error) {
	m := reSweepLimit.FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		return SweepLimit{}, fmt.Errorf("%s %q: want figure<-change or >+change, e.g. max_sustainable_rate<-5%%, knee<-200", setting.VerdictSweepLimit, expr)
	}
	if !slices.Contains(SweepLimitMetrics, m[1]) {
		return SweepLimit{}, fmt.Errorf("%s %q: comparing sweeps, the figures are %s", setting.VerdictSweepLimit, expr, strings.Join(SweepLimitMetrics, ", "))
	}
	v, _ := strconv.ParseFloat(m[3], 64)
	l := SweepLimit{Expr: expr, Metric: m[1], Cmp: m[2], Change: v}
	if m[4] == "%" {
		l.Relative, l.Change = true, v/100
	}
	return l, nil
}

// Evaluate checks the limit on a comparison's verdict rows.
func (l SweepLimit) Evaluate(c SweepComparison) []LimitResult {
	for _, r := range c.Verdict {
		if r.Name != l.Metric || !r.InA || !r.InB {
			continue
		}
		got := r.Abs
		if l.Relative {
			switch {
			case r.A != 0:
				got = r.Rel
			case r.B == 0:
				got = 0
			default:
				got = math.Inf(int(math.Copysign(1, r.B)))
			}
		}
		crossed := (l.Cmp == ">" && got > l.Change) || (l.Cmp == "<" && got < l.Change)
		change := textfmt.SignedValue(r.Abs, r.Unit) + " " + r.Unit
		if l.Relative {
			change = fmt.Sprintf("%+.1f%%", 100*got)
		}
		word := map[bool]string{true: "crosses", false: "within"}[crossed]
		return []LimitResult{{Op: "sweep", Pass: !crossed, Text: fmt.Sprintf("%s %s → %s (%s) %s %s", r.Name,
			textfmt.Value(r.A, r.Unit), textfmt.Value(r.B, r.Unit), change, word, l.Expr)}}
	}
	return []LimitResult{{Op: "sweep", Pass: true, Text: fmt.Sprintf("%s: not in both sweeps, not checked (%s)", l.Metric, l.Expr)}}
}
