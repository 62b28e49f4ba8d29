package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// Finding is one quantity of a comparison's headline, all ops together:
// throughput, dropped arrivals, errors or a response-time percentile, in
// A and B, the change, and the test that says whether the change is
// beyond the noise — one right for the quantity:
//
//   - throughput: Welch's t test on the per-interval throughput of the
//     measured intervals (a rate over intervals), with the 95 % interval
//     of the difference (CI, ops/s);
//   - dropped and errors: the two-proportion z test on the counts
//     (dropped of the arrivals, errors of the completed ops);
//   - p50, p90, p99: the Mann–Whitney U test of A's per-interval
//     percentile against B's.
//
// Untested says in words why a quantity was not tested (no intervals, too
// few to reach the level, no arrivals); P is nil then.
type Finding struct {
	Quantity string  `json:"quantity"` // throughput, dropped, errors, p50, p90, p99
	Unit     string  `json:"unit"`     // ops/s, % (of arrivals or ops), ms
	A        float64 `json:"a"`
	B        float64 `json:"b"`
	Abs      float64 `json:"abs"`      // B − A, in the unit (pp for %)
	Rel      float64 `json:"relative"` // (B − A) / A; 0 when A is 0
	Test     string  `json:"test"`
	// CI is the 95 % interval of B − A (throughput only).
	CI       *stats.CI `json:"ci,omitempty"`
	P        *float64  `json:"p_value,omitempty"`
	Beyond   bool      `json:"beyond_noise"`
	Untested string    `json:"untested,omitempty"`
}

// Test names, as Finding.Test reads them.
const (
	TestWelch        = "Welch t on per-interval throughput"
	TestProportions  = "two-proportion z"
	TestMannWhitneyU = "Mann–Whitney U on per-interval values"
)

// Findings makes the headline's findings for two runs: throughput,
// dropped, errors, p50, p90, p99 of all ops. ra and rb are the runs'
// results directories (nil: a bare summary.json, whose per-interval
// quantities are untested).
func Findings(a, b *results.Summary, ra, rb *results.Results) []Finding {
	var ia, ib []results.IntervalRec
	if ra != nil && rb != nil {
		ia, ib = ra.Intervals, rb.Intervals
	}
	mk := func(q, unit string, x, y float64) Finding {
		f := Finding{Quantity: q, Unit: unit, A: x, B: y, Abs: y - x}
		if x != 0 {
			f.Rel = f.Abs / x
		}
		return f
	}
	var out []Finding
	// Throughput: Welch on the per-interval rates.
	f := mk("throughput", "ops/s", a.All.Rate, b.All.Rate)
	f.Test = TestWelch
	xa, xb := rates(ia), rates(ib)
	if _, ci, p, ok := stats.Welch(xa, xb, results.ConfidenceLevel); ok {
		f.CI, f.P, f.Beyond = &ci, &p, p < NoiseAlpha
	} else {
		f.Untested = fmt.Sprintf("%d and %d measured intervals; the test needs 2 a side", len(xa), len(xb))
	}
	out = append(out, f)
	// Dropped arrivals and errors: two proportions.
	prop := func(q string, xa, na, xb, nb int64) Finding {
		f := mk(q, "%", pct(xa, na), pct(xb, nb))
		f.Test = TestProportions
		if p, ok := stats.TwoProportions(xa, na, xb, nb); ok {
			f.P, f.Beyond = &p, p < NoiseAlpha
		} else {
			f.Untested = "no " + map[string]string{"dropped": "arrivals", "errors": "ops"}[q] + " in one of the runs"
		}
		return f
	}
	out = append(out, prop("dropped", a.Dropped, arrivals(a), b.Dropped, arrivals(b)))
	out = append(out, prop("errors", a.All.Errors, a.All.Count, b.All.Errors, b.All.Count))
	// Percentiles: Mann–Whitney on the per-interval values.
	for _, q := range []struct {
		name string
		get  func(l results.Latency) float64
	}{{"p50", func(l results.Latency) float64 { return l.P50 }}, {"p90", func(l results.Latency) float64 { return l.P90 }}, {"p99", func(l results.Latency) float64 { return l.P99 }}} {
		f := mk(q.name, "ms", q.get(a.All.Response), q.get(b.All.Response))
		f.Test = TestMannWhitneyU
		sa, _ := intervalSeries(ia, "all", q.name)
		sb, _ := intervalSeries(ib, "all", q.name)
		switch {
		case len(sa) == 0 || len(sb) == 0:
			f.Untested = fmt.Sprintf("%d and %d measured intervals with completed ops", len(sa), len(sb))
		case stats.MannWhitneyMinP(len(sa), len(sb)) >= NoiseAlpha:
			f.Untested = fmt.Sprintf("too few intervals to tell (%d and %d)", len(sa), len(sb))
		default:
			if p, ok := stats.MannWhitney(sa, sb); ok {
				f.P, f.Beyond = &p, p < NoiseAlpha
			}
		}
		out = append(out, f)
	}
	return out
}

// rates returns the throughput (completed ops per second) of each full
// measured interval, stalls (no op completed) included.
func rates(ivs []results.IntervalRec) []float64 {
	lengths := make([]float64, 0, len(ivs))
	for _, iv := range ivs {
		lengths = append(lengths, iv.Interval)
	}
	usual := stats.Median(lengths)
	var out []float64
	for _, iv := range ivs {
		if iv.Phase == results.PhaseMeasure && iv.Interval >= usual/2 && iv.Interval > 0 {
			out = append(out, float64(iv.All.Count)/iv.Interval)
		}
	}
	return out
}

// arrivals is a run's arrivals: completed and dropped ops (the open
// model's dropped rate's denominator, when the summary has one).
func arrivals(s *results.Summary) int64 {
	if s.DroppedRate > 0 {
		return int64(math.Round(float64(s.Dropped) / s.DroppedRate))
	}
	return s.All.Count + s.Dropped
}

func pct(x, n int64) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(x) / float64(n)
}

// Words renders a finding for the headline: its direction and size, A →
// B, and the noise verdict, e.g.
//
//	throughput +37.5% (727.0 → 1000 ops/s, beyond the noise)
//	dropped −27.00 pp (27.00% → 0.00%, beyond the noise)
//	p99 −3.0% (10.00 → 9.70 ms, within the noise)
//	errors none in either run
//	p50 +2.0% (1.000 → 1.020 ms, not tested: too few intervals to tell (3 and 3))
func (f Finding) Words() string {
	noise := "within the noise"
	switch {
	case f.P == nil:
		noise = "not tested: " + f.Untested
	case f.Beyond:
		noise = "beyond the noise"
	}
	if f.Unit == "%" {
		if f.A == 0 && f.B == 0 {
			return f.Quantity + " none in either run"
		}
		return fmt.Sprintf("%s %s pp (%.2f%% → %.2f%%, %s)", f.Quantity, signed(f.Abs, 2), f.A, f.B, noise)
	}
	size := strings.TrimSpace(textfmt.SignedValue(f.Abs, f.Unit)) + " " + f.Unit
	if f.A != 0 {
		size = signed(100*f.Rel, 1) + "%"
	}
	return fmt.Sprintf("%s %s (%s → %s %s, %s)", f.Quantity, size, textfmt.Value(f.A, f.Unit), textfmt.Value(f.B, f.Unit), f.Unit, noise)
}

// signed formats x with its sign (− for negatives, + otherwise) and
// digits decimals.
func signed(x float64, digits int) string {
	s := fmt.Sprintf("%+.*f", digits, x)
	return strings.Replace(s, "-", "−", 1)
}

// Mismatch is a setting two compared runs (or sweeps) differ in, which
// makes them not like-for-like.
type Mismatch struct {
	Field string `json:"field"` // profile, model, offered rate, VUs, max VUs, stages, protocol, target
	A     string `json:"a"`
	B     string `json:"b"`
}

func (m Mismatch) String() string { return fmt.Sprintf("%s %s vs %s", m.Field, m.A, m.B) }

// LikeForLike lists what makes two runs not like-for-like: a different
// profile, load model, offered rate (open model, more than 1 % apart),
// VUs (closed model) or max VUs (open model), stages, protocol or target.
// nil: they compare like for like.
func LikeForLike(a, b *results.Summary) []Mismatch {
	var out []Mismatch
	add := func(field, x, y string) {
		if x != y {
			out = append(out, Mismatch{field, quoteEmpty(x), quoteEmpty(y)})
		}
	}
	add("profile", a.Profile, b.Profile)
	add("model", a.Model, b.Model)
	if a.TargetRate != b.TargetRate && math.Abs(a.TargetRate-b.TargetRate) > 0.01*math.Max(a.TargetRate, b.TargetRate) {
		out = append(out, Mismatch{"offered rate", textfmt.Num(a.TargetRate) + "/s", textfmt.Num(b.TargetRate) + "/s"})
	}
	if a.Model != "open" || b.Model != "open" {
		add("VUs", fmt.Sprint(a.VUs), fmt.Sprint(b.VUs))
	} else {
		add("max VUs", fmt.Sprint(a.MaxVUs), fmt.Sprint(b.MaxVUs))
	}
	add("stages", a.Stages, b.Stages)
	add("protocol", a.Protocol, b.Protocol)
	add("target", target(a.Target, a.Embedded), target(b.Target, b.Embedded))
	return out
}

// embeddedTarget is how an embedded reference server's target reads:
// its port changes from run to run, so two runs of it compare.
const embeddedTarget = "(embedded reference server)"

// target is the target two runs must share: the URL, or the embedded
// reference server whatever its port.
func target(url string, embedded bool) string {
	if embedded || strings.HasSuffix(url, embeddedTarget) {
		return "the embedded reference server"
	}
	return url
}

// SweepLikeForLike lists what makes two sweeps not like-for-like: a
// different profile, dimension swept, protocol, target, step length or
// SLO.
func SweepLikeForLike(a, b *results.Sweep) []Mismatch {
	var out []Mismatch
	add := func(field, x, y string) {
		if x != y {
			out = append(out, Mismatch{field, quoteEmpty(x), quoteEmpty(y)})
		}
	}
	add("profile", a.Profile, b.Profile)
	add("dimension", a.By, b.By)
	add("protocol", a.Protocol, b.Protocol)
	add("target", target(a.Target, false), target(b.Target, false))
	add("step length", textfmt.Num(a.StepS)+" s", textfmt.Num(b.StepS)+" s")
	slo := func(s results.SLO) string {
		return fmt.Sprintf("p99 ≤ %s ms, errors ≤ %.2f%%, replay clean %v", textfmt.MS(s.P99MS), 100*s.ErrorRate, s.ReplayClean)
	}
	add("SLO", slo(a.SLO), slo(b.SLO))
	return out
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// RunComparison is two runs compared: what makes them not like-for-like
// (compared anyway only with --force), the headline's findings, the ops'
// table and the --fail-if limits checked.
type RunComparison struct {
	NotLikeForLike []Mismatch    `json:"not_like_for_like,omitempty"`
	Headline       []Finding     `json:"headline"`
	Ops            []OpCompare   `json:"ops"`
	Limits         []LimitResult `json:"limits,omitempty"`
}

// ApplyFindings makes the table's rows of all ops read the headline's
// tests: the rate row Welch's, the error-rate row the two-proportion
// test's, the p50, p90 and p99 rows the headline's Mann–Whitney (a row
// the headline left untested is untested in the table too).
func ApplyFindings(cmp []OpCompare, fs []Finding) {
	metric := map[string]string{"throughput": "rate", "errors": "error_rate", "p50": "p50", "p90": "p90", "p99": "p99"}
	for i := range cmp {
		if cmp[i].Name != "all" {
			continue
		}
		for _, f := range fs {
			for j := range cmp[i].Deltas {
				d := &cmp[i].Deltas[j]
				if d.Metric == metric[f.Quantity] {
					d.P, d.Beyond, d.Test = f.P, f.Beyond, f.Test
				}
			}
		}
	}
}
