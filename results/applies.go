package results

import "slices"

// NotApplicable is a requested feature the run could not apply, and why:
// summary.json's not_applicable, run.json's (known before the load
// started), and a "not applicable: FEATURE, because REASON" line of the
// report and of the run's start on stderr.
type NotApplicable struct {
	// Feature names what was requested, by its flag or profile field
	// where it has one (e.g. "--check-deleted").
	Feature string `json:"feature"`
	// Reason says what the run saw that rules it out.
	Reason string `json:"reason"`
}

// String is the line the report and the run's start print.
func (n NotApplicable) String() string {
	return "not applicable: " + n.Feature + ", because " + n.Reason
}

// mergeNotApplicable adds the entries of add whose feature dst does not
// name yet (segments of a run: each names what it saw).
func mergeNotApplicable(dst, add []NotApplicable) []NotApplicable {
	for _, n := range add {
		if !slices.ContainsFunc(dst, func(d NotApplicable) bool { return d.Feature == n.Feature }) {
			dst = append(dst, n)
		}
	}
	return dst
}
