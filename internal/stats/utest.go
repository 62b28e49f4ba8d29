package stats

import (
	"errors"

	moremath "github.com/aclements/go-moremath/stats"
)

// MannWhitney returns the two-sided p-value of the Mann–Whitney U test
// (Mann & Whitney, Ann. Math. Statist. 18, 1947) that a and b come from
// the same distribution against one tending to larger values: exact for
// small samples, the normal approximation with tie and continuity
// corrections beyond (go-moremath, as benchstat uses it). Two samples of
// one and the same value give p = 1. ok is false when either is empty.
func MannWhitney(a, b []float64) (p float64, ok bool) {
	r, err := moremath.MannWhitneyUTest(a, b, moremath.LocationDiffers)
	switch {
	case errors.Is(err, moremath.ErrSamplesEqual):
		return 1, true
	case err != nil:
		return 0, false
	}
	return r.P, true
}
