package results

// Results per endpoint, when a run spreads its sessions over several
// (replicas reached without a load balancer).

// EndpointSummary is one endpoint's share of the run's measured window.
type EndpointSummary struct {
	URL      string  `json:"url"`      // as shown (secrets redacted)
	Sessions int64   `json:"sessions"` // sessions initialized on it (churn included)
	Count    int64   `json:"count"`    // completed ops
	Rate     float64 `json:"rate"`     // completed ops per second
	Errors   int64   `json:"errors"`
	// Response is the response time of its completed ops, ms.
	Response Latency `json:"response_time_ms"`
}
