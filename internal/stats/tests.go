package stats

import (
	"math"

	moremath "github.com/aclements/go-moremath/stats"
)

// Welch compares the means of two samples of per-interval values (a
// rate over intervals: each one-second interval's throughput) by Welch's
// unequal-variance t test (B. L. Welch, Biometrika 34, 1947): diff is
// mean(b) − mean(a), ci its two-sided interval at level (0.95 for 95 %)
// on the Welch–Satterthwaite degrees of freedom, p the two-sided
// p-value. Two samples without spread compare exactly: equal means give
// p = 1 and ci = [0, 0], different ones p = 0 and ci = [diff, diff]. ok
// is false when either sample has fewer than 2 values.
func Welch(a, b []float64, level float64) (diff float64, ci CI, p float64, ok bool) {
	if len(a) < 2 || len(b) < 2 {
		return 0, CI{}, 0, false
	}
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	diff = mb - ma
	se2 := va/float64(len(a)) + vb/float64(len(b))
	if se2 == 0 {
		if diff == 0 {
			return 0, CI{}, 1, true
		}
		return diff, CI{Lo: diff, Hi: diff}, 0, true
	}
	na, nb := float64(len(a)), float64(len(b))
	df := se2 * se2 / ((va/na)*(va/na)/(na-1) + (vb/nb)*(vb/nb)/(nb-1))
	td := moremath.TDist{V: df}
	t := diff / math.Sqrt(se2)
	p = 2 * (1 - td.CDF(math.Abs(t)))
	q := tQuantile(td, (1+level)/2)
	half := q * math.Sqrt(se2)
	return diff, CI{Lo: diff - half, Hi: diff + half}, math.Min(1, p), true
}

// meanVar returns the mean and the unbiased variance of v (len ≥ 2).
func meanVar(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v)-1)
}

// tQuantile inverts the t distribution's CDF by bisection (p in (0.5, 1)).
func tQuantile(td moremath.TDist, p float64) float64 {
	lo, hi := 0.0, 1.0
	for td.CDF(hi) < p && hi < 1e6 {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if td.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TwoProportions compares two proportions, xa of na and xb of nb (dropped
// arrivals of all arrivals, errors of ops), by the pooled two-proportion
// z test (the score test; Agresti, Categorical Data Analysis, 2002,
// §3.1): p is the two-sided p-value. Two proportions both 0 or both 1 do
// not differ: p = 1. ok is false when na or nb is 0. The test takes the
// events as independent; drops and errors come in bursts, so p is a
// lower bound of the truth when they do — a difference it calls beyond
// the noise by a wide margin still is.
func TwoProportions(xa, na, xb, nb int64) (p float64, ok bool) {
	if na <= 0 || nb <= 0 {
		return 0, false
	}
	pa, pb := float64(xa)/float64(na), float64(xb)/float64(nb)
	pool := float64(xa+xb) / float64(na+nb)
	if pool == 0 || pool == 1 {
		return 1, true
	}
	z := (pb - pa) / math.Sqrt(pool*(1-pool)*(1/float64(na)+1/float64(nb)))
	return math.Erfc(math.Abs(z) / math.Sqrt2), true
}

// MannWhitneyMinP is the smallest two-sided p-value a Mann–Whitney U test
// of samples of n1 and n2 distinct values can reach: 2 / C(n1+n2, n1).
// When it is not below a test's level the samples are too small for the
// test to call any difference significant (3 intervals against 3: 0.1).
func MannWhitneyMinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	// log C(n1+n2, n1)
	lc, _ := math.Lgamma(float64(n1 + n2 + 1))
	l1, _ := math.Lgamma(float64(n1 + 1))
	l2, _ := math.Lgamma(float64(n2 + 1))
	return math.Min(1, 2*math.Exp(-(lc-l1-l2)))
}
