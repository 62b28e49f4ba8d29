package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

func htmlOf(t *testing.T, crashed bool) string {
	t.Helper()
	res := fixture()
	if crashed {
		res = closedNoResumes()
	}
	var b bytes.Buffer
	if err := HTMLReport(&b, res); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTMLReportSections(t *testing.T) {
	page := htmlOf(t, false)
	for _, want := range []string{
		"<!DOCTYPE html>",
		`<section id="run">`, `<section id="summary">`, `<section id="thresholds">`, `<section id="charts">`,
		`<section id="resumes">`, `<section id="ledger">`, `<section id="storms">`, `<section id="chaos">`,
		`<section id="sessions">`, `<section id="get-streams">`, `<section id="generator">`,
		`<table id="summary-table">`,
		// metadata
		"http://127.0.0.1:9/mcp", "golden", "2025-11-25", "open: arrival rate 100 ops/s", "2026-03-14 15:09:26 UTC",
		"mcpbench v0.0.0-test", "<code>--rate</code>", "&#39;results/x y&#39;",
		// the summary table: ops, the total, response and service time
		"tools/call:echo", "tools/call:progress", `<tr class="total">`, "response time (ms)", "service time (ms)", "p99.9",
		// thresholds, ledger verdicts, chaos, storms
		`<span class="pass">PASS</span>`, `<span class="fail">FAIL</span>`, "tools/call:echo:p99&lt;50ms",
		"deleted-session-accepted", "deleted sessions (hygiene)", "GET streams", "120 with RST",
		"2.1 s after the cut",
		// charts, inline
		`<figure id="chart-latency">`, `<figure id="chart-spectrum">`, `<figure id="chart-throughput">`,
		`<figure id="chart-resumes">`, `<figure id="chart-time-to-resume">`, `<svg role="img" aria-label="`,
		`<figure id="chart-latency-ops">`, `<figure id="chart-load">`, `<figure id="chart-resources">`,
		// captions say what to look at
		"<figcaption>Watch p99 and max against p50", "<figcaption>One line per op",
		// generator
		"151.2 µs per op", "Start lag",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg "); n != 8 {
		t.Errorf("%d inline <svg> charts, want 8", n)
	}
	if strings.Contains(page, "Not drawn") {
		t.Error("a chart was skipped")
	}
}

func TestHTMLReportSelfContainedAndEscaped(t *testing.T) {
	page := htmlOf(t, false)
	if strings.Contains(page, "<script") {
		t.Error("the report has a <script> (an error example was not escaped?)")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Error("the error example is not in the report, escaped")
	}
	for _, bad := range []string{"<link", "<img", "<iframe", `src="`, "url(http", "@import", "<?xml"} {
		if strings.Contains(page, bad) {
			t.Errorf("report contains %q: not self-contained", bad)
		}
	}
	// The only absolute URLs are the SVG namespaces, the target and the
	// resource URI in an op name.
	rest := strings.NewReplacer("http://www.w3.org/2000/svg", "", "http://www.w3.org/1999/xlink", "", "http://127.0.0.1:9/mcp", "", "mcpbench://", "").Replace(page)
	if i := strings.Index(rest, "://"); i >= 0 {
		t.Errorf("unexpected URL in the report: %q", rest[max(0, i-10):min(len(rest), i+60)])
	}
}

// TestHTMLReportParses reads the page with encoding/xml in its lenient
// HTML mode, raw tokens (no repair of the nesting), and checks that
// every element but HTML's void ones is closed, in order.
func TestHTMLReportParses(t *testing.T) {
	if err := checkNesting("<html><body><div><span></div></body></html>"); err == nil || !strings.Contains(err.Error(), "closes") {
		t.Fatalf("checkNesting of broken HTML: %v", err)
	}
	for _, crashed := range []bool{false, true} {
		page := htmlOf(t, crashed)
		if err := checkNesting(page); err != nil {
			t.Errorf("crashed=%v: %v", crashed, err)
		}
		if n := strings.Count(page, "<"); n < 200 {
			t.Errorf("crashed=%v: only %d tags", crashed, n)
		}
	}
}

var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

func checkNesting(page string) error {
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	var stack []string
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if !voidElements[tok.Name.Local] {
				stack = append(stack, tok.Name.Local)
			}
		case xml.EndElement:
			if voidElements[tok.Name.Local] {
				continue
			}
			if len(stack) == 0 || stack[len(stack)-1] != tok.Name.Local {
				return errors.New("</" + tok.Name.Local + "> closes <" + strings.Join(stack, "><") + ">")
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return errors.New("unclosed: <" + strings.Join(stack, "><") + ">")
	}
	return nil
}

func TestHTMLReportRebuiltSummary(t *testing.T) {
	page := htmlOf(t, true)
	for _, want := range []string{
		"wrote no summary.json", "INTERRUPTED", `<table id="summary-table">`, "tools/call:echo",
		"Not drawn:", "resumes: no stream was resumed or reconnected", "time-to-resume: no stream was resumed",
		`<figure id="chart-latency">`, "(embedded reference server)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, absent := range []string{`id="thresholds"`, `id="storms"`, `id="chaos"`, `id="resumes"`} {
		if strings.Contains(page, absent) {
			t.Errorf("report has %s, which this run has nothing for", absent)
		}
	}
}
