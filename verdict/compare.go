package verdict

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// Delta is one metric of one op in two runs.
type Delta struct {
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"` // ms, %, ops/s or "" (count)
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	Abs    float64 `json:"abs"`      // B − A
	Rel    float64 `json:"relative"` // (B − A) / A; 0 when A is 0
	InA    bool    `json:"in_a"`
	InB    bool    `json:"in_b"`
	// P is the p-value of a Mann–Whitney U test of A's per-interval
	// values against B's (nil: not tested; see AddNoise); Beyond says the
	// difference is beyond the noise (P < NoiseAlpha).
	P      *float64 `json:"p_value,omitempty"`
	Beyond bool     `json:"beyond_noise,omitempty"`
	// Test names the test when it is not AddNoise's Mann–Whitney (the
	// rows of all ops read the headline's: ApplyFindings).
	Test string `json:"test,omitempty"`
}

// OpCompare is an op's metrics in two runs (ops matched by name; "all"
// last).
type OpCompare struct {
	Name   string  `json:"name"`
	Deltas []Delta `json:"deltas"`
}

// compared lists the metrics compare shows, in order.
var compared = []struct {
	name, unit string
	get        func(o *results.OpSummary) float64
}{
	{"rate", "ops/s", func(o *results.OpSummary) float64 { return o.Rate }},
	{"error_rate", "%", func(o *results.OpSummary) float64 { return 100 * o.ErrorRate }},
	{"p50", "ms", func(o *results.OpSummary) float64 { return o.Response.P50 }},
	{"p90", "ms", func(o *results.OpSummary) float64 { return o.Response.P90 }},
	{"p99", "ms", func(o *results.OpSummary) float64 { return o.Response.P99 }},
	{"p99.9", "ms", func(o *results.OpSummary) float64 { return o.Response.P999 }},
	{"max", "ms", func(o *results.OpSummary) float64 { return o.Response.Max }},
	{"service_p50", "ms", func(o *results.OpSummary) float64 { return o.Service.P50 }},
	{"service_p99", "ms", func(o *results.OpSummary) float64 { return o.Service.P99 }},
	{"faulty_streams", "", func(o *results.OpSummary) float64 {
		if o.Ledger == nil {
			return 0
		}
		return float64(o.Ledger.Faulty)
	}},
}

// Compare lines up the ops of two summaries, metric by metric.
func Compare(a, b *results.Summary) []OpCompare {
	find := func(s *results.Summary, name string) *results.OpSummary {
		if name == "all" {
			return &s.All
		}
		for i := range s.Ops {
			if s.Ops[i].Name == name {
				return &s.Ops[i]
			}
		}
		return nil
	}
	var names []string
	seen := map[string]bool{}
	for _, s := range []*results.Summary{a, b} {
		for _, o := range s.Ops {
			if !seen[o.Name] {
				seen[o.Name] = true
				names = append(names, o.Name)
			}
		}
	}
	names = append(names, "all")
	var out []OpCompare
	for _, n := range names {
		oa, ob := find(a, n), find(b, n)
		c := OpCompare{Name: n}
		for _, m := range compared {
			d := Delta{Metric: m.name, Unit: m.unit, InA: oa != nil, InB: ob != nil}
			if oa != nil {
				d.A = m.get(oa)
			}
			if ob != nil {
				d.B = m.get(ob)
			}
			if d.InA && d.InB {
				d.Abs = d.B - d.A
				if d.A != 0 {
					d.Rel = d.Abs / d.A
				}
			}
			c.Deltas = append(c.Deltas, d)
		}
		out = append(out, c)
	}
	return out
}

// Regression is a --fail-if limit on the change from A to B, written
//
//	[SCOPE:]METRIC CMP CHANGE
//
// where METRIC and SCOPE read exactly as a threshold's (MetricNames: any
// percentile, every printed counter; op, post:, get:, sessions: scopes;
// no scope is the total), CMP is > or <, and CHANGE is signed: relative
// with % ("p99>+10%": p99 grew by more than 10 %) or absolute in the
// metric's unit (ms or s for times; pp — percentage points — for rates in
// %; none for counts and ops/s): "p99>+5ms", "error_rate>+0.5pp",
// "rate<-5%", "get:lost>+0". With an op scope every matching op is
// checked.
type Regression struct {
	Expr     string
	Op       string // the scope as written
	Metric   string
	Cmp      string
	Change   float64 // relative: a fraction; absolute: in the unit
	Relative bool

	def   metricDef
	scope string
}

var reRegression = regexp.MustCompile(`^(.*?)\s*(<|>)\s*([-+][0-9]*\.?[0-9]+)\s*(%|ms|s|pp)?$`)

// ParseRegression parses one --fail-if expression; an unknown metric is an
// error listing the valid names.
func ParseRegression(expr string) (Regression, error) {
	m := reRegression.FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		return Regression{}, fmt.Errorf("%s %q: want [scope:]metric>+change or <-change, e.g. p99>+10%%, rate<-5%%, error_rate>+0.5pp, get:lost>+0", setting.VerdictRegression, expr)
	}
	r := Regression{Expr: expr, Cmp: m[2]}
	r.Op, r.Metric = splitScope(strings.TrimSpace(m[1]))
	d, ok := lookupMetric(r.Metric)
	if !ok {
		return r, fmt.Errorf("%s %q: unknown metric %q; valid metrics: %s", setting.VerdictRegression, expr, r.Metric, metricList())
	}
	sc, err := resolveScope(d, r.Op)
	if err != nil {
		return r, fmt.Errorf("%s %q: %v", setting.VerdictRegression, expr, err)
	}
	r.def, r.scope = d, sc
	v, _ := strconv.ParseFloat(m[3], 64)
	switch m[4] {
	case "%":
		r.Relative, r.Change = true, v/100
	case "ms", "s":
		switch {
		case d.unit == "ms" && m[4] == "s":
			v *= 1000
		case d.unit == "s" && m[4] == "ms":
			v /= 1000
		case d.unit != "ms" && d.unit != "s":
			return r, fmt.Errorf("%s %q: %s is not a time", setting.VerdictRegression, expr, r.Metric)
		}
		r.Change = v
	case "pp":
		if d.unit != "%" {
			return r, fmt.Errorf("%s %q: pp (percentage points) is for rates in %%", setting.VerdictRegression, expr)
		}
		r.Change = v
	default:
		if d.unit == "ms" || d.unit == "%" || d.unit == "s" {
			return r, fmt.Errorf("%s %q: give a unit (%% for relative, %s for absolute)", setting.VerdictRegression, expr, map[string]string{"ms": "ms", "s": "s", "%": "pp"}[d.unit])
		}
		r.Change = v
	}
	return r, nil
}

// LimitResult is one limit checked on one op (or the total).
type LimitResult struct {
	Op   string `json:"op"`
	Pass bool   `json:"pass"`
	// Text describes the change against the limit: "all: p99 1.295 →
	// 1.305 ms (+0.8%) within p99>+10%" or "… crosses …".
	Text string `json:"text"`
}

// Check returns the crossings of the limit from a to b, described; qa and
// qb answer the percentiles the summaries do not keep (nil: no data).
func (r Regression) Check(a, b *results.Summary, qa, qb QuantileSource) []string {
	var out []string
	for _, l := range r.Evaluate(a, b, qa, qb) {
		if !l.Pass {
			out = append(out, l.Text)
		}
	}
	return out
}

// Evaluate checks the limit from a to b on every op it scopes (or the
// total), passing or not, each described with the numbers in the unit's
// format (textfmt.Value); qa and qb as for Check.
func (r Regression) Evaluate(a, b *results.Summary, qa, qb QuantileSource) []LimitResult {
	var out []LimitResult
	va, vb := views(a, r.scope, r.Op, qa), views(b, r.scope, r.Op, qb)
	for _, x := range va {
		name := "all"
		if x.op != nil {
			name = x.op.Name
		}
		var y *view
		for i := range vb {
			if vb[i].op == nil && x.op == nil || vb[i].op != nil && x.op != nil && vb[i].op.Name == x.op.Name {
				y = &vb[i]
			}
		}
		if y == nil {
			continue
		}
		av, okA := r.def.read(x)
		bv, okB := r.def.read(*y)
		if !okA || !okB {
			continue
		}
		got := bv - av
		if r.Relative {
			switch {
			case av != 0:
				got = (bv - av) / av
			case bv == 0:
				continue
			default:
				got = math.Inf(int(math.Copysign(1, bv)))
			}
		}
		crossed := (r.Cmp == ">" && got > r.Change) || (r.Cmp == "<" && got < r.Change)
		change := strings.TrimSpace(textfmt.SignedValue(bv-av, r.def.unit) + " " + r.def.unit)
		if r.Relative {
			change = fmt.Sprintf("%+.1f%%", 100*got)
		}
		word := "within"
		if crossed {
			word = "crosses"
		}
		out = append(out, LimitResult{Op: name, Pass: !crossed, Text: fmt.Sprintf("%s: %s %s → %s (%s) %s %s", name, r.Metric,
			textfmt.Value(av, r.def.unit), textfmt.Value(bv, r.def.unit), change, word, r.Expr)})
	}
	return out
}
