package plots

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
)

// droppingRun is issue 34's open-model run: 1000/s for 20 s, 116 of max
// 200 VUs started, 5456 of 20000 arrivals dropped (27.3 %) at the 1 s max
// delay; one requested feature could not apply.
func droppingRun() *results.Summary {
	o := &results.OpStats{Response: results.NewHist(), Service: results.NewHist(), DropLB: results.NewHist()}
	for _, v := range []struct{ us, n int64 }{{40_000, 14000}, {900_000, 544}} {
		for range v.n {
			o.Response.RecordValue(v.us)
			o.Service.RecordValue(v.us / 2)
		}
		o.Count += v.n
	}
	for range 5456 {
		o.DropLB.RecordValue(1_000_000)
	}
	o.Dropped = 5456
	op := results.OpSummaryOf("tools/call:echo", o, 20)
	return &results.Summary{Tool: "mcpbench test", Target: "http://127.0.0.1:1/mcp", Protocol: "2025-11-25", Profile: "t", Model: "open",
		DurationS: 20, TargetRate: 1000, VUs: 116, MaxVUs: 200, Dropped: 5456, DroppedRate: 5456.0 / 20000,
		Ops: []results.OpSummary{op}, All: op,
		NotApplicable: []results.NotApplicable{{Feature: "--check-deleted", Reason: "the server gives no session ids"}},
		Notes:         []string{"--rate 1000 given"},
		Generator:     results.Generator{NumCPU: 8, GOMAXPROCS: 8, Cores: 1.5}}
}

// modelLines are the lines of a text summary that the report model makes:
// the verdict, stops, notes, not-applicable lines and each warning's
// head, cause and remedy; then the dropped-ops table's rows, their cells
// separated by one space.
func textModelLines(text string) (lines, dropped []string) {
	head, rest, _ := strings.Cut(text, "\n\n")
	for _, l := range strings.Split(head, "\n") {
		t := strings.TrimSpace(l)
		for _, p := range []string{"Verdict: ", "INTERRUPTED: ", "ABORTED: ", "note: ", "not applicable: ", "WARNING ", "cause: ", "remedy: "} {
			if strings.HasPrefix(t, p) {
				lines = append(lines, t)
			}
		}
	}
	if _, tab, ok := strings.Cut(rest, "dropped ops (ms;"); ok {
		rows := strings.Split(tab, "\n")[2:] // the title's end, the header
		for _, r := range rows {
			if strings.TrimSpace(r) == "" {
				break
			}
			dropped = append(dropped, strings.Join(strings.Fields(r), " "))
		}
	}
	return lines, dropped
}

var (
	vlineRE   = regexp.MustCompile(`(?s)<p class="vline[^"]*">(.*?)</p>`)
	droppedRE = regexp.MustCompile(`(?s)<table id="dropped-table">.*?<tbody>(.*?)</tbody>`)
	rowRE     = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRE    = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

// htmlModelLines are the same from a report.html: its .vline paragraphs
// and the rows of its dropped-ops table, as a browser's text.
func htmlModelLines(page string) (lines, dropped []string) {
	for _, m := range vlineRE.FindAllStringSubmatch(page, -1) {
		lines = append(lines, html.UnescapeString(m[1]))
	}
	if m := droppedRE.FindStringSubmatch(page); m != nil {
		for _, r := range rowRE.FindAllStringSubmatch(m[1], -1) {
			var cells []string
			for _, c := range cellRE.FindAllStringSubmatch(r[1], -1) {
				cells = append(cells, html.UnescapeString(c[1]))
			}
			dropped = append(dropped, strings.Join(cells, " "))
		}
	}
	return lines, dropped
}

// report.html says what the terminal says: the same verdict, stops,
// notes, not-applicable lines, warnings (id, cause, remedy) and
// dropped-ops table, for a run with drops, a run whose thresholds failed
// (and whose generator was busy) and a clean run. Before the report
// model the page had no verdict, no warning and no dropped-ops table.
func TestHTMLReportSaysWhatTheTextSays(t *testing.T) {
	clean := func() *results.Summary {
		var s results.Summary
		data, err := os.ReadFile("../testdata/golden/run-closed.json") // a real closed run
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	failed := clean()
	failed.Thresholds = []results.ThresholdResult{{Expr: "p99<1ms", Actual: 17.25, Limit: 1, Unit: "ms"}, {Expr: "errors==0", Pass: true}}
	failed.Generator.Cores, failed.Generator.GOMAXPROCS, failed.Generator.IncludesServer = 1.9, 2, false
	failed.Interrupted, failed.StopReason = true, "interrupted by signal"
	tests := []struct {
		name     string
		s        *results.Summary
		verdict  string
		warnings []string
		dropped  int
	}{
		{"drops", droppingRun(), "Verdict: WARN — 5456 dropped (27.28% of arrivals; WARNING W-DROPS-VU-SPAWN below)", []string{"W-DROPS-VU-SPAWN"}, 1},
		{"thresholds failed", failed, "Verdict: FAIL — 1 of 2 thresholds failed (p99<1ms: actual 17.25 ms)", []string{"W-GENERATOR-CPU"}, 0},
		{"clean", clean(), "Verdict: OK — no errors · 68165 streams judged, none faulty · no thresholds set", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var txt, page bytes.Buffer
			if err := report.WriteText(&txt, tt.s); err != nil {
				t.Fatal(err)
			}
			if err := HTMLReport(&page, &results.Results{Summary: tt.s}); err != nil {
				t.Fatal(err)
			}
			tl, td := textModelLines(txt.String())
			hl, hd := htmlModelLines(page.String())
			if !slices.Equal(tl, hl) {
				t.Errorf("lines differ:\ntext %q\nhtml %q", tl, hl)
			}
			if !slices.Equal(td, hd) || len(td) != tt.dropped {
				t.Errorf("dropped-ops rows differ (want %d):\ntext %q\nhtml %q", tt.dropped, td, hd)
			}
			if len(tl) == 0 || !strings.HasPrefix(tl[0], tt.verdict) {
				t.Errorf("verdict %q, want %q…", tl, tt.verdict)
			}
			var ids []string
			for _, l := range tl {
				if id, ok := strings.CutPrefix(l, "WARNING "); ok {
					id, _, _ = strings.Cut(id, ":")
					ids = append(ids, id)
				}
			}
			if !slices.Equal(ids, tt.warnings) {
				t.Errorf("warnings %q, want %q", ids, tt.warnings)
			}
			for _, id := range ids { // each with its cause and remedy
				if !strings.Contains(page.String(), `id="warning-`+strings.ToLower(id)+`"`) {
					t.Errorf("no element for %s", id)
				}
			}
		})
	}
}

// The drop warning names the remedy with its numbers: VUs started up
// front, like k6's preAllocatedVUs.
func TestDropWarningNamesItsRemedy(t *testing.T) {
	m := report.Build(droppingRun())
	if len(m.Warnings) != 1 {
		t.Fatalf("warnings %+v", m.Warnings)
	}
	w := m.Warnings[0]
	if w.Cause != "VUs could not be added fast enough (116 of max 200 started; new sessions initialize in p99 0.0 ms)" ||
		!strings.HasPrefix(w.Remedy, "start them up front with profile.Profile.VUs 200 (like k6's preAllocatedVUs)") {
		t.Errorf("cause %q, remedy %q", w.Cause, w.Remedy)
	}
}
