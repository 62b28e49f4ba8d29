package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
)

// WriteText prints the summary as a wrk2-style table: per op count, rate,
// errors and response-time percentiles (and service time when the open
// model makes them differ), then resumes, the replay ledger, sessions and
// the generator's own cost. It reads only s, so a saved summary.json
// prints the same text. Its first lines give the verdict
// (verdictLine); WriteTextIn adds where to look next.
func WriteText(w io.Writer, s *results.Summary) error {
	return writeText(w, s, TextOptions{})
}

func writeText(w io.Writer, s *results.Summary, o TextOptions) error {
	p := &printer{Printer: textfmt.Printer{W: w}, m: Build(s)}
	p.header(s, o)
	if s.All.Count == 0 && s.Sessions.Opened == 0 && s.Sessions.Failed > 0 {
		p.F("No operation ran: no session could be initialized (%d attempts failed: %s)\n", s.Sessions.Failed, textfmt.Counts(s.Sessions.FailClasses))
		p.examples(s.Sessions.FailExamples)
		return p.Err
	}
	p.latency(s)
	p.iterations(s)
	p.endpoints(s)
	p.throughput(s)
	p.streams(s)
	p.mcp(s)
	p.checks(s) // checks.go
	p.chaos(s)
	p.sessions(s)
	p.net(s)
	p.thresholds(s.Thresholds)
	p.generator(s)
	p.segments(s)
	return p.Err
}

// header prints the target, protocol, load model, window, the verdict
// and where to look next (o.Dir: the results directory, "" none), and any
// warning, then a blank line.
func (p *printer) header(s *results.Summary, o TextOptions) {
	target := s.Target
	if s.Embedded {
		target += " (embedded reference server)"
	}
	p.F("mcpbench  %s  ·  protocol %s%s  ·  %s\n", target, s.Protocol, netHeader(s.Net), s.Tool)
	if s.ProtocolWhy != "" {
		p.F("protocol %s: %s\n", s.Protocol, s.ProtocolWhy)
	}
	model := fmt.Sprintf("closed model, %d VUs", s.VUs)
	switch {
	case s.Model == "open" && s.Stages != "":
		model = fmt.Sprintf("open model, arrival rate ramping %s (%.4g/s on average), %d VUs (max %d)", s.Stages, s.TargetRate, s.VUs, s.MaxVUs)
	case s.Model == "open" && len(s.Scenarios) > 0:
		model = fmt.Sprintf("open model, %.4g iterations/s, %d VUs (max %d)", s.TargetRate, s.VUs, s.MaxVUs)
	case s.Model == "open":
		model = fmt.Sprintf("open model, arrival rate %.4g/s, %d VUs (max %d)", s.TargetRate, s.VUs, s.MaxVUs)
	case s.Stages != "":
		model = fmt.Sprintf("closed model, VUs ramping %s (%d started)", s.Stages, s.VUs)
	}
	if s.Concurrency > 1 {
		model += fmt.Sprintf(", %d requests in flight per session (measured mean %.2f)", s.Concurrency, s.InFlight)
	}
	p.F("profile %s  ·  %s  ·  %.1fs measured after %.1fs warm-up\n", s.Profile, model, s.DurationS, s.WarmupS)
	p.F("%s\n", p.m.Verdict)
	if next := nextLine(s, o); next != "" {
		p.F("%s\n", next)
	}
	for _, l := range p.m.Lines()[1:] {
		if strings.HasPrefix(l, "cause: ") || strings.HasPrefix(l, "remedy: ") {
			l = "  " + l
		}
		p.F("%s\n", l)
	}
	p.F("\n")
}

// latency prints the response-time table, then service time (open model)
// and response time with dropped ops counted (when any were dropped).
func (p *printer) latency(s *results.Summary) {
	title := "Response time (ms, completed ops)"
	if s.Model == "open" {
		title = "Response time (ms, completed ops, from the intended start: coordinated omission corrected)"
	}
	p.latencyTable(title, s, func(o *results.OpSummary) results.Latency { return o.Response })
	if s.Model == "open" {
		p.F("\n")
		p.latencyTable("Service time (ms, completed ops, from the actual send)", s, func(o *results.OpSummary) results.Latency { return o.Service })
	}
	if t := p.m.Dropped; t != nil {
		p.F("\n")
		p.table(t, s)
	}
}

// throughput prints the achieved rate, time to first byte, errors and the
// counters of throttled, re-initialized and re-issued work.
func (p *printer) throughput(s *results.Summary) {
	p.F("\n")
	if len(s.Scenarios) > 0 {
		its := 0.0
		for _, sc := range s.Scenarios {
			its += sc.Rate
		}
		if s.Model == "open" {
			p.F("Throughput: %.1f ops/s in %.1f iterations/s achieved of %.4g/s offered; dropped %d iterations (%.2f%% of arrivals: could not start within the max delay)\n", s.Rate, its, s.TargetRate, s.Dropped, 100*s.DroppedRate)
		} else {
			p.F("Throughput: %.1f ops/s in %.1f iterations/s\n", s.Rate, its)
		}
	} else if s.Model == "open" {
		p.F("Throughput: %.1f ops/s achieved of %.4g/s offered; dropped %d (%.2f%% of arrivals: could not start within the max delay)\n", s.Rate, s.TargetRate, s.Dropped, 100*s.DroppedRate)
	} else {
		p.F("Throughput: %.1f ops/s\n", s.Rate)
	}
	p.tailWaits(s)
	if t := s.All.TTFB; s.All.Count > 0 {
		p.F("Time to first byte (all ops, ms): p50 %s p90 %s p99 %s p99.9 %s max %s mean %s\n", textfmt.MS(t.P50), textfmt.MS(t.P90), textfmt.MS(t.P99), textfmt.MS(t.P999), textfmt.MS(t.Max), textfmt.MS(t.Mean))
	}
	if s.All.Errors > 0 {
		p.F("Errors: %d of %d (%.2f%%): %s\n", s.All.Errors, s.All.Count, 100*s.All.ErrorRate, textfmt.Counts(s.All.ErrorsByClass))
		p.examples(s.All.ErrorExamples)
	} else {
		p.F("Errors: 0\n")
	}
	if s.All.Interrupted > 0 {
		p.F("Interrupted by the end of the run (not in latency): %d\n", s.All.Interrupted)
	}
	if n := s.All.Throttled; n > 0 {
		p.F("Throttled: %d ops answered 429/503 with Retry-After; their VUs waited %.1f s in all before the next op\n", n, s.All.ThrottleWaitS)
	}
	if n := s.All.Reinits; n > 0 {
		p.F("Sessions re-initialized after 404: %d\n", n)
	}
	if n := s.All.Reissues; n > 0 {
		p.F("Requests re-issued after a break with nothing to resume from: %d re-issues, %d requests completed after one; %.0f ms of work wasted on the broken attempts\n", n, s.All.ReissuedOK, s.All.WastedMS)
	}
	if n := s.All.InputRounds; n > 0 {
		p.F("Multi round-trip requests: %d input_required rounds answered\n", n)
	}
	if sv := s.Server; sv != nil && (sv.CountKeys > 0 || sv.DoubleExecutions > 0) { // the count tool ran: re-executions to tell
		p.F("Reference server: %d tool executions; count tool: %d keys, %d executed more than once (a re-issued request that ran twice)\n", sv.ToolCalls, sv.CountKeys, sv.DoubleExecutions)
	}
}

// streams prints resumes and the replay ledger of response streams, then
// the GET streams with their resumes, re-opens and ledger.
func (p *printer) streams(s *results.Summary) {
	if r := s.All.Resumes; r != nil {
		p.F("Resumes (response streams): %d attempts, %d accepted, %d early (before the retry hint); time to resume p50 %s p99 %s max %s ms; reconnect delay p50 %s p99 %s ms\n",
			r.Attempts, r.Accepted, r.Early, textfmt.MS(r.TimeToResume.P50), textfmt.MS(r.TimeToResume.P99), textfmt.MS(r.TimeToResume.Max), textfmt.MS(r.Wait.P50), textfmt.MS(r.Wait.P99))
	}
	p.linkResumes("  ", s.All.Resumes)
	p.resumeBounds("  ", s.All.Resumes)
	if l := s.All.Ledger; l != nil {
		p.F("Replay ledger (response streams): %d judged, %d faulty%s\n", l.Streams, l.Faulty, verdictList(l.Verdicts))
	}
	p.linkLedger("  ", s.All.Ledger)
	if g := s.GETStreams; g != nil {
		p.F("%s: %d opened, %d not offered (405), %d failed; %d events, %d server requests answered; %d breaks%s\n",
			streamName(s), g.Opened, g.None, g.Failed, g.Events, g.Requests, g.Breaks, causeList(g.BreakCauses))
		if r := g.Resumes; r != nil {
			p.F("  resumes (with Last-Event-ID: the server can replay what was sent meanwhile): %d attempts, %d accepted, %d early; time to resume p50 %s p99 %s ms\n", r.Attempts, r.Accepted, r.Early, textfmt.MS(r.TimeToResume.P50), textfmt.MS(r.TimeToResume.P99))
		}
		p.linkResumes("    ", g.Resumes)
		p.resumeBounds("    ", g.Resumes)
		if r := g.ReopenAttempts; r != nil {
			p.F("  re-opens (without Last-Event-ID: the stream carried no event id, so what was sent meanwhile is lost): %d attempts, %d accepted, %d early; time to reopen p50 %s p99 %s ms\n", r.Attempts, r.Accepted, r.Early, textfmt.MS(r.TimeToResume.P50), textfmt.MS(r.TimeToResume.P99))
		}
		if g.FailExample != "" {
			p.F("  e.g. %s\n", g.FailExample)
		}
		if l := g.Ledger; l != nil {
			p.F("  replay ledger: %d judged, %d faulty%s\n", l.Streams, l.Faulty, verdictList(l.Verdicts))
		}
		p.linkLedger("    ", g.Ledger)
	}
}

// chaos prints the faults injected and one block per reconnect storm.
func (p *printer) chaos(s *results.Summary) {
	if c := s.Chaos; c != nil {
		outside := ""
		if c.Outside > 0 {
			outside = fmt.Sprintf(" (and %d faults outside the measured window)", c.Outside)
		}
		p.F("Chaos (seed %d): %d cuts (%d rst, %d fin), %d stalls, %d delays, %d streams cut by storms%s\n", c.Seed, c.CutsRST+c.CutsFIN, c.CutsRST, c.CutsFIN, c.Stalls, c.Delays, c.StormCuts, outside)
		if c.StreamResets+c.ConnCloses > 0 {
			p.F("  the cuts broke %d HTTP/2 streams alone (RST_STREAM: the connection and the session's other streams kept) and %d connections (closed with every stream on them; over HTTP/1.1 every cut)\n", c.StreamResets, c.ConnCloses)
		}
	}
	for _, w := range s.Storms {
		normal := fmt.Sprintf("; beside them %d normal reconnects (no storm cut before them: streams the server ended, other faults; %.1f/s in the 10 s before the storm)", w.Normal, w.NormalPerSec)
		if w.Attempts == 0 {
			p.F("Storm at %.1fs: no reconnect attempt followed the cut: 0 reconnect attempts caused by its %d cuts (no wave to time)%s\n", w.AtS, w.Cuts, normal)
			continue
		}
		p.F("Storm at %.1fs: %d reconnect attempts caused by its %d cuts, peak %.0f/s (100 ms window); after the cut: first +%.0f ms, p50 +%.0f ms, p95 +%.0f ms, last +%.0f ms (wave %.0f ms wide); %d early (before the retry hint)%s\n",
			w.AtS, w.Attempts, w.Cuts, w.PeakPerSec, w.FirstMS, w.P50MS, w.P95MS, w.LastMS, w.SpreadMS, w.Early, normal)
		rec := "still degraded at the end of the run"
		switch {
		case w.RecoveryS == 0:
			rec = "no interval degraded"
		case w.RecoveryS > 0:
			rec = fmt.Sprintf("recovered %.1f s after the cut", w.RecoveryS)
		}
		p.F("  errors during the wave %d, worst interval p99 %s ms; %s (degraded: interval p99 > max(2×, +5 ms) of the pre-storm %s ms, or errors > %.2f%% + 1%%)\n", w.Errors, textfmt.MS(w.PeakP99MS), rec, textfmt.MS(w.BaseP99MS), 100*w.BaseErrors)
		if w.ViaLink > 0 {
			p.F("  %d of the wave's attempts went to a stream's rel=\"stream\" URL (SEP-1335)\n", w.ViaLink)
		}
	}
}

// sessions prints opened, failed and closed sessions, churn, hygiene,
// session-id and redirect counters.
func (p *printer) sessions(s *results.Summary) {
	ss := s.Sessions
	p.F("Sessions: %d opened, %d failed%s; %s p50 %s p99 %s ms; %d closed, %d close failures\n",
		ss.Opened, ss.Failed, failList(ss.FailClasses), setupName(s), textfmt.MS(ss.Initialize.P50), textfmt.MS(ss.Initialize.P99), ss.Closed, ss.CloseFails)
	if ss.Failed > 0 {
		p.examples(ss.FailExamples)
	}
	if ss.Churned > 0 {
		p.F("Churn: %d sessions replaced during the run\n", ss.Churned)
	}
	if h := ss.Hygiene; h != nil {
		p.F("Session hygiene: %d deleted sessions probed, %d faulty: deleted-session-accepted %d · wrong-missing-session-status %d%s\n",
			h.Probed, h.Faulty, h.Verdicts[outcome.VerdictDeletedSessionAccepted.String()], h.Verdicts[outcome.VerdictWrongMissingStatus.String()], textfmt.Statuses(h.Statuses))
	}
	if ss.BadSessionIDs > 0 {
		p.F("Session ids outside visible ASCII (the spec says MUST only contain 0x21–0x7E): %d\n", ss.BadSessionIDs)
	}
	if ss.Redirects > 0 {
		p.F("Redirects followed (307/308, --follow-redirects): %d\n", ss.Redirects)
	}
}

// thresholds prints one PASS/FAIL line per threshold.
func (p *printer) thresholds(ts []results.ThresholdResult) {
	if len(ts) > 0 {
		p.F("Thresholds: %d of %d passed\n", len(ts)-results.ThresholdsFailed(ts), len(ts))
		for _, t := range ts {
			mark, actual := "PASS", fmt.Sprintf("%.4g %s", t.Actual, t.Unit)
			if !t.Pass {
				mark = "FAIL"
			}
			if t.Actual < 0 && !t.Pass {
				actual = "no data"
			}
			p.F("  %s  %-40s (actual %s)\n", mark, t.Expr, strings.TrimSpace(actual))
		}
	}
}

// generator prints mcpbench's own cost, the target process's when sampled
// and the start lag of the open model.
func (p *printer) generator(s *results.Summary) {
	g := s.Generator
	note := ""
	if g.IncludesServer {
		note = " (includes the embedded server: use --url against a separate server to measure mcpbench alone)"
	}
	procs := ""
	if g.GOMAXPROCS > 0 && g.GOMAXPROCS < g.NumCPU {
		procs = fmt.Sprintf(" (GOMAXPROCS %d)", g.GOMAXPROCS)
	}
	p.F("Generator: %.2f CPU-s, %.1f µs CPU per op, %.2f of %d cores%s, max RSS %.0f MB%s\n", g.CPUSeconds, g.CPUPerOpUS, g.Cores, g.NumCPU, procs, g.MaxRSSMB, note)
	if g.BudgetWaits > 0 {
		// The peak is what the budget had reserved at most: the buffers of
		// the large messages being read at once (driver.Budget). Dropped
		// buffers stay in the process until the Go collector reclaims
		// them, which max RSS counts too.
		p.F("Large messages: %d reads waited for the %.0f MB large-message memory budget (their buffers peaked at %.0f MB in use at once; max RSS also counts dropped ones the Go collector had not yet reclaimed); the wait is in their latency\n", g.BudgetWaits, g.BudgetMB, g.BudgetPeakMB)
	}
	if t := s.TargetProc; t != nil {
		if t.Error != "" {
			p.F("Target process %d: not sampled: %s\n", t.PID, t.Error)
		} else {
			p.F("Target process %d: %.2f CPU-s, %.1f µs CPU per op, %.2f cores; RSS %.0f → %.0f MB (max %.0f); fds %d → %d (max %d); %d threads\n",
				t.PID, t.CPUSeconds, t.CPUPerOpUS, t.Cores, t.RSSStartMB, t.RSSEndMB, t.RSSMaxMB, t.FDsStart, t.FDsEnd, t.FDsMax, t.Threads)
		}
	}
	if s.Model == "open" {
		p.F("Start lag (sent after the intended start; in response time, not service time): p50 %s p99 %s max %s ms\n", textfmt.MS(g.StartLag.P50), textfmt.MS(g.StartLag.P99), textfmt.MS(g.StartLag.Max))
	}
}

// examples prints one message per error class.
func (p *printer) examples(m map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p.F("  e.g. %s: %s\n", k, m[k])
	}
}

type printer struct {
	textfmt.Printer
	m *Model // what the text shares with the HTML report
}

func (p *printer) latencyTable(title string, s *results.Summary, pick func(*results.OpSummary) results.Latency) {
	p.F("%s\n", title)
	width := len("op")
	for _, o := range s.Ops {
		width = max(width, len(o.Name))
	}
	p.F("%-*s %9s %9s %7s %9s %9s %9s %9s %9s %9s\n", width, "op", "count", "rate/s", "errors", "p50", "p90", "p99", "p99.9", "max", "mean")
	row := func(o *results.OpSummary) {
		l := pick(o)
		p.F("%-*s %9d %9.1f %7d %9s %9s %9s %9s %9s %9s\n", width, o.Name, o.Count, o.Rate, o.Errors, textfmt.MS(l.P50), textfmt.MS(l.P90), textfmt.MS(l.P99), textfmt.MS(l.P999), textfmt.MS(l.Max), textfmt.MS(l.Mean))
	}
	for i := range s.Ops {
		row(&s.Ops[i])
	}
	if len(s.Ops) > 1 {
		row(&s.All)
	}
}

// table prints t as the latency tables are: the op column as wide as
// the longest op name, the others right-aligned.
func (p *printer) table(t *Table, s *results.Summary) {
	p.F("%s\n", t.Title)
	width := len("op")
	for _, o := range s.Ops {
		width = max(width, len(o.Name))
	}
	widths := []int{9, 9, 7, 9, 9, 9, 9, 9, 9}
	line := func(cells []string) {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", width, cells[0])
		for i, c := range cells[1:] {
			w := 9
			if i < len(widths) {
				w = widths[i]
			}
			fmt.Fprintf(&b, " %*s", w, c)
		}
		p.F("%s\n", b.String())
	}
	line(t.Header)
	for _, r := range t.Rows {
		line(r)
	}
}

func failList(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	return " (" + textfmt.Counts(m) + ")"
}

// verdictList renders a ledger's verdicts after its counts: ": lost 60 ·
// duplicated 61 · …", or "" when every verdict is 0 (nothing to say).
func verdictList(m map[string]int64) string {
	var parts []string
	some := false
	for _, v := range outcome.StreamVerdicts {
		parts = append(parts, fmt.Sprintf("%s %d", v, m[v.String()]))
		some = some || m[v.String()] != 0
	}
	if !some {
		return ""
	}
	return ": " + strings.Join(parts, " · ")
}

// causeList renders GET-stream break causes: " (ended 3, transport 2)".
func causeList(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	return " (" + textfmt.Counts(m) + ")"
}
