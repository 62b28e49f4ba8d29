package plots

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/sweep"
	"github.com/mcpbench/mcpbench/verdict"
)

// droppingSweep is a rate sweep whose steps contradict one another and
// drop arrivals, judged by sweep.Judge: step 1 passes at 500/s; step 2
// offers 1000/s and is issue 34's dropping run (5456 of 20000 arrivals
// dropped, W-DROPS-VU-SPAWN, a feature that could not apply); the bisect
// step 3 at 750/s achieves 480/s, less than step 1 (non-monotone), after
// a cool-down that ran out of time; the re-check of 500/s fails
// (hysteresis); steps 3 and 4 ran with the generator busy
// (W-GENERATOR-CPU each).
func droppingSweep(t *testing.T) *results.Sweep {
	t.Helper()
	slo := results.SLO{P99MS: 50, ErrorRate: 0.01}
	drop := droppingRun()
	drop.Warnings = verdict.Warnings(drop) // as the engine sets them
	lat := func(p99 float64) results.Latency {
		return results.Latency{P50: p99 / 4, P90: p99 / 2, P99: p99, Max: 2 * p99}
	}
	summary := func(rate, achieved, p99 float64) *results.Summary {
		n := int64(achieved * 10)
		o := results.OpSummary{Name: "all", Count: n, Rate: achieved, Response: lat(p99)}
		return &results.Summary{Model: "open", TargetRate: rate, DurationS: 10, All: o, Ops: []results.OpSummary{o}}
	}
	busy := func(s *results.Summary) *results.Summary { // mcpbench used 1.9 of its 2 cores
		s.Generator = results.Generator{NumCPU: 2, GOMAXPROCS: 2, Cores: 1.9}
		s.Warnings = verdict.Warnings(s)
		return s
	}
	unsettled := &results.CoolDown{Probes: 30, Seconds: 30, P50MS: 9, Baseline: 1, Settled: false}
	steps := []results.SweepStep{
		sweep.StepOf(1, "rate", 500, summary(500, 500, 5), nil, slo),
		sweep.StepOf(2, "rate", 1000, drop, nil, slo),
		sweep.StepOf(3, "rate", 750, busy(summary(750, 480, 60)), nil, slo),
		sweep.StepOf(4, "rate", 500, busy(summary(500, 500, 80)), nil, slo),
	}
	steps[2].Refine, steps[2].CoolDown = true, unsettled
	steps[3].Recheck, steps[3].CoolDown = true, &results.CoolDown{Probes: 2, Seconds: 2, P50MS: 1.2, Baseline: 1, Settled: true}
	return &results.Sweep{Tool: "mcpbench test", Target: "http://127.0.0.1:1/mcp", Profile: "t", Protocol: "2025-11-25", By: "rate",
		From: 500, To: 1000, Steps: 2, StepS: 10, SLO: slo, Results: steps, Verdict: sweep.Judge(steps, slo), ProbeBaselineMS: 1}
}

// textSweepLines are the lines of a sweep's text that its report model
// makes — the last paragraph: the verdict's lines, the not-applicable
// lines, each warning's head, cause and remedy — and the rows of its
// table of steps that dropped arrivals, cells separated by one space.
func textSweepLines(text string) (lines, dropped []string) {
	paras := strings.Split(strings.TrimRight(text, "\n"), "\n\n")
	for _, l := range strings.Split(paras[len(paras)-1], "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	for _, p := range paras {
		if rows, ok := strings.CutPrefix(p, "Steps that dropped arrivals ("); ok {
			for _, r := range strings.Split(rows, "\n")[2:] { // the title, the header
				dropped = append(dropped, strings.Join(strings.Fields(r), " "))
			}
		}
	}
	return lines, dropped
}

var droppedRowRE = regexp.MustCompile(`(?s)<tr class="dropped">(.*?)</tr>`)

// htmlSweepLines are the same from a sweep's report.html: its .vline
// paragraphs and the rows of its dropped-arrivals table, as a browser's
// text.
func htmlSweepLines(page string) (lines, dropped []string) {
	for _, m := range vlineRE.FindAllStringSubmatch(page, -1) {
		lines = append(lines, html.UnescapeString(m[1]))
	}
	if m := droppedRE.FindStringSubmatch(page); m != nil {
		for _, r := range droppedRowRE.FindAllStringSubmatch(m[1], -1) {
			var cells []string
			for _, c := range cellRE.FindAllStringSubmatch(r[1], -1) {
				cells = append(cells, html.UnescapeString(c[1]))
			}
			dropped = append(dropped, strings.Join(cells, " "))
		}
	}
	return lines, dropped
}

// A sweep's report.html says what its text says: the same verdict lines,
// not-applicable lines, warnings (id, cause, remedy: the sweep's
// W-SWEEP-* and each step's drop warning) and steps that dropped
// arrivals, for a sweep with drops, a non-monotone step, an unsettled
// cool-down and a failed re-check, and for a clean recorded sweep of the
// reference server. Before the sweep's report model the page showed the
// sweep's findings in other words, the steps' warnings not at all, and
// no line of the text's verdict.
func TestSweepHTMLReportSaysWhatTheTextSays(t *testing.T) {
	clean := readSweep(t, "../../testdata/golden/sweep.json") // a real sweep of mcpbench serve
	tests := []struct {
		name     string
		sw       *results.Sweep
		first    string
		warnings []string
		na       int
		dropped  []string
	}{
		{"drops and contradictions", droppingSweep(t), "Maximum sustainable rate under the SLO: 500.0 ops/s (step 1); the SLO is crossed between 500 ops/s (step 1, passed) and 750 ops/s (step 3, failed)",
			[]string{"W-SWEEP-NONMONOTONE", "W-SWEEP-HYSTERESIS", "W-SWEEP-COOLDOWN", "W-DROPS-VU-SPAWN", "W-GENERATOR-CPU", "W-GENERATOR-CPU"}, 1,
			[]string{"2 1000 20000 5456 27.28% 900.1 FAIL"}},
		{"clean", clean, "Maximum sustainable rate under the SLO: ", nil, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var txt, page bytes.Buffer
			if err := sweep.WriteText(&txt, tt.sw); err != nil {
				t.Fatal(err)
			}
			if err := SweepHTMLReport(&page, tt.sw); err != nil {
				t.Fatal(err)
			}
			tl, td := textSweepLines(txt.String())
			hl, hd := htmlSweepLines(page.String())
			if !slices.Equal(tl, hl) {
				t.Errorf("lines differ:\ntext %q\nhtml %q", tl, hl)
			}
			if !slices.Equal(td, hd) || !slices.Equal(td, tt.dropped) {
				t.Errorf("dropped rows differ:\ntext %q\nhtml %q\nwant %q", td, hd, tt.dropped)
			}
			if len(tl) == 0 || !strings.HasPrefix(tl[0], tt.first) {
				t.Errorf("verdict %q, want %q…", tl, tt.first)
			}
			var ids []string
			na := 0
			for i, l := range tl {
				if id, ok := strings.CutPrefix(l, "WARNING "); ok {
					id, _, _ = strings.Cut(id, ":")
					ids = append(ids, id)
					if i+2 >= len(tl) || !strings.HasPrefix(tl[i+1], "cause: ") || !strings.HasPrefix(tl[i+2], "remedy: ") ||
						!strings.HasSuffix(tl[i+2], "(docs/troubleshooting.md#"+strings.ToLower(id)+")") {
						t.Errorf("%s lacks its cause or remedy: %q", id, tl[i:min(i+3, len(tl))])
					}
				}
				if strings.HasPrefix(l, "not applicable: ") {
					na++
				}
			}
			seen := map[string]int{} // one element per warning, each id its own: w-generator-cpu, w-generator-cpu-2
			for _, id := range ids {
				a := strings.ToLower(id)
				if seen[a]++; seen[a] > 1 {
					a += fmt.Sprintf("-%d", seen[a])
				}
				if n := strings.Count(page.String(), `id="warning-`+a+`"`); n != 1 {
					t.Errorf("%d elements with id warning-%s, want 1", n, a)
				}
			}
			if !slices.Equal(ids, tt.warnings) || na != tt.na {
				t.Errorf("warnings %q, want %q; %d not-applicable lines, want %d", ids, tt.warnings, na, tt.na)
			}
		})
	}
}
