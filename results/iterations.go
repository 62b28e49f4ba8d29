package results

// Scenario iterations: what a user of an agent waits for. The engine
// records each iteration of a scenario (its steps' requests are recorded
// as ops, one op per step).

// ScenarioSummary is one scenario's iterations over the measured window.
type ScenarioSummary struct {
	Name string `json:"name"`
	// Steps are the scenario's step ops, in order (their rows are in Ops).
	Steps      []string `json:"steps"`
	Iterations int64    `json:"iterations"` // completed iterations
	Rate       float64  `json:"rate"`       // completed iterations per second
	// Failed counts completed iterations in which a request failed.
	Failed int64 `json:"failed"`
	// Dropped counts iterations of the open model that never started (no
	// free VU within max_delay).
	Dropped int64 `json:"dropped,omitempty"`
	// Iteration is the iteration time in ms: from the iteration's
	// intended start (coordinated omission corrected) to the end of its
	// last step, think times included.
	Iteration Latency `json:"iteration_time_ms"`
}
