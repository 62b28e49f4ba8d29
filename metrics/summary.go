package metrics

import "github.com/mcpbench/mcpbench/results"

// Summarize builds the per-op summaries and the "all" row from the
// recorder's totals over a measured window of secs seconds.
func (r *Recorder) Summarize(secs float64) ([]results.OpSummary, results.OpSummary) {
	total := r.Total()
	all := results.NewOpStats()
	var ops []results.OpSummary
	for i, o := range total {
		if o.Count == 0 && o.Dropped == 0 && o.Interrupted == 0 && o.MCP.Cancelled == 0 {
			continue
		}
		ops = append(ops, results.OpSummaryOf(r.names[i], o, secs))
		all.Add(o)
	}
	return ops, results.OpSummaryOf("all", all, secs)
}
