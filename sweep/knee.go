package sweep

import (
	"math"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// The knee: the load where latency departs from its low-load baseline.
//
// Method. Take the judged steps in order of load and smooth log p99 in
// two shape-preserving passes: running medians of three (Tukey's "3"
// smoother, Exploratory Data Analysis, 1977), which removes a lone
// outlier step either way and leaves a monotone run untouched, then an
// isotonic (non-decreasing) regression by pool-adjacent-violators (Ayer
// et al., Ann. Math. Statist. 26, 1955; Barlow et al., Statistical
// Inference under Order Restrictions, 1972). Latency does not fall when
// load rises, so a dip (p99 89, 100, 77 ms at rising loads) is noise and
// pooling it leaves the trend; a real rise survives. The baseline b is
// the median of the fit over the lowest third of the loads swept. The
// knee is where the fit first reaches
//
//	T = max(2·b, b + max(1 ms, SLO p99 / 10)),
//
// interpolated in log p99 between the two steps around the crossing.
//
// Why twice the baseline: for a single-server queue (M/M/1) response
// time is S/(1−ρ); it doubles at ρ = 1/2, the load that maximises
// Kleinrock's power, throughput over response time — the classic knee of
// the throughput–delay curve (L. Kleinrock, "Power and deterministic
// rules of thumb for probabilistic problems in computer communications",
// ICC 1979). The absolute floor keeps a sub-millisecond baseline from
// calling a 0.4 → 0.9 ms wobble a knee (the old step-to-step doubling
// rule put a knee at 500 ops/s for a server that held 3714).
//
// Noise. Every step of the lowest third sets the baseline and the
// smoothing pools neighbours, so no single noisy step places the knee.
// The test plants curves with a known knee — single-server queues (the
// softest knee there is), many-server queues and hockey sticks — measured
// with per-interval lognormal noise (σ = 0.25 between intervals, 15
// intervals of 300 ops a step), 10 % step-to-step noise and one step in
// ten 40 % high, and finds the knee within KneeTolerance of the
// noise-free curve's in at least 95 of 100 seeded trials (980 of
// 1000 seeds when measured). The knee's interval is where the same fits of the
// steps' p99 interval bounds (block bootstrap) cross T.
//
// The knee is never above the highest load under the SLO (MaxLoad) and
// its achieved rate never above the maximum sustainable rate: a knee the
// curve puts higher is capped there and flagged, since past that load the
// SLO, not the curve, is what binds.

// KneeTolerance is the accuracy the knee test holds the method to on
// noisy curves: within one step of the ladder, or 20 % of the knee,
// whichever is larger, of the knee of the noise-free curve.
const KneeTolerance = "max(one step, 20 % of the knee)"

// kneeFit is the isotonic fit of p99 against load over the steps with
// completed ops.
type kneeFit struct {
	load, rate []float64 // offered load, achieved rate
	fit        []float64 // fitted p99 (ms)
	lo, hi     []float64 // fitted interval bounds (nil without intervals)
	n          []int     // step numbers
}

func fitSteps(steps []results.SweepStep) kneeFit {
	var k kneeFit
	var ly, llo, lhi []float64
	withCI := true
	for _, s := range steps {
		if s.Count == 0 || s.Latency.P99 <= 0 {
			continue
		}
		k.load, k.rate, k.n = append(k.load, s.Value), append(k.rate, s.Achieved), append(k.n, s.N)
		ly = append(ly, math.Log(s.Latency.P99))
		if s.P99CI == nil {
			withCI = false
			continue
		}
		llo = append(llo, math.Log(math.Max(s.P99CI.Lo, 1e-3)))
		lhi = append(lhi, math.Log(math.Max(s.P99CI.Hi, 1e-3)))
	}
	exp := func(v []float64) []float64 {
		for i := range v {
			v[i] = math.Exp(v[i])
		}
		return v
	}
	k.fit = exp(stats.Isotonic(stats.Median3(ly), nil))
	if withCI && len(llo) > 0 {
		k.lo, k.hi = exp(stats.Isotonic(stats.Median3(llo), nil)), exp(stats.Isotonic(stats.Median3(lhi), nil))
	}
	return k
}

// baseline is the median of the fitted p99 over the steps in the lowest
// third of the loads swept (the lowest step when it is alone there).
func (k *kneeFit) baseline() float64 {
	lim := k.load[0] + (k.load[len(k.load)-1]-k.load[0])/3
	var low []float64
	for i, l := range k.load {
		if l <= lim {
			low = append(low, k.fit[i])
		}
	}
	return stats.Median(low)
}

// at returns where the curve y first reaches t: the load and the
// fraction between the steps around it (i−1, i); ok false when it never
// does, and i = 0 when it is already there at the lowest load.
func (k *kneeFit) at(y []float64, t float64) (load float64, i int, f float64, ok bool) {
	for i := range y {
		if y[i] < t {
			continue
		}
		if i == 0 {
			return k.load[0], 0, 0, true
		}
		f = math.Log(t/y[i-1]) / math.Log(y[i]/y[i-1]) // in log p99: less convex than p99, so the chord errs less
		return k.load[i-1] + f*(k.load[i]-k.load[i-1]), i, f, true
	}
	return 0, 0, 0, false
}

// setKnee finds the knee of the judged steps (sorted by load) and caps
// it at the highest load under the SLO (v.MaxLoad, set before).
func setKnee(v *results.SweepVerdict, steps []results.SweepStep, slo results.SLO) {
	k := fitSteps(steps)
	if len(k.fit) < 2 {
		return
	}
	b := k.baseline()
	t := math.Max(2*b, b+math.Max(1, slo.P99MS/10))
	v.KneeBaseline, v.KneeThreshold = textfmt.Round3(b), textfmt.Round3(t)
	load, i, f, ok := k.at(k.fit, t)
	if !ok {
		return // latency stayed near its baseline over the range
	}
	rate := k.rate[i]
	if i > 0 {
		rate = k.rate[i-1] + f*(k.rate[i]-k.rate[i-1])
	}
	if k.lo != nil {
		lo, _, _, okLo := k.at(k.hi, t) // the upper bounds reach T first
		hi, _, _, okHi := k.at(k.lo, t)
		if !okLo {
			lo = load
		}
		if !okHi {
			hi = k.load[len(k.load)-1]
		}
		v.KneeCI = &results.CI{Lo: textfmt.Round3(math.Min(lo, load)), Hi: textfmt.Round3(math.Max(hi, load))}
	}
	v.Knee, v.KneeRate = textfmt.Round3(load), textfmt.Round3(rate)
	capKnee(v, steps)
}

// capKnee keeps the knee at or under the highest load that met the SLO
// and its rate at or under the maximum sustainable rate, and sets
// KneeStep, the last step at or below it.
func capKnee(v *results.SweepVerdict, steps []results.SweepStep) {
	if v.Knee > v.MaxLoad {
		v.Knee, v.KneeCapped = v.MaxLoad, true
		for _, s := range steps {
			if s.Pass && s.Value == v.MaxLoad {
				v.KneeRate = textfmt.Round3(s.Achieved)
			}
		}
	}
	if v.Knee == 0 { // no step met the SLO
		v.KneeRate, v.KneeCI = 0, nil
		return
	}
	v.KneeRate = math.Min(v.KneeRate, v.MaxSustainable)
	if c := v.KneeCI; c != nil {
		c.Lo, c.Hi = math.Min(c.Lo, v.MaxLoad), math.Min(c.Hi, v.MaxLoad)
	}
	for _, s := range steps {
		if s.Value <= v.Knee && (v.KneeStep == 0 || s.Value >= valueOf(steps, v.KneeStep)) {
			v.KneeStep = s.N
		}
	}
}

func valueOf(steps []results.SweepStep, n int) float64 {
	for _, s := range steps {
		if s.N == n {
			return s.Value
		}
	}
	return 0
}
