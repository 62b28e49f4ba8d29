package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/verdict"
)

// WriteCompare prints a comparison: first, when the runs differ in a
// setting that makes them not like-for-like, a NOT LIKE-FOR-LIKE line
// naming each (the caller compared them anyway: --force); then the
// one-line headline (CompareHeadline); then a table: per op, each metric
// in A and B with the change and whether it is beyond the noise, every
// number in its unit's one format (textfmt.Value); then the limits
// checked, passing and crossed.
func WriteCompare(w io.Writer, labelA, labelB string, c verdict.RunComparison) error {
	p := &textfmt.Printer{W: w}
	if len(c.NotLikeForLike) > 0 {
		p.F("%s\n", NotLikeForLike(c.NotLikeForLike))
	}
	if h := CompareHeadline(c.Headline, c.Limits); h != "" {
		p.F("%s\n", h)
	}
	p.F("A: %s\nB: %s\n\n", labelA, labelB)
	cmp := c.Ops
	width := len("op")
	for _, c := range cmp {
		width = max(width, len(c.Name))
	}
	p.F("%-*s  %-14s %12s %12s %12s %9s  %s\n", width, "op", "metric", "A", "B", "B − A", "change", "noise")
	tested := false
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
			av, bv, ab, rel := textfmt.Value(d.A, d.Unit), textfmt.Value(d.B, d.Unit), textfmt.SignedValue(d.Abs, d.Unit), "—"
			if !d.InA {
				av, ab = "—", "—"
			}
			if !d.InB {
				bv, ab = "—", "—"
			}
			if d.InA && d.InB && d.A != 0 {
				rel = fmt.Sprintf("%+.1f%%", 100*d.Rel)
			}
			p.F("%-*s  %-14s %12s %12s %12s %9s  %s\n", width, name, label, av, bv, ab, rel, noise(d))
			tested = tested || d.P != nil
		}
	}
	if tested {
		p.F("\nnoise: beyond when p < %g, within otherwise. Throughput: Welch's t test on the per-interval throughput; errors and dropped: the two-proportion z test; percentiles: a two-sided Mann–Whitney U test of A's per-interval values against B's (rows of single ops: Mann–Whitney throughout).\n", verdict.NoiseAlpha)
	}
	writeLimits(p, c.Limits)
	return p.Err
}

// NotLikeForLike is the warning line that names what makes two runs (or
// sweeps) not like-for-like: "NOT LIKE-FOR-LIKE [W-COMPARE-UNLIKE]:
// profile smoke vs ramp; model open vs closed — the differences below
// are not the servers' alone; remedy: …".
func NotLikeForLike(ms []verdict.Mismatch) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.String())
	}
	return "NOT LIKE-FOR-LIKE [W-COMPARE-UNLIKE]: " + strings.Join(parts, "; ") + " — the differences below are not the servers' alone; remedy: compare runs of one profile and load against one target (docs/troubleshooting.md#w-compare-unlike)"
}

// CompareHeadline sums up a comparison in one line, from the findings on
// all ops together (verdict.Findings): throughput, dropped arrivals,
// errors, p50, p90 and p99, each with its direction, size and noise
// verdict, then the --fail-if limits:
//
//	throughput +37.5% (727.0 → 1000 ops/s, beyond the noise) · dropped −27.00 pp (27.00% → 0.00%, beyond the noise) · errors none in either run · p50 … · p99 −65.0% (30.00 → 10.50 ms, beyond the noise)
//
// A change is never called unchanged: its size is stated, and "within
// the noise" when the test could not tell it from noise.
func CompareHeadline(fs []verdict.Finding, limits []verdict.LimitResult) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.Words())
	}
	crossed := 0
	for _, l := range limits {
		if !l.Pass {
			crossed++
		}
	}
	if len(limits) > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d --fail-if limits crossed", crossed, len(limits)))
	}
	return strings.Join(parts, " · ")
}

// noise renders a delta's test: "beyond (p=0.001)", "within (p=0.43)" or
// "—" when it was not tested.
func noise(d verdict.Delta) string {
	if d.P == nil {
		return "—"
	}
	word := "within"
	if d.Beyond {
		word = "beyond"
	}
	if d.Test != "" && d.Test != verdict.TestMannWhitneyU {
		return word + " (p=" + fmtP(*d.P) + ", " + d.Test + ")"
	}
	return word + " (p=" + fmtP(*d.P) + ")"
}

// fmtP formats a p-value: two significant digits, "<0.0001" below.
func fmtP(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// writeLimits prints the --fail-if limits checked, passing and crossed.
func writeLimits(p *textfmt.Printer, limits []verdict.LimitResult) {
	if len(limits) == 0 {
		return
	}
	p.F("\nLimits (--fail-if):\n")
	for _, l := range limits {
		mark := "PASS"
		if !l.Pass {
			mark = "FAIL"
		}
		p.F("  %s  %s\n", mark, l.Text)
	}
}
