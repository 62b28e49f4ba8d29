package report

import (
	"fmt"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// Model is what every report of a run says besides its charts, built
// once from the run's summary (Build): the verdict, the lines that stop
// or qualify the results (interrupted, aborted, notes, features that
// could not apply), every warning with its id, cause and remedy, and the
// response-time table with the dropped ops. The text summary (WriteText)
// and the HTML reports (plots: a run's, a soak's, the dashboard's end
// page) render the same Model, so the terminal and report.html say the
// same. Its fields are plain text (the HTML report escapes them).
type Model struct {
	// Verdict is the verdict line: "Verdict: WARN — …" (see verdictLine);
	// Level its word: OK, WARN, FAIL or NONE.
	Verdict, Level string
	// Stops are the lines that say the run stopped early: "INTERRUPTED: …",
	// "ABORTED: …" (nil when it ran to the end).
	Stops []string
	// Notes are what the run changed or noticed, each "note: …".
	Notes []string
	// NotApplicable are the requested features that could not apply,
	// each "not applicable: FEATURE, because REASON".
	NotApplicable []string
	// Warnings are verdict.Warnings of the summary.
	Warnings []results.Warning
	// Dropped is the response-time table over completed and dropped ops
	// (nil without drops): offered ops, and the values that rest on a
	// dropped op's lower bound marked ≥.
	Dropped *Table
}

// Table is a table of a report: its title, the column names and the rows,
// every cell as printed (the first column is the op).
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// TroubleshootingDoc is where each warning id has its entry (the id,
// lower-cased, is its anchor).
const TroubleshootingDoc = "docs/troubleshooting.md"

// Build makes the report model of s. It reads s only; the warnings are
// judged again from s's numbers (verdict.Warnings), so a merged run's, or
// one read back from summary.json, are its own.
func Build(s *results.Summary) *Model {
	m := &Model{Warnings: verdict.Warnings(s)}
	m.Verdict = verdictLine(s)
	m.Level, _, _ = strings.Cut(strings.TrimPrefix(m.Verdict, "Verdict: "), " ")
	if s.Interrupted {
		m.Stops = append(m.Stops, fmt.Sprintf("INTERRUPTED: %s — results cover the run up to that point", s.StopReason))
	}
	if s.Aborted {
		m.Stops = append(m.Stops, fmt.Sprintf("ABORTED: %s — results cover the run up to that point", s.StopReason))
	}
	for _, n := range s.Notes {
		m.Notes = append(m.Notes, "note: "+n)
	}
	for _, n := range s.NotApplicable {
		m.NotApplicable = append(m.NotApplicable, n.String())
	}
	if s.All.WithDropped != nil {
		m.Dropped = droppedTable(s)
	}
	return m
}

// WarningLines are a warning as the reports print it: what was seen with
// its id, then its cause and its remedy with where to read more.
func WarningLines(w results.Warning) (head, cause, remedy string) {
	return fmt.Sprintf("WARNING %s: %s", w.ID, w.Text), "cause: " + w.Cause,
		fmt.Sprintf("remedy: %s (%s#%s)", w.Remedy, TroubleshootingDoc, strings.ToLower(w.ID))
}

// Lines are the model's lines as the text summary prints them before its
// tables (the Next: line apart): the verdict, the stops, the notes, the
// not-applicable lines, then each warning's head, cause and remedy. The
// HTML reports show the same lines; tests compare the two.
func (m *Model) Lines() []string {
	out := []string{m.Verdict}
	out = append(out, m.Stops...)
	out = append(out, m.Notes...)
	out = append(out, m.NotApplicable...)
	for _, w := range m.Warnings {
		h, c, r := WarningLines(w)
		out = append(out, h, c, r)
	}
	return out
}

// droppedTable is response time over completed and dropped ops: count
// and rate are the offered ops (completed and dropped: what the
// percentiles cover); a dropped op enters at its lower bound, so a value
// that rests on one — at or above the op's smallest bound, and max and
// mean always — is a lower bound of the truth and marked "≥".
func droppedTable(s *results.Summary) *Table {
	interrupted := ""
	if n := s.All.Interrupted; n > 0 {
		interrupted = fmt.Sprintf("; the %d ops interrupted by the end of the run left out", n)
	}
	t := &Table{
		Title:  fmt.Sprintf("Response time with the %d dropped ops (ms; count and rate: offered ops, completed and dropped%s; a dropped op enters at its lower bound, how late it was when dropped, so a value marked ≥ rests on such bounds and the truth is at least that)", s.All.Dropped, interrupted),
		Header: []string{"op", "offered", "rate/s", "errors", "p50", "p90", "p99", "p99.9", "max", "mean"},
	}
	row := func(o *results.OpSummary) []string {
		if o.WithDropped == nil { // this op dropped nothing: its completed ops
			l := o.Response
			return []string{o.Name, fmt.Sprint(o.Count), fmt.Sprintf("%.1f", o.Rate), fmt.Sprint(o.Errors),
				textfmt.MS(l.P50), textfmt.MS(l.P90), textfmt.MS(l.P99), textfmt.MS(l.P999), textfmt.MS(l.Max), textfmt.MS(l.Mean)}
		}
		l := *o.WithDropped
		n, rate := o.Offered, o.OfferedRate
		if n == 0 { // a summary written before offered was recorded
			n = o.Count + o.Dropped
			if s.DurationS > 0 {
				rate = float64(n) / s.DurationS
			}
		}
		bound := func(v float64) string {
			if v >= o.CensoredFromMS {
				return "≥" + textfmt.MS(v)
			}
			return textfmt.MS(v)
		}
		return []string{o.Name, fmt.Sprint(n), fmt.Sprintf("%.1f", rate), fmt.Sprint(o.Errors),
			bound(l.P50), bound(l.P90), bound(l.P99), bound(l.P999), "≥" + textfmt.MS(l.Max), "≥" + textfmt.MS(l.Mean)}
	}
	for i := range s.Ops {
		t.Rows = append(t.Rows, row(&s.Ops[i]))
	}
	if len(s.Ops) > 1 {
		t.Rows = append(t.Rows, row(&s.All))
	}
	return t
}
