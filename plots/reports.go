package plots

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
)

// The HTML reports of a sweep and of a soak; a run's is HTMLReport.

// SweepHTMLReport writes a sweep as one self-contained HTML page: the
// sweep's report model (report.BuildSweep, which its text prints too):
// the verdict's lines (maximum sustainable rate with the SLO's bracket,
// the knee with its interval, cool-downs, how sure it is, memory per
// session), the not-applicable lines, every warning with its id, cause
// and remedy (the sweep's and each step's) and the steps that dropped
// arrivals; the step table with each step's intervals and repeats, the capacity charts
// inline with their captions (the ones without data listed as skipped),
// and the sweep's settings. No JavaScript, no network; all text escaped.
func SweepHTMLReport(w io.Writer, sw *results.Sweep) error {
	items, err := SweepCharts(sw)
	if err != nil {
		return err
	}
	d := &sweepData{Sw: sw, Subtitle: sweepSubtitle(sw), Unit: results.SweepLoadUnit(sw.By), Target: secret.RedactURL(sw.Target),
		Started: sw.Started.UTC().Format("2006-01-02 15:04:05 UTC"), Steps: finished(sw, offered),
		Marginal: strings.HasPrefix(sw.Verdict.Confidence, "marginal"), Model: report.BuildSweep(sw)}
	seen := map[string]int{} // several steps may give one id: each element's id is its own
	for _, w := range d.Model.Warnings {
		h, c, r := report.WarningLines(w)
		a := strings.ToLower(w.ID)
		if seen[a]++; seen[a] > 1 {
			a += "-" + strconv.Itoa(seen[a])
		}
		d.Warnings = append(d.Warnings, warningView{ID: w.ID, Anchor: a, Head: h, Cause: c, Remedy: r})
	}
	for _, s := range sw.Results {
		if s.Interrupted {
			d.Steps = append(d.Steps, s)
		}
	}
	if d.Charts, err = chartSections(items); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := sweepTmpl.Execute(&buf, d); err != nil {
		return fmt.Errorf("plots: sweep HTML report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

type sweepData struct {
	Sw                              *results.Sweep
	Subtitle, Unit, Target, Started string
	Steps                           []results.SweepStep // by load, the interrupted last
	Marginal                        bool
	Charts                          []chartData
	// Model is what the sweep's text says too; Warnings its warnings'
	// lines.
	Model    *report.SweepModel
	Warnings []warningView
}

// SoakHTMLReport writes a soak's results directory as one self-contained
// HTML page: the run's report (see HTMLReport) with the soak's verdicts
// and their trend chart added.
func SoakHTMLReport(w io.Writer, res *results.Results, sk *results.Soak) error {
	return htmlReport(w, res, sk)
}

// soakSection is the soak part of a run's report.
type soakSection struct {
	Soak  *results.Soak
	Chart *chartData
}

// soakChart draws a soak's trend chart for the report.
func soakChart(res *results.Results, sk *results.Soak) (*soakSection, error) {
	s := &soakSection{Soak: sk}
	c, err := SoakTrends(sk, subtitle(res))
	switch {
	case isNoData(err):
		s.Chart = &chartData{Name: "soak-trends", Skipped: noDataReason(err)}
	case err != nil:
		return nil, err
	default:
		cds, err := chartSections([]Item{{Name: "soak-trends", Chart: c}})
		if err != nil {
			return nil, err
		}
		s.Chart = &cds[0]
	}
	return s, nil
}

// fmtLoad formats a sweep's load: whole numbers from 100, three
// significant digits below.
func fmtLoad(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
