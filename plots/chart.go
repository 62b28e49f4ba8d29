package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Default sizes of a chart; a chart of n stacked panels is taller.
const (
	DefaultWidth       = 9 * vg.Inch
	DefaultPanelHeight = 3.25 * vg.Inch
	// PNGDPI is the resolution of PNG output (dots per inch): 144 draws a
	// 9 in chart 1296 px wide.
	PNGDPI = 144
)

// Chart is one figure: a title, a subtitle naming the run (target,
// profile, date), and one or more panels stacked vertically with their
// left edges aligned, each with its legend to the right of its data area
// (never over the data). A Chart is not safe for concurrent use.
type Chart struct {
	Name     string // file stem: "latency", "spectrum", "throughput", …
	Title    string
	Subtitle string
	// Caption says what to look at in the chart (the HTML report prints
	// it under the figure).
	Caption string
	Panels  []*Panel
	// Width and Height of the whole figure; zero means DefaultWidth and
	// DefaultPanelHeight per panel plus the title.
	Width, Height vg.Length
}

// Panel is one plot of a chart with its legend.
type Panel struct {
	Plot   *plot.Plot
	Legend plot.Legend
	// drawn are the series added with addSeries, as drawn (y as on the
	// axis: log10 on a log axis), so tests can check the chart's numbers
	// against the result files without reading pixels.
	drawn []drawnSeries
	// shaded are the phase bands added with addBand (warm-up, stopping).
	shaded []band
}

// addBand shades b on p, under what is added after it.
func addBand(p *Panel, b band) {
	p.shaded = append(p.shaded, b)
	p.Plot.Add(b)
}

// drawnSeries is one series of a panel: its legend name ("" none) and
// its segments.
type drawnSeries struct {
	name string
	segs []plotter.XYs
}

// Size returns the chart's width and height (defaults applied).
func (c *Chart) Size() (w, h vg.Length) {
	w, h = c.Width, c.Height
	if w == 0 {
		w = DefaultWidth
	}
	if h == 0 {
		h = DefaultPanelHeight*vg.Length(len(c.Panels)) + 0.6*vg.Inch
	}
	return w, h
}

// Draw draws the chart on dc.
func (c *Chart) Draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pad := vg.Points(10)
	dc = draw.Crop(dc, pad, -pad, pad/2, -pad)

	top := dc.Max.Y
	if c.Title != "" {
		sty := textStyle(14, true)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: top}, c.Title)
		top -= sty.Height(c.Title) + vg.Points(3)
	}
	if c.Subtitle != "" {
		sty := textStyle(9, false)
		sty.Color = color.Gray{Y: 70}
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Center().X, Y: top}, c.Subtitle)
		top -= sty.Height(c.Subtitle) + vg.Points(6)
	}
	if len(c.Panels) == 0 {
		return
	}

	var legendW vg.Length
	for _, p := range c.Panels {
		r := p.Legend.Rectangle(dc)
		legendW = max(legendW, r.Max.X-r.Min.X)
	}
	gap := vg.Points(12)
	area := dc
	area.Max.Y = top
	if legendW > 0 {
		area.Max.X -= legendW + gap
	}
	rows := make([][]*plot.Plot, len(c.Panels))
	for i, p := range c.Panels {
		rows[i] = []*plot.Plot{p.Plot}
	}
	canvases := plot.Align(rows, draw.Tiles{Rows: len(rows), Cols: 1, PadY: vg.Points(14)}, area)
	for i, p := range c.Panels {
		pc := canvases[i][0]
		p.Plot.Draw(pc)
		if legendW == 0 {
			continue
		}
		data := p.Plot.DataCanvas(pc)
		lc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: data.Max.X + gap, Y: data.Min.Y},
			Max: vg.Point{X: dc.Max.X, Y: data.Max.Y},
		}}
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.Draw(lc)
	}
}

// WriteSVG writes the chart as an SVG document. Text refers to the
// Liberation Sans font (metric-compatible with Arial, the fallback named
// in the document); fonts are not embedded. The output is deterministic.
func (c *Chart) WriteSVG(w io.Writer) error {
	b, err := c.svg()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func (c *Chart) svg() ([]byte, error) {
	width, height := c.Size()
	canvas := vgsvg.New(width, height)
	c.Draw(draw.New(canvas))
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", c.Name, err)
	}
	// A viewer without Liberation Sans falls back to its default font,
	// often a serif; name metric-compatible fallbacks.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")), nil
}

// WritePNG writes the chart as a PNG image at PNGDPI.
func (c *Chart) WritePNG(w io.Writer) error {
	width, height := c.Size()
	canvas := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PNGDPI))
	c.Draw(draw.New(canvas))
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(w); err != nil {
		return fmt.Errorf("plots: %s: %w", c.Name, err)
	}
	return nil
}

// textStyle returns a Liberation Sans style of size points.
func textStyle(size vg.Length, bold bool) text.Style {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return text.Style{Color: color.Black, Font: f, Handler: plot.DefaultTextHandler}
}

// newPanel returns a panel with the package's look: sans-serif text, a
// light grid, y from 0 unless set otherwise.
func newPanel(title, xLabel, yLabel string) *Panel {
	p := plot.New()
	setFont := func(s *text.Style, size vg.Length) {
		s.Font = font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	}
	p.Title.Text = title
	setFont(&p.Title.TextStyle, 11)
	p.Title.Padding = vg.Points(4)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	setFont(&p.X.Label.TextStyle, 10)
	setFont(&p.Y.Label.TextStyle, 10)
	setFont(&p.X.Tick.Label, 9)
	setFont(&p.Y.Tick.Label, 9)
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	grid.Vertical.Width = vg.Points(0.5)
	grid.Horizontal.Width = vg.Points(0.5)
	p.Add(grid)
	leg := plot.NewLegend()
	setFont(&leg.TextStyle, 9)
	leg.ThumbnailWidth = vg.Points(18)
	leg.Padding = vg.Points(2)
	return &Panel{Plot: p, Legend: leg}
}

// Palette: Tableau 10.
var palette = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, // blue
	{0xf2, 0x8e, 0x2b, 0xff}, // orange
	{0x59, 0xa1, 0x4f, 0xff}, // green
	{0xe1, 0x57, 0x59, 0xff}, // red
	{0xb0, 0x7a, 0xa1, 0xff}, // purple
	{0x76, 0xb7, 0xb2, 0xff}, // teal
	{0x9c, 0x75, 0x5f, 0xff}, // brown
	{0xed, 0xc9, 0x48, 0xff}, // yellow
	{0xff, 0x9d, 0xa7, 0xff}, // pink
	{0xba, 0xb0, 0xac, 0xff}, // grey
}

func colorN(i int) color.RGBA { return palette[i%len(palette)] }

func lineStyle(c color.Color, width float64, dashed bool) draw.LineStyle {
	s := draw.LineStyle{Color: c, Width: vg.Points(width)}
	if dashed {
		s.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return s
}

// addSeries draws segments as lines in one style (a segment of one point
// as a dot) and adds one legend entry.
func addSeries(p *Panel, name string, segs []plotter.XYs, sty draw.LineStyle) error {
	p.drawn = append(p.drawn, drawnSeries{name, segs})
	for _, s := range segs {
		if len(s) == 1 {
			sc, err := plotter.NewScatter(s)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: sty.Color, Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
			p.Plot.Add(sc)
			continue
		}
		l, err := plotter.NewLine(s)
		if err != nil {
			return err
		}
		l.LineStyle = sty
		p.Plot.Add(l)
	}
	if name != "" {
		p.Legend.Add(name, &plotter.Line{LineStyle: sty})
	}
	return nil
}

// band shades the data area between X0 and X1 over its full height.
type band struct {
	X0, X1 float64
	Color  color.Color
}

// Plot implements plot.Plotter.
func (b band) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := max(trX(b.X0), c.Min.X), min(trX(b.X1), c.Max.X)
	if x1 <= x0 {
		return
	}
	c.FillPolygon(b.Color, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}

// Thumbnail implements plot.Thumbnailer.
func (b band) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.Color, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

// vline is a vertical line at X over the full height of the data area.
type vline struct {
	X float64
	draw.LineStyle
}

// Plot implements plot.Plotter.
func (l vline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(l.X)
	if !c.ContainsX(x) {
		return
	}
	c.StrokeLine2(l.LineStyle, x, c.Min.Y, x, c.Max.Y)
}

// Thumbnail implements plot.Thumbnailer.
func (l vline) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(l.LineStyle, x, c.Min.Y, x, c.Max.Y)
}
