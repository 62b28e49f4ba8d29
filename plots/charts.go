package plots

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/results"
)

// ErrNoData is wrapped by the error of a chart function when the run has
// nothing for that chart to show (no intervals, no resumes…); the
// message says what is missing.
var ErrNoData = errors.New("no data")

func noData(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNoData}, args...)...)
}

// Percentile colours, the same in every chart.
var (
	colP50 = colorN(0)
	colP90 = colorN(2)
	colP99 = colorN(1)
	colMax = colorN(3)
	// Shades of the warm-up and stopping phases.
	colWarmup   = color.RGBA{0xe6, 0xeb, 0xf2, 0xff}
	colStopping = color.RGBA{0xf5, 0xed, 0xe1, 0xff}
	colStorm    = color.RGBA{0x80, 0x40, 0x80, 0xff}
)

// legendName shortens a long op name for a legend to at most 40 runes,
// keeping what tells ops apart: the method before the first ':' whole
// ("resources/read:") and the end of the rest from a path component on
// (a URI's path, a tool's name), with "…" for what is left out. A name without a method, or
// whose method alone is too long, keeps both ends.
func legendName(s string) string {
	const maxRunes = 40
	r := []rune(s)
	if len(r) <= maxRunes {
		return s
	}
	if method, _, ok := strings.Cut(s, ":"); ok {
		m := []rune(method + ":")
		if keep := maxRunes - len(m) - 1; keep >= 12 {
			tail := string(r[len(r)-keep:])
			// Start at a path component rather than inside a word.
			if i := strings.Index(tail, "/"); i >= 0 {
				if rest := strings.TrimLeft(tail[i:], "/"); len([]rune(rest)) >= 8 {
					tail = rest
				}
			}
			return string(m) + "…" + tail
		}
	}
	head := (maxRunes - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(maxRunes-1-head):])
}

// summaryOf returns the run's summary, rebuilt from the interval files
// when the run did not write one.
func summaryOf(res *results.Results) *results.Summary {
	if res.Summary != nil {
		return res.Summary
	}
	return res.Rebuild()
}

// subtitle names the run: target, profile, protocol and start (UTC).
func subtitle(res *results.Results) string {
	s := summaryOf(res)
	target, profile, proto, started := s.Target, s.Profile, s.Protocol, s.Started
	embedded := s.Embedded
	if r := res.Run; r != nil {
		target, profile, embedded = cmp.Or(target, r.Target), cmp.Or(profile, r.Profile), embedded || r.Embedded
		proto = cmp.Or(proto, r.ProtocolNegotiated)
		if started.IsZero() {
			started = r.Started
		}
	}
	var parts []string
	if target != "" {
		target = secret.RedactURL(target) // results of older versions kept credentials
		if embedded {
			target += " (embedded reference server)"
		}
		parts = append(parts, target)
	}
	if profile != "" {
		parts = append(parts, "profile "+profile)
	}
	if proto != "" {
		parts = append(parts, "protocol "+proto)
	}
	if !started.IsZero() {
		parts = append(parts, started.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if s.Interrupted {
		parts = append(parts, "INTERRUPTED")
	}
	return strings.Join(parts, "  ·  ")
}

// fileSafe keeps an op name usable in a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// Options selects what Charts and WriteCharts draw.
type Options struct {
	// Formats to write; 0 means PNG and SVG.
	Formats Format
	// PerOp adds one latency-over-time chart per op ("latency-<op>").
	PerOp bool
}

// Format is a set of image formats.
type Format int

// Formats.
const (
	PNG Format = 1 << iota
	SVG
)

// ParseFormat parses "png", "svg" or "both".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "png":
		return PNG, nil
	case "svg":
		return SVG, nil
	case "both", "":
		return PNG | SVG, nil
	}
	return 0, fmt.Errorf("format %q: want png, svg or both", s)
}

// Item is one chart of a run: drawn, or skipped with the reason.
type Item struct {
	Name    string // file stem
	Chart   *Chart // nil when skipped
	Skipped string // why there is no chart ("" when drawn)
}

// Charts draws every chart that applies to res, in report order:
// latency (and one chart per op with opts.PerOp), latency per op,
// throughput, load (VUs, sessions, GET streams), resources (CPU, RSS,
// open files of mcpbench and the target), spectrum, resumes,
// time-to-resume. A chart without data is an Item with Skipped set; an
// error is returned only when drawing fails.
func Charts(res *results.Results, opts Options) ([]Item, error) {
	type fn struct {
		name string
		f    func() (*Chart, error)
	}
	fns := []fn{{"latency", func() (*Chart, error) { return LatencyOverTime(res, "") }}}
	if opts.PerOp {
		for _, op := range res.Ops {
			fns = append(fns, fn{"latency-" + fileSafe(op), func() (*Chart, error) { return LatencyOverTime(res, op) }})
		}
	}
	fns = append(fns,
		fn{"latency-ops", func() (*Chart, error) { return LatencyPerOp(res) }},
		fn{"throughput", func() (*Chart, error) { return ThroughputErrors(res) }},
		fn{"load", func() (*Chart, error) { return LoadOverTime(res) }},
		fn{"resources", func() (*Chart, error) { return ResourcesOverTime(res) }},
		fn{"spectrum", func() (*Chart, error) { return Spectrum(res) }},
		fn{"resumes", func() (*Chart, error) { return ResumesReconnects(res) }},
		fn{"time-to-resume", func() (*Chart, error) { return TimeToResume(res) }},
	)
	var items []Item
	for _, f := range fns {
		c, err := f.f()
		switch {
		case errors.Is(err, ErrNoData):
			items = append(items, Item{Name: f.name, Skipped: strings.TrimPrefix(err.Error(), ErrNoData.Error()+": ")})
		case err != nil:
			return nil, fmt.Errorf("plots: %s: %w", f.name, err)
		default:
			items = append(items, Item{Name: f.name, Chart: c})
		}
	}
	return items, nil
}

// Output is what WriteCharts did for one chart.
type Output struct {
	Name    string
	Files   []string // paths written (.png, .svg)
	Skipped string   // why the chart was not drawn ("" when it was)
}

// WriteCharts draws every applicable chart of res into dir (created if
// needed) as <name>.png and/or <name>.svg and reports each chart: the
// files written, or why it was skipped.
func WriteCharts(dir string, res *results.Results, opts Options) ([]Output, error) {
	items, err := Charts(res, opts)
	if err != nil {
		return nil, err
	}
	return writeItems(dir, items, opts.Formats)
}

// writeItems writes drawn charts as <name>.png and/or <name>.svg.
func writeItems(dir string, items []Item, formats Format) ([]Output, error) {
	if formats == 0 {
		formats = PNG | SVG
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []Output
	for _, it := range items {
		o := Output{Name: it.Name, Skipped: it.Skipped}
		if it.Chart != nil {
			for _, f := range []struct {
				format Format
				ext    string
				write  func(*os.File) error
			}{
				{PNG, ".png", func(w *os.File) error { return it.Chart.WritePNG(w) }},
				{SVG, ".svg", func(w *os.File) error { return it.Chart.WriteSVG(w) }},
			} {
				if formats&f.format == 0 {
					continue
				}
				path := filepath.Join(dir, it.Name+f.ext)
				if err := writeFile(path, f.write); err != nil {
					return out, err
				}
				o.Files = append(o.Files, path)
			}
		}
		out = append(out, o)
	}
	return out, nil
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
