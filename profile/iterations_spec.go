package profile

import "time"

// iterations: as the profile gives it (the engine's side: iterations.go).

// validateIterations checks iterations: a count of the closed model.
func (p *Profile) validateIterations() []error {
	var errs problems
	switch {
	case p.Iterations < 0:
		errs.add("iterations: %d, want ≥ 1 (or 0: run for the duration)", p.Iterations)
	case p.Iterations == 0:
	case p.Open():
		errs.add("iterations: %d shared iterations run the closed model (VUs back to back): leave rate out", p.Iterations)
	case len(p.Stages) > 0:
		errs.add("iterations: %d with stages: shared iterations run a fixed number of VUs; leave stages out", p.Iterations)
	}
	return errs
}

// DefaultIterationsCap is the duration of a run with iterations when
// neither the profile nor --duration gives one (k6's maxDuration).
const DefaultIterationsCap = 10 * time.Minute
