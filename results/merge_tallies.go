package results

import (
	"math"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
)

// The merged summary's tallies: scenarios, sessions, GET streams, the
// generator, chaos, the target process and the embedded server.

// scenarios sums each scenario's iterations over secs seconds.
func (m *Merged) ScenarioList(secs float64) []ScenarioSummary {
	var out []ScenarioSummary
	for _, r := range m.segs {
		for _, sc := range r.Summary.Scenarios {
			i := len(out)
			for k := range out {
				if out[k].Name == sc.Name {
					i = k
				}
			}
			if i == len(out) {
				out = append(out, ScenarioSummary{Name: sc.Name, Steps: sc.Steps})
			}
			o := &out[i]
			o.Iterations += sc.Iterations
			o.Failed += sc.Failed
			o.Dropped += sc.Dropped
		}
	}
	for i := range out {
		o := &out[i]
		o.Iteration = m.latency(TagScenario + HlogTag(o.Name) + ".iteration")
		if secs > 0 {
			o.Rate = textfmt.Round3(float64(o.Iterations) / secs)
		}
	}
	return out
}

// sessions sums the session tallies.
func (m *Merged) sessions() SessionSummary {
	var s SessionSummary
	var hyg *HygieneSummary
	for _, r := range m.segs {
		x := r.Summary.Sessions
		s.Opened += x.Opened
		s.Failed += x.Failed
		s.Closed += x.Closed
		s.CloseFails += x.CloseFails
		s.FailClasses = addCounts(s.FailClasses, x.FailClasses)
		s.FailExamples = addFirst(s.FailExamples, x.FailExamples)
		s.Churned += x.Churned
		s.BadSessionIDs += x.BadSessionIDs
		s.Redirects += x.Redirects
		if h := x.Hygiene; h != nil {
			if hyg == nil {
				hyg = &HygieneSummary{}
			}
			hyg.Probed += h.Probed
			hyg.Faulty += h.Faulty
			hyg.Verdicts = addCounts(hyg.Verdicts, h.Verdicts)
			hyg.Statuses = addCounts(hyg.Statuses, h.Statuses)
		}
	}
	s.Hygiene = hyg
	s.Initialize = m.latency(TagInit)
	return s
}

// getStreams sums the GET-stream tallies (nil when no segment had any).
func (m *Merged) getStreams() *GETStreamSummary {
	var g *GETStreamSummary
	var resumes, reopens []*ResumeSummary
	var ledgers []*LedgerSummary
	for _, r := range m.segs {
		x := r.Summary.GETStreams
		if x == nil {
			continue
		}
		if g == nil {
			g = &GETStreamSummary{}
		}
		g.Opened += x.Opened
		g.None += x.None
		g.Failed += x.Failed
		g.Events += x.Events
		g.Requests += x.Requests
		g.Breaks += x.Breaks
		g.BreakCauses = addCounts(g.BreakCauses, x.BreakCauses)
		g.Reopens += x.Reopens
		if g.FailExample == "" {
			g.FailExample = x.FailExample
		}
		resumes, reopens, ledgers = append(resumes, x.Resumes), append(reopens, x.ReopenAttempts), append(ledgers, x.Ledger)
	}
	if g != nil {
		g.Resumes = sumResumes(resumes, m.hist(TagGET+"resume.time"), m.hist(TagGET+"resume.wait"))
		g.ReopenAttempts = sumResumes(reopens, m.hist(TagGET+"reopen.time"), m.hist(TagGET+"reopen.wait"))
		g.Ledger = sumLedgers(ledgers)
	}
	return g
}

// generator sums the segments' cost: they are processes of their own, so
// their CPU, cores, memory (settled memory and the sessions it held
// included: a sessions sweep's memory per session is the slope of the
// children's summed RSS) and budgets add up; the CPU per op is the sum's
// over count ops. Each segment's own is in Segments.
func (m *Merged) generator(count int64) Generator {
	var g Generator
	var warns []string
	for i, r := range m.segs {
		x := r.Summary.Generator
		if i == 0 {
			g.NumCPU = x.NumCPU
		}
		g.CPUSeconds += x.CPUSeconds
		g.Cores += x.Cores
		g.MaxRSSMB += x.MaxRSSMB
		g.SettledRSSMB += x.SettledRSSMB
		g.SettledSessions += x.SettledSessions
		g.BudgetMB += x.BudgetMB
		g.BudgetPeakMB += x.BudgetPeakMB
		g.BudgetWaits += x.BudgetWaits
		g.GOMAXPROCS += x.GOMAXPROCS
		g.IncludesServer = g.IncludesServer || x.IncludesServer
		if x.Bottleneck != "" {
			warns = append(warns, segLabel(r)+": "+x.Bottleneck)
		}
	}
	g.CPUSeconds, g.Cores, g.MaxRSSMB, g.SettledRSSMB = textfmt.Round3(g.CPUSeconds), textfmt.Round3(g.Cores), textfmt.Round3(g.MaxRSSMB), textfmt.Round3(g.SettledRSSMB)
	g.BudgetMB, g.BudgetPeakMB = textfmt.Round3(g.BudgetMB), textfmt.Round3(g.BudgetPeakMB)
	if count > 0 {
		g.CPUPerOpUS = textfmt.Round3(g.CPUSeconds * 1e6 / float64(count))
	}
	g.Bottleneck = strings.Join(warns, "; ")
	g.StartLag = m.latency(TagLag)
	return g
}

// extras merges chaos (counts summed; the plan and seed of the first),
// the target process (the first segment's samples: one process, sampled
// by each segment or, with --processes, by the first child only; its CPU
// per op is over the merged run's ops) and the embedded servers' counters
// (summed: one server per segment). Storm waves stay per segment.
func (m *Merged) extras(s *Summary) {
	storms := false
	for _, r := range m.segs {
		x := r.Summary
		if c := x.Chaos; c != nil {
			if s.Chaos == nil {
				s.Chaos = &ChaosSummary{Plan: c.Plan, Seed: c.Seed}
			}
			s.Chaos.CutsFIN += c.CutsFIN
			s.Chaos.CutsRST += c.CutsRST
			s.Chaos.Stalls += c.Stalls
			s.Chaos.Delays += c.Delays
			s.Chaos.StormCuts += c.StormCuts
			s.Chaos.Outside += c.Outside
		}
		storms = storms || len(x.Storms) > 0
		if x.TargetProc != nil && s.TargetProc == nil {
			t := *x.TargetProc
			if t.Error == "" && s.All.Count > 0 {
				t.CPUPerOpUS = math.Round(t.CPUSeconds*1e6/float64(s.All.Count)*10) / 10
			}
			s.TargetProc = &t
		}
		if v := x.Server; v != nil {
			if s.Server == nil {
				s.Server = &ServerStats{}
			}
			s.Server.ToolCalls += v.ToolCalls
			s.Server.DoubleExecutions += v.DoubleExecutions
			s.Server.CountKeys += v.CountKeys
		}
	}
	if storms {
		s.Notes = appendNew(s.Notes, "storm waves are analysed per segment (see segments): the reconnect timeline they need is not in the result files")
	}
}

// endpoints sums each endpoint's share (by position: the segments of one
// test have the same endpoints) over secs seconds.
func (m *Merged) endpoints(secs float64) []EndpointSummary {
	var out []EndpointSummary
	for _, r := range m.segs {
		for i, e := range r.Summary.Endpoints {
			if i == len(out) {
				out = append(out, EndpointSummary{URL: e.URL})
			}
			o := &out[i]
			o.Sessions += e.Sessions
			o.Count += e.Count
			o.Errors += e.Errors
		}
	}
	for i := range out {
		o := &out[i]
		o.Response = m.latency(TagEndpoint + strconv.Itoa(i) + ".response")
		if secs > 0 {
			o.Rate = textfmt.Round3(float64(o.Count) / secs)
		}
	}
	return out
}
