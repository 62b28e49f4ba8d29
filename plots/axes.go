package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// NinesTicks marks a percentile axis in "nines", HdrHistogram style: the
// axis holds x = log10(1/(1−q)), q the quantile (0 ≤ q < 1), so that 0 is
// labelled "0%", 1 "90%", 2 "99%", 3 "99.9%" and so on, with unlabelled
// minor ticks at the percentiles of 2…9 × 10^k in 1/(1−q) between them:
// a log scale of 1/(1−q) drawn on a linear axis.
type NinesTicks struct{}

var _ plot.Ticker = NinesTicks{}

// Ticks implements plot.Ticker.
func (NinesTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := math.Floor(min), math.Ceil(max)
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		ticks = append(ticks, plot.Tick{Value: k, Label: NinesLabel(k)})
		if k < hi {
			for i := 2; i < 10; i++ {
				ticks = append(ticks, plot.Tick{Value: k + math.Log10(float64(i))})
			}
		}
	}
	return ticks
}

// NinesLabel returns the percentile that nines = log10(1/(1−q)) stands
// for: "0%" for 0, "90%" for 1, "99.9%" for 3, "50%" for log10(2); "" for
// a negative value.
func NinesLabel(nines float64) string {
	if nines < 0 {
		return ""
	}
	dec := max(0, int(math.Ceil(nines-1e-9))-2)
	return strconv.FormatFloat(100-100/math.Pow(10, nines), 'f', dec, 64) + "%"
}

// linearTicks labels a linear axis with 4 to 8 round values (1, 2, 2.5
// or 5 × 10^k apart) and unlabelled minor ticks between them: denser than
// plot.DefaultTicks, which aims at three.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: formatTick(lo, 1)}}
	}
	span := hi - lo
	var step float64
	mag := math.Pow(10, math.Floor(math.Log10(span/5)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if span/step <= 7 {
			break
		}
	}
	minor := step / 5
	if step == 2*mag {
		minor = step / 4
	}
	var ticks []plot.Tick
	first := math.Ceil(lo/minor-1e-9) * minor
	for i := 0; ; i++ {
		v := first + float64(i)*minor
		if v > hi+minor*1e-9 {
			break
		}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-6 {
			v = r * step
			ticks = append(ticks, plot.Tick{Value: v, Label: formatTick(v, step)})
		} else {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// formatTick prints v with as many decimals as step needs (at most 6).
func formatTick(v, step float64) string {
	if v == 0 {
		return "0"
	}
	if math.Abs(v) >= 1e6 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	dec := 0
	for scaled := step; dec < 6 && math.Abs(scaled-math.Round(scaled)) > 1e-9*scaled; scaled *= 10 {
		dec++
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// logTicks labels an axis that holds log10 of the values drawn: 1, 2, 5
// × 10^k over up to two decades, powers of ten beyond, and the axis' top
// when it falls on a tick (setLogY puts it there), with unlabelled
// minor ticks at every integer multiple of 10^k. (Data go through log10
// rather than plot.LogScale, whose axis-label placement assumes a linear
// scale and pushes the data area off its canvas.)
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	a, b := math.Floor(lo), math.Ceil(hi)
	dense := hi-lo <= 2.3
	var ticks []plot.Tick
	for k := a; k <= b; k++ {
		d := math.Pow(10, k)
		for i := 1; i < 10; i++ {
			if k == b && i > 1 {
				break
			}
			v := d * float64(i)
			label := ""
			top := math.Abs(math.Log10(v)-hi) < 1e-9 // the axis' top: labelled, whatever its value
			if i == 1 || (dense && (i == 2 || i == 5)) || top {
				label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ticks = append(ticks, plot.Tick{Value: math.Log10(v), Label: label})
		}
	}
	return ticks
}

// setLogY makes p's y axis logarithmic over [lo, hi] (lo > 0): the data
// must be log10 of the values (see log10Segs). The top goes up to the
// next whole multiple of a power of ten (230 → 300), a minor tick that
// logTicks labels, so the axis says how high it reaches.
func setLogY(p *plot.Plot, lo, hi float64) {
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = math.Log10(lo), math.Log10(ceilTick(hi))
}

// ceilTick returns the smallest whole multiple of 10^k at least v (v >
// 0), 10^k the power of ten just below v: 230 → 300, 0.041 → 0.05.
func ceilTick(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	m := math.Ceil(v/d - 1e-9)
	return m * d
}

// isLogY reports whether p's y axis was made logarithmic (setLogY).
func isLogY(p *Panel) bool {
	_, ok := p.Plot.Y.Tick.Marker.(logTicks)
	return ok
}

// setLinearY sets a linear y axis over data in [lo, hi]: from 0, unless
// the data keep to the upper half, where 0 would flatten them.
func setLinearY(p *plot.Plot, lo, hi float64) {
	switch {
	case !(hi > 0):
		p.Y.Min, p.Y.Max = 0, 1
	case lo > hi/2:
		span := max(hi-lo, hi*0.02)
		p.Y.Min, p.Y.Max = max(0, lo-0.15*span), hi+0.1*span
	default:
		p.Y.Min, p.Y.Max = 0, hi*1.05
	}
}

// fromZero starts a linear y axis at 0 and gives it some headroom.
func fromZero(p *plot.Plot) {
	p.Y.Min = 0
	if math.IsInf(p.Y.Max, 0) || p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	p.Y.Max *= 1.05
}

// floor125 returns the largest 1, 2 or 5 × 10^k at most v (v > 0): a
// log axis starting there has a labelled tick at its foot.
func floor125(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2} {
		if m*d <= v {
			return m * d
		}
	}
	return d
}

// log10Segs returns segs with y replaced by log10(y) (y > 0).
func log10Segs(segs []plotter.XYs) []plotter.XYs {
	out := make([]plotter.XYs, len(segs))
	for i, s := range segs {
		out[i] = make(plotter.XYs, len(s))
		for j, xy := range s {
			out[i][j] = plotter.XY{X: xy.X, Y: math.Log10(xy.Y)}
		}
	}
	return out
}

// series is one line of a chart before its y axis is chosen.
type series struct {
	name string // legend entry; "" for none
	segs []plotter.XYs
	sty  draw.LineStyle
}

// addAll adds ss to p and sets its y axis: logarithmic when the largest
// value is more than 30 times typical (a p50, ms) — so that a tail does
// not flatten everything else — and linear otherwise.
func addAll(p *Panel, ss []series, typical float64) error {
	lo, loPos, hi := math.Inf(1), math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, seg := range s.segs {
			for _, xy := range seg {
				lo, hi = min(lo, xy.Y), max(hi, xy.Y)
				if xy.Y > 0 {
					loPos = min(loPos, xy.Y)
				}
			}
		}
	}
	logY := typical > 0 && hi > 30*typical && !math.IsInf(loPos, 1)
	for _, s := range ss {
		segs := s.segs
		if logY {
			segs = nil
			for _, seg := range s.segs {
				var pos plotter.XYs
				for _, xy := range seg {
					if xy.Y > 0 {
						pos = append(pos, xy)
					}
				}
				if len(pos) > 0 {
					segs = append(segs, pos)
				}
			}
			segs = log10Segs(segs)
		}
		if err := addSeries(p, s.name, segs, s.sty); err != nil {
			return err
		}
	}
	switch {
	case logY:
		setLogY(p.Plot, floor125(loPos), hi*1.2)
		p.Plot.Y.Label.Text += " (log scale)"
	case math.IsInf(hi, -1):
		setLinearY(p.Plot, 0, 1)
	default:
		setLinearY(p.Plot, lo, hi)
	}
	return nil
}

// unlabelled keeps a ticker's marks but drops their labels: the upper of
// two panels sharing an x axis.
type unlabelled struct{ plot.Ticker }

func (u unlabelled) Ticks(min, max float64) []plot.Tick {
	ts := u.Ticker.Ticks(min, max)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}
