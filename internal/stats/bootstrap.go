package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Hist is a block of observations as a histogram: distinct values in
// ascending order and how many observations had each. A run's interval
// histograms (HdrHistogram buckets at their highest equivalent value)
// become Hists, so a quantile computed here equals HdrHistogram's
// ValueAtQuantile of the same observations.
type Hist struct {
	Values []float64
	Counts []int64
}

// Total returns the observations in h.
func (h Hist) Total() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Add returns h with the observations of o added (both ascending).
func (h Hist) Add(o Hist) Hist {
	var out Hist
	i, j := 0, 0
	for i < len(h.Values) || j < len(o.Values) {
		switch {
		case j == len(o.Values) || (i < len(h.Values) && h.Values[i] < o.Values[j]):
			out.Values, out.Counts = append(out.Values, h.Values[i]), append(out.Counts, h.Counts[i])
			i++
		case i == len(h.Values) || o.Values[j] < h.Values[i]:
			out.Values, out.Counts = append(out.Values, o.Values[j]), append(out.Counts, o.Counts[j])
			j++
		default:
			out.Values, out.Counts = append(out.Values, h.Values[i]), append(out.Counts, h.Counts[i]+o.Counts[j])
			i++
			j++
		}
	}
	return out
}

// Quantile returns the q-quantile (0 < q ≤ 1) of h the way HdrHistogram
// does: the smallest value whose cumulative count reaches
// round(q·total), at least 1. 0 for an empty h.
func (h Hist) Quantile(q float64) float64 {
	n := h.Total()
	if n == 0 {
		return 0
	}
	rank := quantileRank(q, n)
	var cum int64
	for i, c := range h.Counts {
		cum += c
		if cum >= rank {
			return h.Values[i]
		}
	}
	return h.Values[len(h.Values)-1]
}

// quantileRank is HdrHistogram's rank of quantile q among n observations.
func quantileRank(q float64, n int64) int64 {
	r := q*float64(n) + 0.5
	switch {
	case !(r >= 1):
		return 1
	case r >= float64(n):
		return n
	}
	return int64(r)
}

// CI is a two-sided confidence interval.
type CI struct{ Lo, Hi float64 }

// MaxBlocks is the most blocks a bootstrap resamples: longer series are
// pooled into this many runs of consecutive blocks first, which keeps the
// cost bounded and the blocks long enough to carry their dependence.
const MaxBlocks = 40

// MinBlocks is the fewest blocks a bootstrap interval is computed from:
// with fewer, resampling says little about the spread and the interval
// functions report ok = false.
const MinBlocks = 5

// BootstrapReps is the number of resamples the intervals use.
const BootstrapReps = 2000

// QuantileCI returns the q-quantile of the pooled blocks and its
// confidence interval at the given level (0.95 for 95 %) by the block
// bootstrap: whole blocks (a run's one-second intervals, consecutive
// ones pooled down to MaxBlocks) are drawn with replacement, the
// quantile of each resample is taken, and the interval runs between the
// (1−level)/2 and (1+level)/2 quantiles of those (the percentile
// interval; Efron & Tibshirani, An Introduction to the Bootstrap, 1993,
// ch. 13; resampling blocks rather than single observations keeps the
// dependence within an interval — a GC pause, a slow second — Künsch,
// Ann. Statist. 17, 1989). The seed makes it reproducible. ok is false
// with fewer than MinBlocks non-empty blocks.
func QuantileCI(blocks []Hist, q, level float64, seed uint64) (est float64, ci CI, ok bool) {
	blocks = poolBlocks(nonEmpty(blocks), MaxBlocks)
	if len(blocks) == 0 {
		return 0, CI{}, false
	}
	g := newGrid(blocks)
	w := make([]int64, len(blocks))
	for i := range w {
		w[i] = 1
	}
	est = g.quantile(w, q)
	if len(blocks) < MinBlocks {
		return est, CI{Lo: est, Hi: est}, false
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d6370626e6368))
	reps := make([]float64, BootstrapReps)
	for r := range reps {
		resample(rng, w)
		reps[r] = g.quantile(w, q)
	}
	return est, percentileCI(reps, level), true
}

// RatioCI returns Σnum/Σden over the blocks and its block-bootstrap
// percentile interval at level (see QuantileCI): an error rate from each
// interval's errors and ops. ok is false with fewer than MinBlocks blocks
// or no denominator.
func RatioCI(num, den []float64, level float64, seed uint64) (est float64, ci CI, ok bool) {
	n, d := poolSums(num, MaxBlocks), poolSums(den, MaxBlocks)
	var sn, sd float64
	for i := range n {
		sn, sd = sn+n[i], sd+d[i]
	}
	if sd == 0 {
		return 0, CI{}, false
	}
	est = sn / sd
	if len(n) < MinBlocks {
		return est, CI{Lo: est, Hi: est}, false
	}
	rng := rand.New(rand.NewPCG(seed, 0x7261746f))
	w := make([]int64, len(n))
	reps := make([]float64, 0, BootstrapReps)
	for range BootstrapReps {
		resample(rng, w)
		var a, b float64
		for i, k := range w {
			a, b = a+float64(k)*n[i], b+float64(k)*d[i]
		}
		if b > 0 {
			reps = append(reps, a/b)
		}
	}
	if len(reps) == 0 {
		return est, CI{Lo: est, Hi: est}, false
	}
	return est, percentileCI(reps, level), true
}

// resample draws len(w) blocks with replacement: w[i] is how often block
// i was drawn.
func resample(rng *rand.Rand, w []int64) {
	clear(w)
	for range w {
		w[rng.IntN(len(w))]++
	}
}

// percentileCI returns the (1−level)/2 and (1+level)/2 quantiles of reps
// (sorted in place).
func percentileCI(reps []float64, level float64) CI {
	slices.Sort(reps)
	at := func(p float64) float64 {
		i := int(math.Round(p * float64(len(reps)-1)))
		return reps[min(max(i, 0), len(reps)-1)]
	}
	return CI{Lo: at((1 - level) / 2), Hi: at((1 + level) / 2)}
}

func nonEmpty(blocks []Hist) []Hist {
	var out []Hist
	for _, b := range blocks {
		if b.Total() > 0 {
			out = append(out, b)
		}
	}
	return out
}

// poolBlocks merges runs of consecutive blocks so that at most max
// remain.
func poolBlocks(blocks []Hist, max int) []Hist {
	if len(blocks) <= max {
		return blocks
	}
	out := make([]Hist, max)
	for i, b := range blocks {
		k := i * max / len(blocks)
		out[k] = out[k].Add(b)
	}
	return out
}

// poolSums adds runs of consecutive values so that at most max remain.
func poolSums(v []float64, max int) []float64 {
	if len(v) <= max {
		return v
	}
	out := make([]float64, max)
	for i, x := range v {
		out[i*max/len(v)] += x
	}
	return out
}

// grid holds each block's cumulative counts on the union of the blocks'
// values, so the quantile of any weighting of the blocks is a binary
// search of O(blocks) probes.
type grid struct {
	values []float64
	cum    [][]int64 // cum[b][j]: observations of block b at most values[j]
	n      []int64
}

func newGrid(blocks []Hist) *grid {
	var all []float64
	for _, b := range blocks {
		all = append(all, b.Values...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	g := &grid{values: all, cum: make([][]int64, len(blocks)), n: make([]int64, len(blocks))}
	for bi, b := range blocks {
		row := make([]int64, len(all))
		var c int64
		k := 0
		for j, v := range all {
			for k < len(b.Values) && b.Values[k] <= v {
				c += b.Counts[k]
				k++
			}
			row[j] = c
		}
		g.cum[bi], g.n[bi] = row, c
	}
	return g
}

// quantile returns the q-quantile of the blocks weighted by w.
func (g *grid) quantile(w []int64, q float64) float64 {
	var total int64
	for i, k := range w {
		total += k * g.n[i]
	}
	if total == 0 {
		return 0
	}
	rank := quantileRank(q, total)
	j := sort.Search(len(g.values), func(j int) bool {
		var c int64
		for i, k := range w {
			if k != 0 {
				c += k * g.cum[i][j]
			}
		}
		return c >= rank
	})
	return g.values[min(j, len(g.values)-1)]
}

// Isotonic returns the non-decreasing sequence closest to y in weighted
// least squares (weights w; nil means equal weights), by the
// pool-adjacent-violators algorithm (Ayer et al., Ann. Math. Statist. 26,
// 1955; Barlow et al., Statistical Inference under Order Restrictions,
// 1972): neighbours that break the order are pooled into their weighted
// mean until none does. Noise that makes a rising curve dip (p99 89, 100,
// 77 ms at rising loads) is pooled away; a real rise is kept.
func Isotonic(y, w []float64) []float64 {
	type block struct {
		sum, w float64
		n      int
	}
	var st []block
	for i, v := range y {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		st = append(st, block{v * wi, wi, 1})
		for len(st) > 1 {
			a, b := st[len(st)-2], st[len(st)-1]
			if a.sum/a.w <= b.sum/b.w {
				break
			}
			st = append(st[:len(st)-2], block{a.sum + b.sum, a.w + b.w, a.n + b.n})
		}
	}
	out := make([]float64, 0, len(y))
	for _, b := range st {
		for range b.n {
			out = append(out, b.sum/b.w)
		}
	}
	return out
}

// Median3 smooths y by running medians of three (Tukey's "3" smoother,
// J. W. Tukey, Exploratory Data Analysis, 1977, ch. 7), copying the end
// values: each inner value becomes the median of itself and its two
// neighbours. A monotone sequence comes back unchanged (the median of
// three monotone values is the middle one); a lone outlier inside is
// removed whichever way it points. The ends are kept as they are: a
// sweep's last step is where a knee shows first, and an end rule that
// extrapolates from its neighbours would flatten it.
func Median3(y []float64) []float64 {
	out := slices.Clone(y)
	med := func(a, b, c float64) float64 { return max(min(a, b), min(max(a, b), c)) }
	for i := 1; i < len(y)-1; i++ {
		out[i] = med(y[i-1], y[i], y[i+1])
	}
	return out
}
