package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
)

// WriteMarkdown prints the summary as Markdown tables (for a pull request
// or a wiki page), after the report model's lines (the verdict, notes,
// not-applicable lines, each warning with its cause and remedy: what the
// text and HTML reports say too).
func WriteMarkdown(w io.Writer, s *results.Summary) error {
	p := &printer{Printer: textfmt.Printer{W: w}, m: Build(s)}
	p.F("## mcpbench: %s\n\n", s.Profile)
	p.F("**%s**\n\n", p.m.Verdict)
	for _, l := range p.m.Lines()[1:] {
		if strings.HasPrefix(l, "cause: ") || strings.HasPrefix(l, "remedy: ") {
			p.F("  - %s\n", l)
		} else {
			p.F("- %s\n", l)
		}
	}
	if len(p.m.Lines()) > 1 {
		p.F("\n")
	}
	p.F("| | |\n|---|---|\n")
	p.F("| target | `%s`%s |\n", s.Target, map[bool]string{true: " (embedded reference server)"}[s.Embedded])
	p.F("| protocol | %s |\n| model | %s |\n", s.Protocol, s.Model)
	if n := s.Net; n != nil && n.Protocol != "" {
		p.F("| HTTP | %s |\n", httpName(n.Protocol))
		if n.Proxy != "" {
			p.F("| proxy | %s |\n", n.Proxy)
		}
	}
	if s.Model == "open" {
		p.F("| arrival rate | %.4g/s (achieved %.1f/s, dropped %d) |\n", s.TargetRate, s.Rate, s.Dropped)
	}
	p.F("| VUs | %d |\n| measured | %.1f s after %.1f s warm-up |\n| started | %s |\n| tool | %s |\n", s.VUs, s.DurationS, s.WarmupS, s.Started.Format("2006-01-02 15:04:05 MST"), s.Tool)
	if s.Interrupted {
		p.F("| **interrupted** | %s |\n", s.StopReason)
	}
	if s.Aborted {
		p.F("| **aborted** | %s |\n", s.StopReason)
	}
	table := func(title string, pick func(*results.OpSummary) results.Latency) {
		p.F("\n### %s\n\n| op | count | rate/s | errors | p50 | p90 | p99 | p99.9 | max |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", title)
		rows := append(slices.Clone(s.Ops), s.All)
		for i := range rows {
			o := &rows[i]
			l := pick(o)
			name := "`" + o.Name + "`"
			if i == len(rows)-1 {
				name = "**all**"
			}
			p.F("| %s | %d | %.1f | %d | %s | %s | %s | %s | %s |\n", name, o.Count, o.Rate, o.Errors, textfmt.MS(l.P50), textfmt.MS(l.P90), textfmt.MS(l.P99), textfmt.MS(l.P999), textfmt.MS(l.Max))
		}
	}
	table("Response time (ms)", func(o *results.OpSummary) results.Latency { return o.Response })
	if s.Model == "open" {
		table("Service time (ms)", func(o *results.OpSummary) results.Latency { return o.Service })
	}
	p.iterationsMarkdown(s)
	if s.All.Errors > 0 {
		p.F("\n**Errors** %d (%.2f%%): %s\n", s.All.Errors, 100*s.All.ErrorRate, textfmt.Counts(s.All.ErrorsByClass))
	}
	if l := s.All.Ledger; l != nil {
		p.F("\n### Replay ledger\n\n%d response streams judged, %d faulty.\n\n| verdict | count |\n|---|---:|\n", l.Streams, l.Faulty)
		for _, v := range outcome.Verdicts() {
			p.F("| %s | %d |\n", v, l.Verdicts[v.String()])
		}
	}
	if len(s.Thresholds) > 0 {
		p.F("\n### Thresholds\n\n| threshold | actual | result |\n|---|---:|---|\n")
		for _, t := range s.Thresholds {
			res := "✅ pass"
			if !t.Pass {
				res = "❌ **fail**"
			}
			p.F("| `%s` | %.4g %s | %s |\n", t.Expr, t.Actual, t.Unit, res)
		}
	}
	for _, w := range s.Storms {
		p.F("\n**Storm at %.1f s**: %d reconnects, peak %.0f/s, wave +%.0f…+%.0f ms, %d early, recovery %.1f s.\n", w.AtS, w.Attempts, w.PeakPerSec, w.FirstMS, w.LastMS, w.Early, w.RecoveryS)
	}
	g := s.Generator
	p.F("\n_Generator: %.1f µs CPU per op, %.2f of %d cores._\n", g.CPUPerOpUS, g.Cores, g.NumCPU)
	return p.Err
}

// WriteSpectrum prints the wrk2-style detailed percentile spectrum of each
// op's response time (ms) from the run's merged histograms.
func WriteSpectrum(w io.Writer, r *results.Results) error {
	for _, name := range r.Ops {
		h := r.Histograms[results.HlogTag(name)+".response"]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "\nDetailed percentile spectrum: %s, response time (ms)\n%s\n", name, strings.Repeat("-", 60)); err != nil {
			return err
		}
		if _, err := h.PercentilesPrint(w, 5, 1000); err != nil {
			return err
		}
	}
	return nil
}
