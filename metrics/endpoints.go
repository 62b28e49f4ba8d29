package metrics

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

type endpointTally struct {
	mu       sync.Mutex
	urls     []string
	sessions []int64
	count    []int64
	errors   []int64
	hist     []*hdr.Histogram
}

// SetEndpoints names the run's endpoints (index = the endpoint argument
// of RecordEndpoint); call it before recording.
func (r *Recorder) SetEndpoints(urls []string) {
	t := &r.endpoints
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(urls)
	t.urls, t.sessions, t.count, t.errors = urls, make([]int64, n), make([]int64, n), make([]int64, n)
	t.hist = make([]*hdr.Histogram, n)
	for i := range t.hist {
		t.hist[i] = results.NewHistogram()
	}
}

// RecordEndpoint records a measured op's result against endpoint ep (the
// op itself is recorded by Shard.Record). Safe for concurrent use.
func (r *Recorder) RecordEndpoint(ep int, res *driver.Result) {
	t := &r.endpoints
	t.mu.Lock()
	defer t.mu.Unlock()
	if ep < 0 || ep >= len(t.count) || res.Class == driver.ClassCanceled {
		return
	}
	t.count[ep]++
	if res.Class != driver.ClassOK {
		t.errors[ep]++
	}
	t.hist[ep].RecordValue(us(res.End.Sub(res.Intended)))
}

// EndpointSession counts a session initialized on endpoint ep.
func (r *Recorder) EndpointSession(ep int) {
	t := &r.endpoints
	t.mu.Lock()
	defer t.mu.Unlock()
	if ep >= 0 && ep < len(t.sessions) {
		t.sessions[ep]++
	}
}

// Endpoints summarizes each endpoint over a window of secs seconds (nil
// with one endpoint).
func (r *Recorder) Endpoints(secs float64) []results.EndpointSummary {
	t := &r.endpoints
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []results.EndpointSummary
	for i, u := range t.urls {
		e := results.EndpointSummary{URL: u, Sessions: t.sessions[i], Count: t.count[i], Errors: t.errors[i], Response: results.LatencyOf(t.hist[i])}
		if secs > 0 {
			e.Rate = textfmt.Round3(float64(e.Count) / secs)
		}
		out = append(out, e)
	}
	return out
}
