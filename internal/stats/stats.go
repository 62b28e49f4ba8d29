// Package stats holds the few robust statistics the verdicts and charts
// share: least-squares and Theil–Sen slopes, the median, isotonic
// regression, block-bootstrap confidence intervals of quantiles and
// ratios (bootstrap.go), the Mann–Whitney test, Welch's t test and the
// two-proportion test (tests.go). It owns arithmetic only: no
// thresholds, no judging.
package stats

import (
	"slices"
)

// LeastSquares returns the slope of y on x.
func LeastSquares(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// LeastSquaresLine returns the least-squares line of y on x: its slope
// and its intercept (y at x = 0).
func LeastSquaresLine(x, y []float64) (slope, intercept float64) {
	if len(x) == 0 {
		return 0, 0
	}
	slope = LeastSquares(x, y)
	var sx, sy float64
	for i := range x {
		sx, sy = sx+x[i], sy+y[i]
	}
	n := float64(len(x))
	return slope, sy/n - slope*sx/n
}

// TheilSen returns the Theil–Sen slope of y on x: the median of the
// slopes between every pair of points, robust to outliers and to the
// sawtooth of a garbage-collected heap. Series longer than 400 points are
// thinned evenly first.
func TheilSen(x, y []float64) float64 {
	if len(x) > 400 {
		step := float64(len(x)) / 400
		var tx, ty []float64
		for i := 0.0; int(i) < len(x); i += step {
			tx, ty = append(tx, x[int(i)]), append(ty, y[int(i)])
		}
		x, y = tx, ty
	}
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if dx := x[j] - x[i]; dx != 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	slices.Sort(slopes)
	return slopes[len(slopes)/2]
}

// Median returns the middle value of v (the upper one of an even count);
// 0 for an empty v. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// TheilSenLine returns the Theil–Sen line of y on x: its slope (see
// TheilSen) and the intercept median(y − slope·x), robust like the slope.
func TheilSenLine(x, y []float64) (slope, intercept float64) {
	slope = TheilSen(x, y)
	r := make([]float64, len(x))
	for i := range x {
		r[i] = y[i] - slope*x[i]
	}
	return slope, Median(r)
}
