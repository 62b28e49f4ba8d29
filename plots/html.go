package plots

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
)

//go:embed report.html.tmpl
var reportTemplate string

//go:embed style.html.tmpl
var styleTemplate string

//go:embed sweep.html.tmpl
var sweepTemplate string

var reportTmpl = template.Must(template.Must(template.New("report").Funcs(funcs).Parse(reportTemplate)).Parse(styleTemplate))

var sweepTmpl = template.Must(template.Must(template.New("sweep").Funcs(funcs).Parse(sweepTemplate)).Parse(styleTemplate))

var funcs = template.FuncMap{
	"ms":    fmtMS,
	"pct":   func(f float64) string { return strconv.FormatFloat(100*f, 'f', 2, 64) + "%" },
	"f1":    func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"f2":    func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"g":     func(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) },
	"count": fmtCount,
	"wrap":  wrapName,
	"recovery": func(s float64) string {
		switch {
		case s == 0:
			return "no interval degraded"
		case s < 0:
			return "still degraded at the end"
		}
		return strconv.FormatFloat(s, 'f', 1, 64) + " s after the cut"
	},
	"ci": func(c *results.CI) string {
		if c == nil {
			return "–"
		}
		return fmtMS(c.Lo) + "–" + fmtMS(c.Hi)
	},
	"pctci": func(c *results.CI) string {
		if c == nil {
			return "–"
		}
		return strconv.FormatFloat(100*c.Lo, 'f', 2, 64) + "–" + strconv.FormatFloat(100*c.Hi, 'f', 2, 64) + "%"
	},
	"load":      fmtLoad,
	"join":      func(s []string) string { return strings.Join(s, "; ") },
	"hasPrefix": strings.HasPrefix,
}

// HTMLReport writes res as one self-contained HTML page: run metadata
// (target, profile, protocol, model, date, tool version, command and
// flags), the summary table (per op: count, rate, errors, response-time
// and service-time p50 p90 p99 p99.9 max in ms), thresholds with pass or
// fail, error classes with one example each, resumes, the replay
// ledger's verdicts, storm waves, chaos, sessions, GET streams, the
// generator's own cost, and every chart that applies as inline SVG
// (charts without data are listed as skipped). It needs no other file,
// no JavaScript and no network. All text is escaped (html/template).
//
// When the run wrote no summary.json (a crash), the summary is rebuilt
// from the interval files ([results.Results.Rebuild]) and the page says
// so.
func HTMLReport(w io.Writer, res *results.Results) error {
	return htmlReport(w, res, nil)
}

// htmlReport writes a run's report, with a soak's section when sk is
// not nil.
func htmlReport(w io.Writer, res *results.Results, sk *results.Soak) error {
	items, err := Charts(res, Options{})
	if err != nil {
		return err
	}
	d := &reportData{Run: res.Run, Sum: res.Summary, Verdicts: verdictNames()}
	if sk != nil {
		if d.Soak, err = soakChart(res, sk); err != nil {
			return err
		}
	}
	if d.Sum == nil {
		d.Sum, d.Rebuilt = res.Rebuild(), true
	}
	if sk != nil && d.Sum.Soak == nil {
		d.Sum.Soak = sk.Outcome() // one verdict: the run's counts the soak's (as soak and report print it)
	}
	s := d.Sum
	d.addModel(report.Build(s))
	d.Open = s.Model == "open"
	d.Subtitle = subtitle(res)
	d.Meta = metaRows(res, s)
	if r := res.Run; r != nil {
		d.Flags, d.Command = flagRows(r), commandLine(r)
	}
	d.Ops = s.Ops
	if len(s.Ops) != 1 {
		all := s.All
		d.All = &all
	}
	d.addTableRows(s)
	if res.Offenders != nil {
		d.Faulty, d.Offenders = res.Offenders.Faulty, len(res.Offenders.First)
	}
	if d.Charts, err = chartSections(items); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := reportTmpl.Execute(&buf, d); err != nil {
		return fmt.Errorf("plots: HTML report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// addModel takes what the report shares with the text summary from m:
// the verdict, the lines that stop or qualify the run, each warning's
// lines (as report.WarningLines prints them) and the dropped-ops table.
func (d *reportData) addModel(m *report.Model) {
	d.Model = m
	for _, w := range m.Warnings {
		h, c, r := report.WarningLines(w)
		d.Warnings = append(d.Warnings, warningView{ID: w.ID, Anchor: strings.ToLower(w.ID), Head: h, Cause: c, Remedy: r})
	}
}

// flagRows lists the run's flags, sorted, with credentials redacted from
// the URL.
func flagRows(r *results.RunInfo) []kv {
	var rows []kv
	for _, k := range slices.Sorted(maps.Keys(r.Flags)) {
		v := r.Flags[k]
		if k == "url" {
			v = secret.RedactURL(v) // results of older versions kept credentials
		}
		rows = append(rows, kv{"--" + k, v})
	}
	return rows
}

// commandLine returns the run's command line, quoted for a shell, with
// credentials redacted from URLs.
func commandLine(r *results.RunInfo) string {
	cmd := slices.Clone(r.Command)
	for i, a := range cmd {
		if strings.Contains(a, "://") {
			cmd[i] = secret.RedactURL(a)
		}
	}
	return shellJoin(cmd)
}

// addTableRows fills the error, resume, replay-ledger and session-failure
// tables from s: per op, then the GET streams, then the deleted-session
// probe.
func (d *reportData) addTableRows(s *results.Summary) {
	for _, o := range s.Ops {
		for _, c := range slices.Sorted(maps.Keys(o.ErrorsByClass)) {
			d.Errors = append(d.Errors, errorRow{Op: o.Name, Class: c, Count: o.ErrorsByClass[c], Example: o.ErrorExamples[c]})
		}
		if o.Resumes != nil {
			d.Resumes = append(d.Resumes, resumeRow{Name: o.Name, R: o.Resumes})
		}
		if o.Ledger != nil {
			d.Ledgers = append(d.Ledgers, ledgerRow{Name: o.Name, L: o.Ledger})
		}
	}
	if g := s.GETStreams; g != nil {
		if g.Resumes != nil {
			d.Resumes = append(d.Resumes, resumeRow{Name: "GET streams", R: g.Resumes})
		}
		if g.Ledger != nil {
			d.Ledgers = append(d.Ledgers, ledgerRow{Name: "GET streams", L: g.Ledger})
		}
	}
	if h := s.Sessions.Hygiene; h != nil {
		d.Ledgers = append(d.Ledgers, ledgerRow{Name: "deleted sessions (hygiene)", L: &results.LedgerSummary{Streams: h.Probed, Faulty: h.Faulty, Verdicts: h.Verdicts}})
	}
	for _, c := range slices.Sorted(maps.Keys(s.Sessions.FailClasses)) {
		d.SessionFails = append(d.SessionFails, errorRow{Class: c, Count: s.Sessions.FailClasses[c], Example: s.Sessions.FailExamples[c]})
	}
}

// chartSections renders the drawn charts as inline SVG and lists the
// skipped ones with their reason, in report order.
func chartSections(items []Item) ([]chartData, error) {
	var out []chartData
	for _, it := range items {
		cd := chartData{Name: it.Name, Skipped: it.Skipped}
		if it.Chart != nil {
			cd.Title, cd.Caption = it.Chart.Title, it.Chart.Caption
			svg, err := inlineSVG(it.Chart)
			if err != nil {
				return nil, err
			}
			cd.SVG = svg
		}
		out = append(out, cd)
	}
	return out, nil
}

type reportData struct {
	// Model is what the text summary says too: verdict, stops, notes,
	// not-applicable lines, warnings, the dropped-ops table.
	Model        *report.Model
	Warnings     []warningView
	Run          *results.RunInfo
	Sum          *results.Summary
	Rebuilt      bool
	Open         bool
	Subtitle     string
	Meta, Flags  []kv
	Command      string
	Ops          []results.OpSummary
	All          *results.OpSummary // nil with one op (its row is the total)
	Errors       []errorRow
	SessionFails []errorRow
	Resumes      []resumeRow
	Ledgers      []ledgerRow
	Verdicts     []string
	Faulty       int64
	Offenders    int
	Charts       []chartData
	Soak         *soakSection // a soak's verdicts and trends (nil for a run)
}

type kv struct{ K, V string }

// warningView is a warning as the page shows it: its id (and anchor)
// and its three lines, the text summary's.
type warningView struct{ ID, Anchor, Head, Cause, Remedy string }

type errorRow struct {
	Op, Class, Example string
	Count              int64
}

type resumeRow struct {
	Name string
	R    *results.ResumeSummary
}

type ledgerRow struct {
	Name string
	L    *results.LedgerSummary
}

type chartData struct {
	Name, Title, Caption, Skipped string
	SVG                           template.HTML
}

func metaRows(res *results.Results, s *results.Summary) []kv {
	var rows []kv
	add := func(k, v string) {
		if v != "" {
			rows = append(rows, kv{k, v})
		}
	}
	r := res.Run
	target := s.Target
	if target == "" && r != nil {
		target = r.Target
	}
	target = secret.RedactURL(target)
	if s.Embedded || (r != nil && r.Embedded) {
		mode := ""
		if r != nil && r.ServerMode != "" {
			mode = ", " + r.ServerMode + " mode"
		}
		target += " (embedded reference server" + mode + ")"
	}
	add("Target", target)
	add("Profile", s.Profile)
	proto := s.Protocol
	if r != nil && r.ProtocolRequested != "" && r.ProtocolRequested != proto {
		proto += " (requested " + r.ProtocolRequested + ")"
	}
	add("Protocol", proto)
	if n := s.Net; n != nil && n.Protocol != "" {
		add("HTTP", n.Protocol)
		if n.Proxy != "" {
			add("Proxy", n.Proxy)
		}
	}
	model := fmt.Sprintf("closed: %d VUs", s.VUs)
	if s.Model == "open" {
		model = fmt.Sprintf("open: arrival rate %s ops/s, %d VUs (max %d)", strconv.FormatFloat(s.TargetRate, 'g', 6, 64), s.VUs, s.MaxVUs)
	}
	add("Model", model)
	started := s.Started
	if started.IsZero() && r != nil {
		started = r.Started
	}
	if !started.IsZero() {
		add("Started", started.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	add("Measured", fmt.Sprintf("%.1f s after %.1f s of warm-up", s.DurationS, s.WarmupS))
	tool := s.Tool
	if r != nil {
		tool = strings.TrimSpace(r.Tool + " " + r.Version)
		var extra []string
		if r.GoVersion != "" {
			extra = append(extra, r.GoVersion)
		}
		if r.OS != "" {
			extra = append(extra, r.OS+"/"+r.Arch)
		}
		if r.NumCPU > 0 {
			extra = append(extra, strconv.Itoa(r.NumCPU)+" CPUs")
		}
		if r.SDK != "" {
			extra = append(extra, "reference server on go-sdk "+r.SDK)
		}
		if len(extra) > 0 {
			tool += " (" + strings.Join(extra, ", ") + ")"
		}
		if r.Seed != 0 {
			add("Seed", strconv.FormatInt(r.Seed, 10))
		}
		if len(r.Headers) > 0 {
			add("Headers", strings.Join(r.Headers, "; "))
		}
	}
	add("Tool", tool)
	if s.Interrupted {
		add("Stopped", "interrupted: "+s.StopReason)
	}
	return rows
}

// inlineSVG renders c for inclusion in HTML: the XML prolog and comment
// dropped, an accessible name added.
func inlineSVG(c *Chart) (template.HTML, error) {
	b, err := c.svg()
	if err != nil {
		return "", err
	}
	i := bytes.Index(b, []byte("<svg"))
	if i < 0 {
		return "", fmt.Errorf("plots: %s: no <svg> element", c.Name)
	}
	b = b[i:]
	label := template.HTMLEscapeString(c.Title)
	b = bytes.Replace(b, []byte("<svg "), []byte(`<svg role="img" aria-label="`+label+`" `), 1)
	// The SVG is generated here, its text escaped by the SVG writer.
	return template.HTML(b), nil
}

func verdictNames() []string {
	var out []string
	for _, v := range outcome.Verdicts() {
		out = append(out, v.String())
	}
	return out
}

// shellJoin quotes arguments that need it, for display.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// fmtMS formats milliseconds with 3 significant decimals for small values.
func fmtMS(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 10000:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// fmtCount groups thousands with thin spaces: 1 234 567.
func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteRune('\u202f')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// wrapName escapes an op name for a narrow table header and lets it wrap
// after each '/' and ':' (<wbr>), so "resources/read:mcpbench://static/small"
// breaks between its parts rather than inside a word or over the next
// column.
func wrapName(name string) template.HTML {
	var b strings.Builder
	for _, r := range name {
		b.WriteString(template.HTMLEscapeString(string(r)))
		if r == '/' || r == ':' {
			b.WriteString("<wbr>")
		}
	}
	return template.HTML(b.String())
}
