package metrics

import (
	"strconv"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/results"
)

// Histograms returns copies of the run's histograms so far (up to the
// last Tick), tagged as summary.hlog tags them; empty ones are left out.
// The copies are sparse (Hist): an op costs what it recorded. Safe for
// concurrent use; call it between Ticks.
func (r *Recorder) Histograms() map[string]*results.Hist {
	out := map[string]*results.Hist{}
	put := func(tag string, h *results.Hist) {
		if h.TotalCount() > 0 {
			c := results.NewHist()
			c.Merge(h)
			out[tag] = c
		}
	}
	putDense := func(tag string, h *hdr.Histogram) {
		if h != nil && h.TotalCount() > 0 {
			out[tag] = results.HistOf(h)
		}
	}
	r.mu.Lock()
	for i, o := range r.total {
		p := results.TagOp + results.HlogTag(r.names[i]) + "."
		put(p+"response", o.Response)
		put(p+"service", o.Service)
		put(p+"ttfb", o.TTFB)
		put(p+"dropped", o.DropLB)
		put(p+"resume", o.Resume)
		put(p+"wait", o.Wait)
	}
	putDense(results.TagLag, r.lag)
	r.mu.Unlock()
	t := &r.sessions
	t.lock()
	putDense(results.TagInit, t.initHist)
	put(results.TagGET+"resume.time", t.get.resumes.Resume)
	put(results.TagGET+"resume.wait", t.get.resumes.Wait)
	put(results.TagGET+"reopen.time", t.get.reopenTries.Resume)
	put(results.TagGET+"reopen.wait", t.get.reopenTries.Wait)
	t.mu.Unlock()
	et := &r.endpoints
	et.mu.Lock()
	for i, h := range et.hist {
		putDense(results.TagEndpoint+strconv.Itoa(i)+".response", h)
	}
	et.mu.Unlock()
	it := &r.iters
	it.mu.Lock()
	for i, n := range it.names {
		putDense(results.TagScenario+results.HlogTag(n)+".iteration", it.hist[i])
	}
	it.mu.Unlock()
	return out
}
