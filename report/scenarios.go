package report

import (
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// iterations prints the scenarios' iteration times (what a user of an
// agent waits for); the steps' own rows are in the op tables.
func (p *printer) iterations(s *results.Summary) {
	if len(s.Scenarios) == 0 {
		return
	}
	p.F("\nIterations (ms, from the iteration's intended start to the end of its last step, think times included)\n")
	width := len("scenario")
	for _, sc := range s.Scenarios {
		width = max(width, len(sc.Name))
	}
	p.F("%-*s %9s %9s %7s %9s %9s %9s %9s %9s %9s\n", width, "scenario", "count", "rate/s", "failed", "p50", "p90", "p99", "p99.9", "max", "mean")
	for _, sc := range s.Scenarios {
		l := sc.Iteration
		p.F("%-*s %9d %9.1f %7d %9s %9s %9s %9s %9s %9s\n", width, sc.Name, sc.Iterations, sc.Rate, sc.Failed, textfmt.MS(l.P50), textfmt.MS(l.P90), textfmt.MS(l.P99), textfmt.MS(l.P999), textfmt.MS(l.Max), textfmt.MS(l.Mean))
	}
	for _, sc := range s.Scenarios {
		p.F("  %s: %s", sc.Name, strings.Join(sc.Steps, " → "))
		if sc.Dropped > 0 {
			p.F("  (%d iterations dropped: not started within the max delay)", sc.Dropped)
		}
		p.F("\n")
	}
}

// iterationsMarkdown is iterations as a markdown table.
func (p *printer) iterationsMarkdown(s *results.Summary) {
	if len(s.Scenarios) == 0 {
		return
	}
	p.F("\n### Iterations (ms)\n\n| scenario | steps | count | rate/s | failed | p50 | p90 | p99 | p99.9 | max |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sc := range s.Scenarios {
		l := sc.Iteration
		p.F("| `%s` | %s | %d | %.1f | %d | %s | %s | %s | %s | %s |\n", sc.Name, strings.Join(sc.Steps, " → "), sc.Iterations, sc.Rate, sc.Failed,
			textfmt.MS(l.P50), textfmt.MS(l.P90), textfmt.MS(l.P99), textfmt.MS(l.P999), textfmt.MS(l.Max))
	}
}

// endpoints prints the results per endpoint (a run over several).
func (p *printer) endpoints(s *results.Summary) {
	if len(s.Endpoints) == 0 {
		return
	}
	p.F("\nEndpoints (sessions spread over %d; response time in ms)\n", len(s.Endpoints))
	width := len("endpoint")
	for _, e := range s.Endpoints {
		width = max(width, len(e.URL))
	}
	p.F("%-*s %9s %9s %9s %7s %9s %9s %9s\n", width, "endpoint", "sessions", "count", "rate/s", "errors", "p50", "p99", "max")
	for _, e := range s.Endpoints {
		l := e.Response
		p.F("%-*s %9d %9d %9.1f %7d %9s %9s %9s\n", width, e.URL, e.Sessions, e.Count, e.Rate, e.Errors, textfmt.MS(l.P50), textfmt.MS(l.P99), textfmt.MS(l.Max))
	}
}
