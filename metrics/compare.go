package metrics

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
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
	get        func(o *OpSummary) float64
}{
	{"rate", "ops/s", func(o *OpSummary) float64 { return o.Rate }},
	{"error_rate", "%", func(o *OpSummary) float64 { return 100 * o.ErrorRate }},
	{"p50", "ms", func(o *OpSummary) float64 { return o.Response.P50 }},
	{"p90", "ms", func(o *OpSummary) float64 { return o.Response.P90 }},
	{"p99", "ms", func(o *OpSummary) float64 { return o.Response.P99 }},
	{"p99.9", "ms", func(o *OpSummary) float64 { return o.Response.P999 }},
	{"max", "ms", func(o *OpSummary) float64 { return o.Response.Max }},
	{"service_p50", "ms", func(o *OpSummary) float64 { return o.Service.P50 }},
	{"service_p99", "ms", func(o *OpSummary) float64 { return o.Service.P99 }},
	{"faulty_streams", "", func(o *OpSummary) float64 {
		if o.Ledger == nil {
			return 0
		}
		return float64(o.Ledger.Faulty)
	}},
}

// Compare lines up the ops of two summaries, metric by metric.
func Compare(a, b *Summary) []OpCompare {
	find := func(s *Summary, name string) *OpSummary {
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
	for _, s := range []*Summary{a, b} {
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

// WriteCompare prints a comparison as a table: per op, each metric in A and
// B with the change.
func WriteCompare(w io.Writer, labelA, labelB string, cmp []OpCompare) error {
	p := &printer{w: w}
	p.f("A: %s\nB: %s\n\n", labelA, labelB)
	width := len("op")
	for _, c := range cmp {
		width = max(width, len(c.Name))
	}
	p.f("%-*s  %-14s %12s %12s %12s %9s\n", width, "op", "metric", "A", "B", "B − A", "change")
	for _, c := range cmp {
		for i, d := range c.Deltas {
			name := ""
			if i == 0 {
				name = c.Name
			}
			label := d.Metric
			if d.Unit != "" {
				label += " " + d.Unit
			}
			av, bv, ab, rel := num(d.A), num(d.B), signed(d.Abs), "—"
			if !d.InA {
				av, ab = "—", "—"
			}
			if !d.InB {
				bv, ab = "—", "—"
			}
			if d.InA && d.InB && d.A != 0 {
				rel = fmt.Sprintf("%+.1f%%", 100*d.Rel)
			}
			p.f("%-*s  %-14s %12s %12s %12s %9s\n", width, name, label, av, bv, ab, rel)
		}
	}
	return p.err
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e12 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func signed(v float64) string {
	s := num(v)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

// Regression is a --fail-if limit on the change from A to B, written
//
//	[OP:]METRIC CMP CHANGE
//
// where METRIC is one compare shows (rate, error_rate, p50 … max,
// service_p50, service_p99, faulty_streams), CMP is > or <, and CHANGE is
// signed: relative with % ("p99>+10%": p99 grew by more than 10 %) or
// absolute with the metric's unit (ms; pp — percentage points — for
// error_rate; none for rate and counts): "p99>+5ms", "error_rate>+0.5pp",
// "rate<-5%". Without OP it applies to the all row; with OP to each op of
// that name or method.
type Regression struct {
	Expr     string
	Op       string
	Metric   string
	Cmp      string
	Change   float64 // relative: a fraction; absolute: in the unit
	Relative bool
}

var reRegression = regexp.MustCompile(`^(.*?)(<|>)\s*([-+][0-9]*\.?[0-9]+)\s*(%|ms|s|pp)?$`)

// ParseRegression parses one --fail-if expression.
func ParseRegression(expr string) (Regression, error) {
	m := reRegression.FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		return Regression{}, fmt.Errorf("--fail-if %q: want [op:]metric>+change or <-change, e.g. p99>+10%%, rate<-5%%, error_rate>+0.5pp", expr)
	}
	r := Regression{Expr: expr, Cmp: m[2]}
	left := strings.TrimSpace(m[1])
	if i := strings.LastIndexByte(left, ':'); i >= 0 {
		r.Op, r.Metric = left[:i], left[i+1:]
	} else {
		r.Metric = left
	}
	unit, found := "", false
	for _, c := range compared {
		if c.name == r.Metric {
			unit, found = c.unit, true
		}
	}
	if !found {
		return r, fmt.Errorf("--fail-if %q: unknown metric %q (want one of rate, error_rate, p50, p90, p99, p99.9, max, service_p50, service_p99, faulty_streams)", expr, r.Metric)
	}
	v, _ := strconv.ParseFloat(m[3], 64)
	switch m[4] {
	case "%":
		r.Relative, r.Change = true, v/100
	case "ms", "s":
		if unit != "ms" {
			return r, fmt.Errorf("--fail-if %q: %s is not a time", expr, r.Metric)
		}
		if m[4] == "s" {
			v *= 1000
		}
		r.Change = v
	case "pp":
		if unit != "%" {
			return r, fmt.Errorf("--fail-if %q: pp (percentage points) is for error_rate", expr)
		}
		r.Change = v
	default:
		if unit == "ms" || unit == "%" {
			return r, fmt.Errorf("--fail-if %q: give a unit (%% for relative, %s for absolute)", expr, map[string]string{"ms": "ms", "%": "pp"}[unit])
		}
		r.Change = v
	}
	return r, nil
}

// Check returns the ops whose change crosses the limit, described.
func (r Regression) Check(cmp []OpCompare) []string {
	var out []string
	for _, c := range cmp {
		if r.Op == "" && c.Name != "all" || r.Op != "" && c.Name != r.Op && !strings.HasPrefix(c.Name, r.Op+":") {
			continue
		}
		for _, d := range c.Deltas {
			if d.Metric != r.Metric || !d.InA || !d.InB {
				continue
			}
			got := d.Abs
			if r.Relative {
				if d.A == 0 {
					if d.B == 0 {
						continue
					}
					got = math.Inf(int(math.Copysign(1, d.B)))
				} else {
					got = d.Rel
				}
			}
			if (r.Cmp == ">" && got > r.Change) || (r.Cmp == "<" && got < r.Change) {
				change := signed(d.Abs) + " " + d.Unit
				if r.Relative {
					change = fmt.Sprintf("%+.1f%%", 100*got)
				}
				out = append(out, fmt.Sprintf("%s: %s %s → %s (%s) crosses %s", c.Name, d.Metric, num(d.A), num(d.B), strings.TrimSpace(change), r.Expr))
			}
		}
	}
	return out
}
