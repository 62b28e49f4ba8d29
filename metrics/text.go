package metrics

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
)

// WriteText prints the summary as a wrk2-style table: per op count, rate,
// errors and response-time percentiles (and service time when the open
// model makes them differ), then resumes, the replay ledger, sessions and
// the generator's own cost. It reads only s, so a saved summary.json
// prints the same text.
func WriteText(w io.Writer, s *Summary) error {
	p := &printer{w: w}
	target := s.Target
	if s.Embedded {
		target += " (embedded reference server)"
	}
	p.f("mcpbench  %s  ·  protocol %s  ·  %s\n", target, s.Protocol, s.Tool)
	if s.ProtocolWhy != "" {
		p.f("protocol %s: %s\n", s.Protocol, s.ProtocolWhy)
	}
	model := fmt.Sprintf("closed model, %d VUs", s.VUs)
	if s.Model == "open" {
		model = fmt.Sprintf("open model, arrival rate %.4g/s, %d VUs (max %d)", s.TargetRate, s.VUs, s.MaxVUs)
	}
	p.f("profile %s  ·  %s  ·  %.1fs measured after %.1fs warm-up\n", s.Profile, model, s.DurationS, s.WarmupS)
	if s.Interrupted {
		p.f("INTERRUPTED: %s — results cover the run up to that point\n", s.StopReason)
	}
	for _, n := range s.Notes {
		p.f("note: %s\n", n)
	}
	if s.DropWarning != "" {
		p.f("WARNING: %s\n", s.DropWarning)
	}
	p.f("\n")
	if s.All.Count == 0 && s.Sessions.Opened == 0 && s.Sessions.Failed > 0 {
		p.f("No operation ran: no session could be initialized (%d attempts failed: %s)\n", s.Sessions.Failed, classList(s.Sessions.FailClasses))
		p.examples(s.Sessions.FailExamples)
		return p.err
	}
	title := "Response time (ms, completed ops)"
	if s.Model == "open" {
		title = "Response time (ms, completed ops, from the intended start: coordinated omission corrected)"
	}
	p.latencyTable(title, s, func(o *OpSummary) Latency { return o.Response })
	if s.Model == "open" {
		p.f("\n")
		p.latencyTable("Service time (ms, completed ops, from the actual send)", s, func(o *OpSummary) Latency { return o.Service })
	}
	if s.All.WithDropped != nil {
		p.f("\n")
		p.latencyTable(fmt.Sprintf("Response time with the %d dropped ops (ms; each dropped op at its lower bound: how late it was when dropped)", s.All.Dropped), s, func(o *OpSummary) Latency {
			if o.WithDropped != nil {
				return *o.WithDropped
			}
			return o.Response
		})
	}
	p.f("\n")
	if s.Model == "open" {
		p.f("Throughput: %.1f ops/s achieved of %.4g/s offered; dropped %d (%.2f%% of arrivals: could not start within the max delay)\n", s.Rate, s.TargetRate, s.Dropped, 100*s.DroppedRate)
	} else {
		p.f("Throughput: %.1f ops/s\n", s.Rate)
	}
	if t := s.All.TTFB; s.All.Count > 0 {
		p.f("Time to first byte (all ops, ms): p50 %s p90 %s p99 %s p99.9 %s max %s mean %s\n", ms(t.P50), ms(t.P90), ms(t.P99), ms(t.P999), ms(t.Max), ms(t.Mean))
	}
	if s.All.Errors > 0 {
		p.f("Errors: %d of %d (%.2f%%): %s\n", s.All.Errors, s.All.Count, 100*s.All.ErrorRate, classList(s.All.ErrorsByClass))
		p.examples(s.All.ErrorExamples)
	} else {
		p.f("Errors: 0\n")
	}
	if s.All.Interrupted > 0 {
		p.f("Interrupted by the end of the run (not in latency): %d\n", s.All.Interrupted)
	}
	if n := s.All.Throttled; n > 0 {
		p.f("Throttled: %d ops answered 429/503 with Retry-After; their VUs waited %.1f s in all before the next op\n", n, s.All.ThrottleWaitS)
	}
	if n := s.All.Reinits; n > 0 {
		p.f("Sessions re-initialized after 404: %d\n", n)
	}
	if n := s.All.Reissues; n > 0 {
		p.f("Requests re-issued after a break with nothing to resume from: %d re-issues, %d requests completed after one; %.0f ms of work wasted on the broken attempts\n", n, s.All.ReissuedOK, s.All.WastedMS)
	}
	if n := s.All.InputRounds; n > 0 {
		p.f("Multi round-trip requests: %d input_required rounds answered\n", n)
	}
	if sv := s.Server; sv != nil {
		p.f("Reference server: %d tool executions; count tool: %d keys, %d executed more than once (a re-issued request that ran twice)\n", sv.ToolCalls, sv.CountKeys, sv.DoubleExecutions)
	}
	if r := s.All.Resumes; r != nil {
		p.f("Resumes (response streams): %d attempts, %d accepted, %d early (before the retry hint); time to resume p50 %s p99 %s max %s ms; reconnect delay p50 %s p99 %s ms\n",
			r.Attempts, r.Accepted, r.Early, ms(r.TimeToResume.P50), ms(r.TimeToResume.P99), ms(r.TimeToResume.Max), ms(r.Wait.P50), ms(r.Wait.P99))
	}
	if l := s.All.Ledger; l != nil {
		p.f("Replay ledger (response streams): %d judged, %d faulty: %s\n", l.Streams, l.Faulty, verdictList(l.Verdicts))
	}
	if g := s.GETStreams; g != nil {
		p.f("GET streams: %d opened, %d not offered (405), %d failed; %d events, %d server requests answered; %d breaks%s\n",
			g.Opened, g.None, g.Failed, g.Events, g.Requests, g.Breaks, causeList(g.BreakCauses))
		if r := g.Resumes; r != nil {
			p.f("  resumes (with Last-Event-ID: the server can replay what was sent meanwhile): %d attempts, %d accepted, %d early; time to resume p50 %s p99 %s ms\n", r.Attempts, r.Accepted, r.Early, ms(r.TimeToResume.P50), ms(r.TimeToResume.P99))
		}
		if r := g.ReopenAttempts; r != nil {
			p.f("  re-opens (without Last-Event-ID: the stream carried no event id, so what was sent meanwhile is lost): %d attempts, %d accepted, %d early; time to reopen p50 %s p99 %s ms\n", r.Attempts, r.Accepted, r.Early, ms(r.TimeToResume.P50), ms(r.TimeToResume.P99))
		}
		if g.FailExample != "" {
			p.f("  e.g. %s\n", g.FailExample)
		}
		if l := g.Ledger; l != nil {
			p.f("  replay ledger: %d judged, %d faulty: %s\n", l.Streams, l.Faulty, verdictList(l.Verdicts))
		}
	}
	if c := s.Chaos; c != nil {
		outside := ""
		if c.Outside > 0 {
			outside = fmt.Sprintf(" (and %d faults outside the measured window)", c.Outside)
		}
		p.f("Chaos (seed %d): %d cuts (%d rst, %d fin), %d stalls, %d delays, %d streams cut by storms%s\n", c.Seed, c.CutsRST+c.CutsFIN, c.CutsRST, c.CutsFIN, c.Stalls, c.Delays, c.StormCuts, outside)
	}
	for _, w := range s.Storms {
		p.f("Storm at %.1fs: %d reconnect attempts, peak %.0f/s (100 ms window); after the cut: first +%.0f ms, p50 +%.0f ms, p95 +%.0f ms, last +%.0f ms (wave %.0f ms wide); %d early (before the retry hint)\n",
			w.AtS, w.Attempts, w.PeakPerSec, w.FirstMS, w.P50MS, w.P95MS, w.LastMS, w.SpreadMS, w.Early)
		rec := "still degraded at the end of the run"
		switch {
		case w.RecoveryS == 0:
			rec = "no interval degraded"
		case w.RecoveryS > 0:
			rec = fmt.Sprintf("recovered %.1f s after the cut", w.RecoveryS)
		}
		p.f("  errors during the wave %d, worst interval p99 %s ms; %s (degraded: interval p99 > max(2×, +5 ms) of the pre-storm %s ms, or errors > %.2f%% + 1%%)\n", w.Errors, ms(w.PeakP99MS), rec, ms(w.BaseP99MS), 100*w.BaseErrors)
	}
	ss := s.Sessions
	p.f("Sessions: %d opened, %d failed%s; initialize p50 %s p99 %s ms; %d closed, %d close failures\n",
		ss.Opened, ss.Failed, failList(ss.FailClasses), ms(ss.Initialize.P50), ms(ss.Initialize.P99), ss.Closed, ss.CloseFails)
	if ss.Failed > 0 {
		p.examples(ss.FailExamples)
	}
	if ss.Churned > 0 {
		p.f("Churn: %d sessions replaced during the run\n", ss.Churned)
	}
	if h := ss.Hygiene; h != nil {
		p.f("Session hygiene: %d deleted sessions probed, %d faulty: deleted-session-accepted %d · wrong-missing-session-status %d%s\n",
			h.Probed, h.Faulty, h.Verdicts[driver.VerdictDeletedSessionAccepted.String()], h.Verdicts[driver.VerdictWrongMissingStatus.String()], statusList(h.Statuses))
	}
	if ss.BadSessionIDs > 0 {
		p.f("Session ids outside visible ASCII (the spec says MUST only contain 0x21–0x7E): %d\n", ss.BadSessionIDs)
	}
	if ss.Redirects > 0 {
		p.f("Redirects followed (307/308, --follow-redirects): %d\n", ss.Redirects)
	}
	if len(s.Thresholds) > 0 {
		p.f("Thresholds: %d of %d passed\n", len(s.Thresholds)-ThresholdsFailed(s.Thresholds), len(s.Thresholds))
		for _, t := range s.Thresholds {
			mark, actual := "PASS", fmt.Sprintf("%.4g %s", t.Actual, t.Unit)
			if !t.Pass {
				mark = "FAIL"
			}
			if t.Actual < 0 && !t.Pass {
				actual = "no data"
			}
			p.f("  %s  %-40s (actual %s)\n", mark, t.Expr, strings.TrimSpace(actual))
		}
	}
	g := s.Generator
	note := ""
	if g.IncludesServer {
		note = " (includes the embedded server: use --url against a separate server to measure mcpbench alone)"
	}
	procs := ""
	if g.GOMAXPROCS > 0 && g.GOMAXPROCS < g.NumCPU {
		procs = fmt.Sprintf(" (GOMAXPROCS %d)", g.GOMAXPROCS)
	}
	p.f("Generator: %.2f CPU-s, %.1f µs CPU per op, %.2f of %d cores%s, max RSS %.0f MB%s\n", g.CPUSeconds, g.CPUPerOpUS, g.Cores, g.NumCPU, procs, g.MaxRSSMB, note)
	if g.BudgetWaits > 0 {
		p.f("Large messages: %d reads waited for the %.0f MB large-message memory budget (peak %.0f MB held); the wait is in their latency\n", g.BudgetWaits, g.BudgetMB, g.BudgetPeakMB)
	}
	if g.Bottleneck != "" {
		p.f("WARNING: %s\n", g.Bottleneck)
	}
	if t := s.TargetProc; t != nil {
		if t.Error != "" {
			p.f("Target process %d: not sampled: %s\n", t.PID, t.Error)
		} else {
			p.f("Target process %d: %.2f CPU-s, %.1f µs CPU per op, %.2f cores; RSS %.0f → %.0f MB (max %.0f); fds %d → %d (max %d); %d threads\n",
				t.PID, t.CPUSeconds, t.CPUPerOpUS, t.Cores, t.RSSStartMB, t.RSSEndMB, t.RSSMaxMB, t.FDsStart, t.FDsEnd, t.FDsMax, t.Threads)
		}
	}
	if s.Model == "open" {
		p.f("Start lag (sent after the intended start; in response time, not service time): p50 %s p99 %s max %s ms\n", ms(g.StartLag.P50), ms(g.StartLag.P99), ms(g.StartLag.Max))
	}
	return p.err
}

// examples prints one message per error class.
func (p *printer) examples(m map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p.f("  e.g. %s: %s\n", k, m[k])
	}
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) latencyTable(title string, s *Summary, pick func(*OpSummary) Latency) {
	p.f("%s\n", title)
	width := len("op")
	for _, o := range s.Ops {
		width = max(width, len(o.Name))
	}
	p.f("%-*s %9s %9s %7s %9s %9s %9s %9s %9s %9s\n", width, "op", "count", "rate/s", "errors", "p50", "p90", "p99", "p99.9", "max", "mean")
	row := func(o *OpSummary) {
		l := pick(o)
		p.f("%-*s %9d %9.1f %7d %9s %9s %9s %9s %9s %9s\n", width, o.Name, o.Count, o.Rate, o.Errors, ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max), ms(l.Mean))
	}
	for i := range s.Ops {
		row(&s.Ops[i])
	}
	if len(s.Ops) > 1 {
		row(&s.All)
	}
}

// ms formats milliseconds with 3 significant decimals for small values.
func ms(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	case v < 100:
		return fmt.Sprintf("%.2f", v)
	case v < 10000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func classList(m map[string]int64) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func failList(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	return " (" + classList(m) + ")"
}

func verdictList(m map[string]int64) string {
	var parts []string
	for _, v := range driver.StreamVerdicts {
		parts = append(parts, fmt.Sprintf("%s %d", v, m[v.String()]))
	}
	return strings.Join(parts, " · ")
}

// causeList renders GET-stream break causes: " (ended 3, transport 2)".
func causeList(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	return " (" + classList(m) + ")"
}

// statusList renders observed HTTP statuses: "; answered HTTP 200 ×3".
func statusList(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("HTTP %s ×%d", k, m[k]))
	}
	return "; faulty sessions answered " + strings.Join(parts, ", ")
}
