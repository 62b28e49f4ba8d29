package plots

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// errBar is one vertical interval at X (Lo and Hi already on the axis'
// scale: log10 of the value on a log axis).
type errBar struct{ X, Lo, Hi float64 }

// errBars draws vertical intervals with short caps: the confidence
// intervals of a sweep's steps.
type errBars struct {
	pts []errBar
	sty draw.LineStyle
}

// Plot implements plot.Plotter.
func (e errBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	capW := vg.Points(3)
	for _, b := range e.pts {
		x, lo, hi := trX(b.X), trY(b.Lo), trY(b.Hi)
		if !c.ContainsX(x) {
			continue
		}
		lo, hi = max(lo, c.Min.Y), min(hi, c.Max.Y)
		if hi <= lo {
			continue
		}
		c.StrokeLine2(e.sty, x, lo, x, hi)
		c.StrokeLine2(e.sty, x-capW, lo, x+capW, lo)
		c.StrokeLine2(e.sty, x-capW, hi, x+capW, hi)
	}
}
