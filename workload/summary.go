package workload

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// Summary assembly: the recorder's totals, the session and stream tallies,
// chaos, the generator's and the target's cost, and the warnings the
// numbers call for.

// summary builds the run's summary over the measured window [from, to):
// the recorder's totals and tallies, chaos and storms, the generator's and
// the target's cost, the warnings the numbers call for, and the
// thresholds.
func (e *engine) summary(ctx context.Context, from, to time.Time, u0, u1 results.Usage) *results.Summary {
	pl := e.pl
	secs := max(math.Round(to.Sub(from).Seconds()*1000)/1000, 0)
	ops, all := e.rec.Summarize(secs)
	e.mu.Lock()
	s := &results.Summary{
		Tool: e.opts.Tool, Target: e.pl.Target, Embedded: e.opts.Embedded,
		Protocol: e.negotiated, ProtocolWhy: e.protoWhy, Notes: append(slices.Clip(e.notes), e.pl.argNotes()...),
		Profile: pl.Name, Model: "closed", Started: e.start, DurationS: secs, WarmupS: pl.Warmup.Seconds(),
		Rate: all.Rate, VUs: int(e.started.Load()), MaxVUs: e.maxVUs, Concurrency: concurrencyShown(pl.Concurrency), Dropped: all.Dropped, Ops: ops, All: all,
		Scenarios: e.rec.Scenarios(secs), Endpoints: e.rec.Endpoints(secs), Segment: e.opts.Segment.Info(e.opts.StartAt),
	}
	e.mu.Unlock()
	if n := e.iterationsNote(); n != "" && e.admit != nil && e.admit.Err() != nil {
		s.Notes = append(s.Notes, n)
	}
	if n := e.closesCut.Load(); n > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("stopped at once (a second interrupt): %d sessions' closes (DELETE) were cut, counted as close failures", n))
	}
	if secs > 0 && s.VUs > 0 {
		s.InFlight = textfmt.Round3(e.rec.Busy().Seconds() / (secs * float64(s.VUs)))
	}
	if arrivals := all.Count + all.Dropped + all.Interrupted; arrivals > 0 {
		s.DroppedRate = float64(all.Dropped) / float64(arrivals)
	}
	if len(s.Scenarios) > 0 { // an arrival is an iteration
		var its, dropped int64
		for _, sc := range s.Scenarios {
			its, dropped = its+sc.Iterations, dropped+sc.Dropped
		}
		s.DroppedRate = 0
		if its+dropped > 0 {
			s.DroppedRate = float64(dropped) / float64(its+dropped)
		}
	}
	if s.Protocol == "" {
		s.Protocol = "none negotiated (asked " + cmp.Or(e.pl.Driver.Protocol, driver.DefaultProtocol) + ")"
	}
	s.Stages = pl.StagesText
	if pl.Open {
		s.Model, s.TargetRate = "open", pl.Rate
		if (pl.Staged || !e.opts.Segment.Whole()) && secs > 0 {
			s.TargetRate = textfmt.Round3(float64(Arrivals(e.sched, from.Sub(e.start), to.Sub(e.start))) / secs)
		}
	} else {
		s.MaxVUs = e.peakVUs
	}
	if ctx.Err() != nil {
		s.Interrupted = true
		s.StopReason = fmt.Sprint(context.Cause(ctx))
		if e.setupStop {
			s.StopReason = "interrupted during set-up (" + s.StopReason + "): nothing was measured"
		}
	}
	s.Sessions = e.rec.Sessions()
	s.GETStreams = e.rec.GETStreams()
	s.Net = results.NetSummaryOf(httpclient.TransportStats(e.pl.Driver.HTTPClient))
	s.Subscriptions = e.subscriptionSummary()
	e.chaosSummary(s)
	e.endApplies(s)
	e.generatorSummary(s, u0, u1)
	e.bottleneck(s)
	s.TargetProc = e.targetSummary(all.Count)
	if e.opts.Server != nil {
		s.Server = e.opts.Server()
	}
	if len(e.pl.Thresholds) > 0 {
		s.Thresholds = verdict.CheckThresholds(s, e.pl.Thresholds, e.rec)
	}
	e.abortSummary(s)
	return s
}

// chaosSummary adds what the fault plan injected, and the storm waves.
func (e *engine) chaosSummary(s *results.Summary) {
	if e.inj == nil {
		return
	}
	st := e.inj.Stats()
	plan, _ := json.Marshal(e.inj.Plan()) // plain data: cannot fail
	s.Chaos = &results.ChaosSummary{Plan: plan, Seed: e.inj.Seed(), CutsFIN: st.CutsFIN, CutsRST: st.CutsRST,
		Stalls: st.Stalls, Delays: st.Delays, StormCuts: st.StormCuts, Outside: st.Outside,
		StreamResets: st.StreamResets, ConnCloses: st.ConnCloses}
	if e.tl != nil && len(st.Waves) > 0 {
		s.Storms = verdict.Storms(st.Waves, e.tl, e.rows)
		for i := range s.Storms {
			if i < len(st.WaveCuts) {
				s.Storms[i].Cuts = st.WaveCuts[i]
			}
		}
	}
}

// generatorSummary adds mcpbench's own cost over the window.
func (e *engine) generatorSummary(s *results.Summary, u0, u1 results.Usage) {
	s.Generator = results.GeneratorCost(u0, u1, s.All.Count+s.All.Cancelled, runtime.NumCPU(), e.opts.Embedded) // cancelled calls cost CPU too
	e.mu.Lock()
	if e.settledRSS > 0 {
		s.Generator.SettledRSSMB = math.Round(float64(e.settledRSS)/(1<<20)*1000) / 1000
		s.Generator.SettledSessions = e.settledSessions
	}
	e.mu.Unlock()
	g := &s.Generator
	g.StartLag = results.LatencyOf(e.rec.StartLag())
	g.GOMAXPROCS = runtime.GOMAXPROCS(0)
	if b := e.pl.Driver.Budget; b != nil {
		bs := b.Stats()
		g.BudgetMB, g.BudgetPeakMB, g.BudgetWaits = mib(bs.Size), mib(bs.Peak), bs.Waits
	}
}

// targetSummary is the target process's cost over the window (--target-pid).
func (e *engine) targetSummary(count int64) *results.TargetSummary {
	pid := e.opts.TargetPID
	if pid <= 0 {
		return nil
	}
	t := &results.TargetSummary{PID: pid}
	switch {
	case e.tgtErr != nil:
		t.Error = e.tgtErr.Error()
	case !e.tgtFirst.At.IsZero() && !e.tgtLast.At.IsZero():
		a, b := e.tgtFirst, e.tgtLast
		cpu := (b.CPU - a.CPU).Seconds()
		t.CPUSeconds = math.Round(cpu*1000) / 1000
		if count > 0 {
			t.CPUPerOpUS = math.Round(cpu*1e6/float64(count)*10) / 10
		}
		if w := b.At.Sub(a.At).Seconds(); w > 0 {
			t.Cores = math.Round(cpu/w*1000) / 1000
		}
		t.RSSStartMB, t.RSSEndMB, t.RSSMaxMB = mib(a.RSS), mib(b.RSS), mib(e.tgtMaxRSS)
		t.FDsStart, t.FDsEnd, t.FDsMax, t.Threads = a.FDs, b.FDs, e.tgtMaxFDs, b.Threads
	default:
		t.Error = "no sample inside the measured window"
	}
	return t
}

func mib(b int64) float64 { return math.Round(float64(b)/(1<<20)*10) / 10 }

// bottleneck adds what the warnings need from the engine — a saturated
// target's sign (its service time climbed or rose with load) when over
// 1 % of arrivals were dropped, what made late ops late — and the
// warnings (verdict.Warnings: drops with their cause, the generator's
// CPU, start lag); DropWarning and Bottleneck repeat them for readers of
// the older fields.
func (e *engine) bottleneck(s *results.Summary) {
	g := &s.Generator
	procs := runtime.GOMAXPROCS(0)
	genBusy := !e.opts.Embedded && g.Cores >= verdict.BusyShare*float64(procs)
	if e.pl.Open && s.DroppedRate > verdict.DropShare && !genBusy {
		s.Saturation = e.saturation(s.All.Service.Mean)
	}
	if e.pl.Open {
		g.LateWhy = e.late.why(procs, g.Cores)
	}
	s.Warnings = verdict.Warnings(s)
	for _, w := range s.Warnings {
		switch w.ID {
		case verdict.WGeneratorCPU:
			g.Bottleneck = w.Text
		case verdict.WStartLag:
			g.Bottleneck = w.Text + ": " + w.Cause
		default:
			s.DropWarning = w.Text + "; cause: " + w.Cause + "; remedy: " + w.Remedy
		}
	}
}

// serviceClimbed reports whether the service time grew during the
// measured window: the median interval p50 of its last third at least
// twice (and 5 ms above) that of its first third.
func (e *engine) serviceClimbed() bool {
	var v []float64
	for _, r := range e.rows {
		if !r.Start.Before(e.warmEnd) && r.End.Before(e.end.Add(e.opts.Interval)) && r.All.Count > 0 {
			v = append(v, r.All.SvcP50)
		}
	}
	if len(v) < 3 {
		return false
	}
	third := len(v) / 3
	med := func(x []float64) float64 {
		x = slices.Clone(x)
		slices.Sort(x)
		return x[len(x)/2]
	}
	first, last := med(v[:third]), med(v[len(v)-third:])
	return last >= 2*first && last >= first+5
}

// concurrencyShown is the summary's concurrency: 0 (left out) for one
// request at a time.
func concurrencyShown(c int) int {
	if c > 1 {
		return c
	}
	return 0
}
