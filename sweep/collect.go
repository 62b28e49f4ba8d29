package sweep

import (
	"fmt"
	"slices"

	"github.com/mcpbench/mcpbench/internal/stats"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// stepCollector is a step run's sink: it keeps what the step's verdict
// needs of its intervals — the last measured row (its process samples
// were taken while the step's load and sessions were on), the most
// sessions open at once, and per measured interval the response- and
// service-time histograms of all ops (ms) with the ops and errors
// counted, for the confidence intervals. The histograms of the last
// warm-up interval (measured ops that completed in the grace before its
// close) join the first measured one and those of the graceful stop (ops
// of the window that completed after it) the last, so the intervals hold
// exactly the summary's ops. The engine calls
// it from one goroutine at a time; the step reads it after the run.
type stepCollector struct {
	last     *results.Row
	sessions int64
	resp     []stats.Hist
	svc      []stats.Hist
	count    []float64
	errors   []float64
	early    stats.Hist // measured ops closed in a warm-up interval
	earlySvc stats.Hist
}

func (c *stepCollector) Start(*results.RunInfo) {}
func (c *stepCollector) End(*results.RunEnd)    {}
func (c *stepCollector) Interval(r *results.IntervalRecord) {
	switch r.Phase {
	case results.PhaseWarmup:
		c.early, c.earlySvc = c.early.Add(histMS(r.Interval.All.Response)), c.earlySvc.Add(histMS(r.Interval.All.Service))
	case results.PhaseMeasure:
		row := r.Row
		c.last = &row
		c.sessions = max(c.sessions, row.Sessions)
		c.resp = append(c.resp, histMS(r.Interval.All.Response).Add(c.early))
		c.svc = append(c.svc, histMS(r.Interval.All.Service).Add(c.earlySvc))
		c.early, c.earlySvc = stats.Hist{}, stats.Hist{}
		c.count = append(c.count, float64(row.All.Count))
		c.errors = append(c.errors, float64(row.All.Errors))
	case results.PhaseStopping:
		if n := len(c.resp); n > 0 {
			c.resp[n-1] = c.resp[n-1].Add(histMS(r.Interval.All.Response))
			c.svc[n-1] = c.svc[n-1].Add(histMS(r.Interval.All.Service))
			c.count[n-1] += float64(r.Row.All.Count)
			c.errors[n-1] += float64(r.Row.All.Errors)
		}
	}
}

// histMS returns h's non-empty buckets at their highest equivalent value,
// in ms (µs / 1000: HdrHistogram's quantiles, as the summary gives them).
func histMS(h *results.Hist) stats.Hist {
	var out stats.Hist
	if h == nil || h.TotalCount() == 0 {
		return out
	}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out.Values = append(out.Values, float64(b.To)/1000)
			out.Counts = append(out.Counts, b.Count)
		}
	}
	return out
}

// stepCIs sets a step's confidence intervals from the intervals of its
// runs: p99 by the block bootstrap of the response-time histograms, the
// error rate by that of errors over ops. The seed is the step's number,
// so a sweep's intervals are reproducible from its files.
func stepCIs(st *results.SweepStep, runs []stepRun) {
	var resp []stats.Hist
	var count, errs []float64
	for _, r := range runs {
		c := r.col
		resp, count, errs = append(resp, c.resp...), append(count, c.count...), append(errs, c.errors...)
	}
	st.Intervals = len(resp)
	if _, ci, ok := stats.QuantileCI(resp, 0.99, results.ConfidenceLevel, uint64(st.N)); ok {
		st.P99CI = &results.CI{Lo: textfmt.Round3(ci.Lo), Hi: textfmt.Round3(ci.Hi)}
	}
	if _, ci, ok := stats.RatioCI(errs, count, results.ConfidenceLevel, uint64(st.N)); ok {
		st.ErrorRateCI = &results.CI{Lo: ci.Lo, Hi: ci.Hi}
	}
}

// pooled merges the numbers of a step's repeated runs (each as a step
// of its own): counts added, the achieved rate over the runs' total
// measured time, percentiles of the merged interval histograms, process
// figures averaged, the most sessions. It does not judge.
func pooled(steps []results.SweepStep, runs []stepRun) results.SweepStep {
	st := steps[0]
	st.Count, st.Errors, st.Dropped, st.Faulty, st.Sessions = 0, 0, 0, 0, 0
	st.Warnings, st.NotApplicable = nil, nil
	var secs, meanSum, svcMeanSum, gen, genOp, genRSS, tgt, tgtOp, tgtRSS, tgtFDs float64
	var resp, svc stats.Hist
	for i, r := range steps {
		st.Count, st.Errors, st.Dropped, st.Faulty = st.Count+r.Count, st.Errors+r.Errors, st.Dropped+r.Dropped, st.Faulty+r.Faulty
		st.Interrupted = st.Interrupted || r.Interrupted
		st.Sessions = max(st.Sessions, r.Sessions)
		secs += runs[i].Summary.DurationS
		meanSum += r.Latency.Mean * float64(r.Count)
		svcMeanSum += r.Service.Mean * float64(r.Count)
		gen, genOp, genRSS = gen+r.GenCores, genOp+r.GenCPUOp, genRSS+r.GenRSSMB
		tgt, tgtOp, tgtRSS, tgtFDs = tgt+r.TgtCores, tgtOp+r.TgtCPUOp, tgtRSS+r.TgtRSSMB, tgtFDs+float64(r.TgtFDs)
		if r.Warning != "" {
			st.Warning = r.Warning
		}
		for _, w := range r.Warnings {
			if len(steps) > 1 {
				w.Text = fmt.Sprintf("run %d: %s", i+1, w.Text)
			}
			st.Warnings = append(st.Warnings, w)
		}
		for _, n := range r.NotApplicable {
			if !slices.ContainsFunc(st.NotApplicable, func(d results.NotApplicable) bool { return d.Feature == n.Feature }) {
				st.NotApplicable = append(st.NotApplicable, n)
			}
		}
		for j := range runs[i].col.resp {
			resp, svc = resp.Add(runs[i].col.resp[j]), svc.Add(runs[i].col.svc[j])
		}
		st.Repeats = append(st.Repeats, results.SweepRepeat{Dir: runs[i].Dir, Achieved: r.Achieved, Count: r.Count, Errors: r.Errors,
			P99: r.Latency.P99, DurationS: runs[i].Summary.DurationS})
	}
	n := float64(len(steps))
	st.GenCores, st.GenCPUOp, st.GenRSSMB = textfmt.Round3(gen/n), textfmt.Round3(genOp/n), textfmt.Round3(genRSS/n)
	st.TgtCores, st.TgtCPUOp, st.TgtRSSMB, st.TgtFDs = textfmt.Round3(tgt/n), textfmt.Round3(tgtOp/n), textfmt.Round3(tgtRSS/n), int(tgtFDs/n+0.5)
	st.Achieved, st.ErrorRate = 0, 0
	if secs > 0 {
		st.Achieved = textfmt.Round3(float64(st.Count) / secs)
	}
	if st.Count > 0 {
		st.ErrorRate = float64(st.Errors) / float64(st.Count)
		st.Latency = latencyOf(resp, meanSum/float64(st.Count))
		st.Service = latencyOf(svc, svcMeanSum/float64(st.Count))
	}
	return st
}

// latencyOf gives the percentiles of h (ms) with the mean given.
func latencyOf(h stats.Hist, mean float64) results.Latency {
	if len(h.Values) == 0 {
		return results.Latency{}
	}
	return results.Latency{P50: textfmt.Round3(h.Quantile(0.5)), P90: textfmt.Round3(h.Quantile(0.9)), P99: textfmt.Round3(h.Quantile(0.99)),
		P999: textfmt.Round3(h.Quantile(0.999)), Max: textfmt.Round3(h.Values[len(h.Values)-1]), Mean: textfmt.Round3(mean)}
}
