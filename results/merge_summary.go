package results

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/textfmt"
)

// The merged summary: counters summed, latencies from the merged
// histograms, the window the union of the segments' windows.

// summarize builds m.Summary from the segments' summaries and the merged
// histograms.
func (m *Merged) summarize() {
	first := m.segs[0].Summary
	s := &Summary{Tool: first.Tool, Target: first.Target, Embedded: first.Embedded, Protocol: first.Protocol, ProtocolWhy: first.ProtocolWhy,
		Profile: first.Profile, Model: first.Model, Started: m.origin, WarmupS: first.WarmupS, Stages: first.Stages, Concurrency: first.Concurrency}
	from, to := m.window()
	secs := max(textfmt.Round3(to.Sub(from).Seconds()), 0)
	s.DurationS = secs
	var stops, drops []string
	var arrivals float64
	for _, r := range m.segs {
		x := r.Summary
		s.InFlight += x.InFlight * float64(x.VUs) // weighted by VUs; divided below
		s.VUs += x.VUs
		s.MaxVUs += x.MaxVUs
		s.Dropped += x.Dropped
		arrivals += math.Round(x.TargetRate * x.DurationS) // the schedule's arrivals in its window
		s.Notes = appendNew(s.Notes, m.segmentNotes(r)...)
		s.NotApplicable = mergeNotApplicable(s.NotApplicable, x.NotApplicable)
		if x.Protocol != s.Protocol {
			s.Notes = appendNew(s.Notes, fmt.Sprintf("segments negotiated different protocols: %s (%s) and %s (%s)", s.Protocol, m.segs[0].Dir, x.Protocol, r.Dir))
		}
		if x.Interrupted {
			s.Interrupted = true
			stops = append(stops, segLabel(r)+": "+x.StopReason)
		}
		if x.DropWarning != "" {
			drops = append(drops, segLabel(r)+": "+x.DropWarning)
		}
		if x.Saturation != "" && s.Saturation == "" {
			s.Saturation = segLabel(r) + ": " + x.Saturation
		}
		s.Segments = append(s.Segments, segmentResult(r))
	}
	if s.VUs > 0 {
		s.InFlight = textfmt.Round3(s.InFlight / float64(s.VUs))
	}
	if secs > 0 {
		s.TargetRate = textfmt.Round3(arrivals / secs)
	}
	s.StopReason = strings.Join(stops, "; ")
	s.Ops, s.All = m.opRows(secs)
	s.Rate = s.All.Rate
	s.Scenarios = m.ScenarioList(secs)
	s.Endpoints = m.endpoints(secs)
	s.DroppedRate = droppedRate(s)
	if s.DroppedRate > 0.01 {
		s.DropWarning = fmt.Sprintf("dropped %d of %d arrivals (%.1f%%) over %d segments: %s", s.Dropped, s.All.Count+s.Dropped+s.All.Interrupted, 100*s.DroppedRate, len(m.segs), strings.Join(drops, "; "))
	}
	s.Sessions = m.sessions()
	s.GETStreams = m.getStreams()
	s.Generator = m.generator(s.All.Count)
	var netNotes []string
	s.Net, netNotes = m.net()
	s.Notes = appendNew(s.Notes, netNotes...)
	m.extras(s)
	s.Notes = appendNew(s.Notes, m.coverage()...)
	m.Summary = s
}

// window is the union of the segments' measured windows.
func (m *Merged) window() (from, to time.Time) {
	for i, r := range m.segs {
		x := r.Summary
		f := x.Started.Add(time.Duration(x.WarmupS * float64(time.Second)))
		t := f.Add(time.Duration(x.DurationS * float64(time.Second)))
		if i == 0 || f.Before(from) {
			from = f
		}
		if i == 0 || t.After(to) {
			to = t
		}
	}
	return from, to
}

// droppedRate is dropped / arrivals, as the run's summary computes it.
func droppedRate(s *Summary) float64 {
	if len(s.Scenarios) > 0 {
		var its, dropped int64
		for _, sc := range s.Scenarios {
			its, dropped = its+sc.Iterations, dropped+sc.Dropped
		}
		if its+dropped > 0 {
			return float64(dropped) / float64(its+dropped)
		}
		return 0
	}
	if arrivals := s.All.Count + s.Dropped + s.All.Interrupted; arrivals > 0 {
		return float64(s.Dropped) / float64(arrivals)
	}
	return 0
}

// segLabel names a segment in notes: its FROM:TO and its directory.
func segLabel(r *Results) string {
	if sg := segmentOf(r); sg != nil {
		return "segment " + sg.Segment + " (" + r.Dir + ")"
	}
	return r.Dir
}

// segmentResult is a segment's line of the merged summary.
func segmentResult(r *Results) SegmentResult {
	x := r.Summary
	out := SegmentResult{Dir: r.Dir, Segment: segmentOf(r), Started: x.Started, DurationS: x.DurationS, Count: x.All.Count, Errors: x.All.Errors,
		Dropped: x.Dropped, Rate: x.Rate, VUs: x.VUs, Interrupted: x.Interrupted, StopReason: x.StopReason, Generator: x.Generator, Storms: x.Storms}
	if r.Run == nil {
		out.Missing = append(out.Missing, FileRun)
	}
	if r.Totals == nil {
		out.Missing = append(out.Missing, FileSummaryHistograms)
	}
	if strings.HasPrefix(x.StopReason, "no summary.json") {
		out.Missing = append(out.Missing, FileSummary)
	}
	return out
}

// coverage notes what the merged segments do not cover, and segments
// that lacked files.
func (m *Merged) coverage() []string {
	var notes []string
	seqs := map[string][]int{}
	count := map[string]int{}
	for _, r := range m.segs {
		if sg := segmentOf(r); sg != nil {
			seqs[sg.Sequence] = append(seqs[sg.Sequence], sg.Index)
			count[sg.Sequence] = sg.Count
		} else if len(m.segs) > 1 {
			notes = append(notes, r.Dir+" ran the whole test, not a segment: merged as if it were one")
		}
	}
	for _, seq := range slices.Sorted(maps.Keys(seqs)) {
		if got := len(seqs[seq]); got < count[seq] {
			notes = append(notes, fmt.Sprintf("only %d of the %d segments of %s were merged: the totals are that share of the test", got, count[seq], seq))
		}
	}
	if len(seqs) > 1 {
		notes = append(notes, "the segments come from different sequences: they may overlap or leave gaps")
	}
	for _, r := range m.segs {
		if r.Totals == nil {
			notes = append(notes, r.Dir+" has no "+FileSummaryHistograms+": its time to first byte, dropped-op bounds, set-up, start lag, GET-stream and iteration times are left out of the merged ones")
		}
		if r.Summary != nil && strings.HasPrefix(r.Summary.StopReason, "no summary.json") {
			notes = append(notes, r.Dir+" has no summary.json (it did not finish): merged from its interval files")
		}
	}
	return notes
}

// hist is a merged summary.hlog histogram (nil when no segment had it).
func (m *Merged) hist(tag string) *hdr.Histogram { return m.Totals[tag] }

// latency is the latency of a merged summary.hlog histogram.
func (m *Merged) latency(tag string) Latency { return LatencyOf(m.hist(tag)) }

// opRows merges the per-op rows and the "all" row over secs seconds.
func (m *Merged) opRows(secs float64) ([]OpSummary, OpSummary) {
	var ops []OpSummary
	all := OpSummary{Name: "all"}
	allH := map[string]*hdr.Histogram{}
	for _, name := range m.ops {
		var parts []OpSummary
		for _, r := range m.segs {
			for _, o := range r.Summary.Ops {
				if o.Name == name {
					parts = append(parts, o)
				}
			}
		}
		if len(parts) == 0 {
			continue
		}
		tag := TagOp + HlogTag(name) + "."
		o := sumOps(name, parts, secs, func(kind string) *hdr.Histogram { return m.hist(tag + kind) })
		ops = append(ops, o)
		for _, kind := range []string{"response", "service", "ttfb", "dropped", "resume", "wait"} {
			if h := m.hist(tag + kind); h != nil {
				t := allH[kind]
				mergeInto(&t, h)
				allH[kind] = t
			}
		}
	}
	var parts []OpSummary
	for _, r := range m.segs {
		parts = append(parts, r.Summary.All)
	}
	all = sumOps("all", parts, secs, func(kind string) *hdr.Histogram { return allH[kind] })
	return ops, all
}

// sumOps sums one op's rows of the segments; hist gives its merged
// histograms by kind (response, service, ttfb, dropped, resume, wait).
func sumOps(name string, parts []OpSummary, secs float64, hist func(string) *hdr.Histogram) OpSummary {
	o := OpSummary{Name: name}
	var resumes []*ResumeSummary
	var ledgers []*LedgerSummary
	var wasted, throttle float64
	var checks [][]CheckSummary
	for _, p := range parts {
		checks = append(checks, p.Checks)
		o.Count += p.Count
		o.Errors += p.Errors
		o.ErrorsByClass = addCounts(o.ErrorsByClass, p.ErrorsByClass)
		o.ErrorExamples = addFirst(o.ErrorExamples, p.ErrorExamples)
		o.Status = addCounts(o.Status, p.Status)
		o.Dropped += p.Dropped
		o.Interrupted += p.Interrupted
		o.LateStarts += p.LateStarts
		o.Throttled += p.Throttled
		throttle += p.ThrottleWaitS
		o.BytesIn += p.BytesIn
		o.BytesOut += p.BytesOut
		o.Events += p.Events
		o.Progress += p.Progress
		o.Reinits += p.Reinits
		o.Reissues += p.Reissues
		o.ReissuedOK += p.ReissuedOK
		wasted += p.WastedMS
		o.InputRounds += p.InputRounds
		resumes = append(resumes, p.Resumes)
		ledgers = append(ledgers, p.Ledger)
	}
	o.ThrottleWaitS, o.WastedMS = textfmt.Round3(throttle), textfmt.Round3(wasted)
	o.Response, o.Service, o.TTFB = LatencyOf(hist("response")), LatencyOf(hist("service")), LatencyOf(hist("ttfb"))
	o.addDropped(HistOf(hist("response")), HistOf(hist("dropped")), secs)
	o.Resumes = sumResumes(resumes, hist("resume"), hist("wait"))
	o.Ledger = sumLedgers(ledgers)
	o.Checks = sumCheckSummaries(checks)
	if secs > 0 {
		o.Rate = textfmt.Round3(float64(o.Count) / secs)
	}
	if o.Count > 0 {
		o.ErrorRate = float64(o.Errors) / float64(o.Count)
	}
	return o
}

// sumResumes sums resume tallies (nil when none had any); the latencies
// come from the merged histograms.
func sumResumes(parts []*ResumeSummary, resume, wait *hdr.Histogram) *ResumeSummary {
	var out *ResumeSummary
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = &ResumeSummary{}
		}
		out.Attempts += p.Attempts
		out.Accepted += p.Accepted
		out.Early += p.Early
		out.ViaLink += p.ViaLink
		out.RetryCapped += p.RetryCapped
		out.RetryHintMaxMS = max(out.RetryHintMaxMS, p.RetryHintMaxMS)
		out.RetryCapMS = max(out.RetryCapMS, p.RetryCapMS)
		out.Limited += p.Limited
	}
	if out != nil {
		out.TimeToResume, out.Wait = LatencyOf(resume), LatencyOf(wait)
	}
	return out
}

// sumLedgers sums ledger verdicts (nil when none had any).
func sumLedgers(parts []*LedgerSummary) *LedgerSummary {
	var out *LedgerSummary
	for _, p := range parts {
		if p == nil {
			continue
		}
		if out == nil {
			out = &LedgerSummary{}
		}
		out.Streams += p.Streams
		out.Faulty += p.Faulty
		out.ViaLink += p.ViaLink
		out.LinksRefused += p.LinksRefused
		out.Verdicts = addCounts(out.Verdicts, p.Verdicts)
	}
	return out
}

// addCounts adds src's counts into dst (made when needed); zeros are
// kept, as the ledger keeps every verdict.
func addCounts(dst, src map[string]int64) map[string]int64 {
	if src == nil {
		return dst
	}
	if dst == nil {
		dst = map[string]int64{}
	}
	for k, v := range src {
		dst[k] += v
	}
	return dst
}

// addFirst keeps the first example per key.
func addFirst(dst, src map[string]string) map[string]string {
	for k, v := range src {
		if dst == nil {
			dst = map[string]string{}
		}
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
	return dst
}

// appendNew appends the strings not already in list.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// segmentNotes are a segment's notes for the merged summary: those every
// segment has as they are, the others prefixed with the segment.
func (m *Merged) segmentNotes(r *Results) []string {
	var out []string
	for _, n := range r.Summary.Notes {
		all := true
		for _, o := range m.segs {
			all = all && slices.Contains(o.Summary.Notes, n)
		}
		if !all {
			n = segLabel(r) + ": " + n
		}
		out = append(out, n)
	}
	return out
}
