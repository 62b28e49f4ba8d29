package plots

import (
	"image/color"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/results"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Spectrum draws each op's response-time percentile spectrum from its
// histogram merged over the run: latency (ms) against the percentile on
// a log "nines" axis (x = 1/(1−q): 0%, 90%, 99%, 99.9%…), ending at the
// max. In the open model the service time of each op is drawn dashed.
func Spectrum(res *results.Results) (*Chart, error) {
	open := summaryOf(res).Model == "open"
	p := newPanel("", "percentile", "response time (ms)")
	if open {
		p.Plot.Y.Label.Text = "latency (ms)"
	}
	var ss []series
	med, maxN := math.Inf(1), 0.0 // the lowest median: ops of different scales turn the axis to log
	for i, name := range res.Ops {
		h := res.Histograms[results.HlogTag(name)+".response"]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		med = min(med, float64(h.ValueAtQuantile(50))/1000)
		maxN = max(maxN, float64(h.TotalCount()))
		c := colorN(i)
		ss = append(ss, series{legendName(name), []plotter.XYs{spectrumXYs(h)}, lineStyle(c, 1.5, false)})
		if s := res.Histograms[results.HlogTag(name)+".service"]; open && s != nil && s.TotalCount() > 0 {
			ss = append(ss, series{"", []plotter.XYs{spectrumXYs(s)}, lineStyle(c, 1, true)})
		}
	}
	if len(ss) == 0 {
		return nil, noData("no response-time histograms (%s)", results.FileHistogram)
	}
	if err := addAll(p, ss, med); err != nil {
		return nil, err
	}
	ninesAxis(p.Plot, maxN)
	if open {
		p.Legend.Add("")
		p.Legend.Add("response time", &plotter.Line{LineStyle: lineStyle(color.Black, 1.5, false)})
		p.Legend.Add("service time", &plotter.Line{LineStyle: lineStyle(color.Black, 1, true)})
	}
	return &Chart{Name: "spectrum", Title: "Response-time percentile spectrum", Subtitle: subtitle(res), Panels: []*Panel{p},
		Caption: "Read each op's curve from left to right: where it bends up is where its latency stops being typical; a step at 99 % or 99.9 % is a small share of ops that waited (a lock, a GC pause, a retry)."}, nil
}

// TimeToResume draws, for each op whose streams were resumed, the time
// to resume (ms: from the break to the resumed stream's first byte, as
// the <op>.resume histograms record it): its distribution (resumes per
// bin, 60 bins over the range seen) above its percentile spectrum on the
// nines axis.
func TimeToResume(res *results.Results) (*Chart, error) {
	type opHist struct {
		i    int
		name string
		h    *hdr.Histogram
	}
	var hs []opHist
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, oh := range resumeHists(res) {
		if oh.h == nil || oh.h.TotalCount() == 0 {
			continue
		}
		hs = append(hs, opHist{oh.i, oh.name, oh.h})
		lo = min(lo, float64(oh.h.Min())/1000)
		hi = max(hi, float64(oh.h.Max())/1000)
	}
	if len(hs) == 0 {
		return nil, noData("no stream was resumed")
	}
	const nbins = 60
	if hi-lo < 1e-3 {
		lo, hi = lo-0.5, hi+0.5
	}
	lo = max(0, lo)
	width := (hi - lo) / nbins
	dist := newPanel("Distribution", "time to resume (ms)", "resumes per bin")
	spec := newPanel("Percentile spectrum", "percentile", "time to resume (ms)")
	var ss []series
	med, maxN := math.Inf(1), 0.0
	for _, oh := range hs {
		med = min(med, float64(oh.h.ValueAtQuantile(50))/1000)
		maxN = max(maxN, float64(oh.h.TotalCount()))
		bins := make([]plotter.HistogramBin, nbins)
		for b := range bins {
			bins[b] = plotter.HistogramBin{Min: lo + float64(b)*width, Max: lo + float64(b+1)*width}
		}
		for _, bar := range oh.h.Distribution() {
			if bar.Count == 0 {
				continue
			}
			mid := float64(bar.From+bar.To) / 2000
			b := min(max(int((mid-lo)/width), 0), nbins-1)
			bins[b].Weight += float64(bar.Count)
		}
		c := colorN(oh.i)
		fill := color.NRGBA{c.R, c.G, c.B, 0x80}
		hp := &plotter.Histogram{Bins: bins, Width: width, FillColor: fill, LineStyle: lineStyle(c, 0.5, false)}
		dist.Plot.Add(hp)
		dist.Legend.Add(legendName(oh.name), hp)
		ss = append(ss, series{legendName(oh.name), []plotter.XYs{spectrumXYs(oh.h)}, lineStyle(c, 1.5, false)})
	}
	dist.Plot.X.Min, dist.Plot.X.Max = lo, hi
	fromZero(dist.Plot)
	if err := addAll(spec, ss, med); err != nil {
		return nil, err
	}
	ninesAxis(spec.Plot, maxN)
	return &Chart{Name: "time-to-resume", Title: "Time to resume a broken stream", Subtitle: subtitle(res), Panels: []*Panel{dist, spec},
		Caption: "How long a broken stream took to deliver again after its resume: most of it should be the server's retry hint; a long tail means resumes that waited on the server."}, nil
}

// spectrumXYs returns h's percentile spectrum: points (nines, value at q
// in ms) with nines = log10(1/(1−q)), 20 per nine up to the last sample,
// then the max.
func spectrumXYs(h *hdr.Histogram) plotter.XYs {
	n := float64(h.TotalCount())
	last := math.Log10(n)
	var xys plotter.XYs
	for k := 0; ; k++ {
		nines := float64(k) / 20
		if k > 0 && nines >= last {
			break
		}
		q := 1 - math.Pow(10, -nines)
		xys = append(xys, plotter.XY{X: nines, Y: float64(h.ValueAtQuantile(100*q)) / 1000})
	}
	if n > 1 {
		xys = append(xys, plotter.XY{X: last, Y: float64(h.Max()) / 1000})
	}
	return xys
}

// ninesAxis sets a spectrum's x axis: percentiles in nines (NinesTicks)
// from 0% to the first nine past the largest count n (at least 90%).
func ninesAxis(p *plot.Plot, n float64) {
	p.X.Tick.Marker = NinesTicks{}
	p.X.Min, p.X.Max = 0, max(1, math.Ceil(math.Log10(max(n, 1))-1e-9))
}

// resumeHist is one time-to-resume histogram of a run: an op's response
// streams, or the GET streams (resumes, re-opens); i picks its colour.
type resumeHist struct {
	i    int
	name string
	h    *hdr.Histogram
}

// resumeHists returns the time-to-resume histograms the summary's resume
// lines come from: summary.hlog's (op:<op>.resume over the measured
// window, get.resume.time, get.reopen.time), so the chart and the summary
// count the same resumes; a directory without summary.hlog falls back to
// histograms.hlog's per-op ones.
func resumeHists(res *results.Results) []resumeHist {
	var out []resumeHist
	if res.Totals == nil {
		for i, name := range res.Ops {
			out = append(out, resumeHist{i, name, res.Histograms[results.HlogTag(name)+".resume"]})
		}
		return out
	}
	for i, name := range res.Ops {
		out = append(out, resumeHist{i, name, res.Totals[results.TotalsTag(name, "resume")]})
	}
	n := len(res.Ops)
	out = append(out, resumeHist{n, "GET streams (resumes)", res.Totals[results.TotalsGETResume]},
		resumeHist{n + 1, "GET streams (re-opens)", res.Totals[results.TotalsGETReopen]})
	return out
}
