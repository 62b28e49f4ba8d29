package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/results"
)

// textOf prints s as WriteTextIn does for dir.
func textOf(t *testing.T, s *results.Summary, dir string) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTextIn(&b, s, dir); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// lineWith returns the one line of text that starts with prefix ("" when
// none).
func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// The verdict is among the first lines, before any table, and says FAIL
// (a threshold failed), WARN (something wrong, no threshold failed) or
// OK, naming what went wrong with the summary's own counts.
func TestSummaryOpensWithTheVerdict(t *testing.T) {
	clean := func() *results.Summary {
		var s results.Summary
		fixture.Read(t, "run-closed.json", &s)
		return &s
	}
	warn := fixture.PrintedSummary()
	fail := fixture.PrintedSummary()
	fail.Thresholds = []results.ThresholdResult{{Expr: "p99<1ms", Actual: 17.25, Unit: "ms"}, {Expr: "errors==0", Actual: 9, Pass: true}}
	passed := clean()
	passed.Thresholds = []results.ThresholdResult{{Expr: "p99<1s", Actual: 191.5, Unit: "ms", Pass: true}}
	busy := clean()
	busy.Generator.Cores, busy.Generator.GOMAXPROCS, busy.Generator.IncludesServer = 1.93, 2, false
	tests := []struct {
		name string
		s    *results.Summary
		want []string
		not  []string
	}{
		{"clean", clean(), []string{"Verdict: OK — no errors · 68165 streams judged, none faulty · no thresholds set"}, []string{"drops"}},
		{"passed", passed, []string{"Verdict: OK — ", "1 thresholds passed"}, nil},
		{"warn", warn, []string{"Verdict: WARN — 9 errors (3.00% of ops)", "21 dropped (6.42% of arrivals; WARNING W-DROPS-VU-CAP below)", "30 faulty streams (27 of 270 response, 3 of 40 GET)",
			"43 sessions failed to open", "31 of 59 deleted sessions mishandled", "61 tool calls ran twice"}, []string{"threshold"}},
		{"fail", fail, []string{"Verdict: FAIL — 1 of 2 thresholds failed (p99<1ms: actual 17.25 ms)", "9 errors"}, []string{"errors==0"}},
		{"generator", busy, []string{"Verdict: WARN — mcpbench used 1.93 of its 2 cores (WARNING W-GENERATOR-CPU below)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := textOf(t, tt.s, "")
			head, _, _ := strings.Cut(text, "\n\n") // the header: before the first table
			v := lineWith(head, "Verdict: ")
			if v == "" {
				t.Fatalf("no verdict before the first table:\n%s", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(v, w) {
					t.Errorf("verdict lacks %q: %s", w, v)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(v, w) {
					t.Errorf("verdict has %q: %s", w, v)
				}
			}
			if strings.Contains(head, "Next:") {
				t.Errorf("a summary without a results directory says where to look next:\n%s", head)
			}
		})
	}
}

// With a results directory the summary says where to look next: the
// command that draws the charts, or report.html once it is there, and
// offenders.json when streams were faulty.
func TestSummarySaysWhereToLookNext(t *testing.T) {
	dir := t.TempDir()
	var s results.Summary
	fixture.Read(t, "run-closed.json", &s)
	next := lineWith(textOf(t, &s, dir), "Next: ")
	if want := "Next: mcpbench plot " + dir + " (charts and " + filepath.Join(dir, "report.html") + ")"; next != want {
		t.Errorf("without report.html:\n got %s\nwant %s", next, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	next = lineWith(textOf(t, &s, dir), "Next: ")
	if !strings.HasPrefix(next, "Next: open "+filepath.Join(dir, "report.html")) || strings.Contains(next, "offenders") {
		t.Errorf("with report.html: %s", next)
	}
	next = lineWith(textOf(t, fixture.PrintedSummary(), dir), "Next: ")
	if !strings.Contains(next, filepath.Join(dir, results.FileOffenders)) {
		t.Errorf("faulty streams, and no word of offenders.json: %s", next)
	}
}

// The Next: line names mcpbench as the user invoked it
// (TextOptions.Invocation; launch.Invocation decides it), the rest of the
// text as WriteTextIn's.
func TestNextLineSaysTheInvocation(t *testing.T) {
	dir := t.TempDir()
	var s results.Summary
	fixture.Read(t, "run-closed.json", &s)
	plain := textOf(t, &s, dir)
	for _, inv := range []string{"go run ./cmd/mcpbench", "./mcpbench", "/usr/local/bin/mcpbench", "mcpbench", ""} {
		var b bytes.Buffer
		if err := WriteTextWith(&b, &s, TextOptions{Dir: dir, Invocation: inv}); err != nil {
			t.Fatal(err)
		}
		said := inv
		if said == "" {
			said = "mcpbench"
		}
		if want := "Next: " + said + " plot " + dir + " (charts and " + filepath.Join(dir, "report.html") + ")"; lineWith(b.String(), "Next: ") != want {
			t.Errorf("%q: %s, want %s", inv, lineWith(b.String(), "Next: "), want)
		}
		if got := strings.Replace(b.String(), "Next: "+said+" plot", "Next: mcpbench plot", 1); got != plain {
			t.Errorf("%q: the text differs beyond the Next: line:\n%s", inv, got)
		}
	}
}

// Lines with nothing to say are left out: Pages when no list op followed
// a cursor, the Connections line unless it is notable (proxy, mixed
// protocols, more connections than the sessions keep), the ledger's
// verdict counts when all are 0, the reference server's count-tool line
// when the count tool never ran.
func TestSummaryLeavesOutLinesWithNothingToSay(t *testing.T) {
	base := func() *results.Summary {
		var s results.Summary
		fixture.Read(t, "run-closed.json", &s)
		for i := range s.Ops {
			if strings.HasSuffix(s.Ops[i].Name, "/list") {
				s.Ops[i].Pages = s.Ops[i].Count // one page each
				s.All.Pages += s.Ops[i].Count
			}
		}
		s.Net = &results.NetSummary{HTTP: "auto", Protocol: "http/1.1", Transport: "mcpbench HTTP/1.1", Connections: 8, ByProtocol: map[string]int64{"http/1.1": 8}}
		s.Server = &results.ServerStats{ToolCalls: 3801}
		return &s
	}
	s := base()
	text := textOf(t, s, "")
	for _, absent := range []string{"Pages:", "Connections (", "lost 0", "Reference server:"} {
		if strings.Contains(text, absent) {
			t.Errorf("%q printed with nothing to say:\n%s", absent, text)
		}
	}
	if !strings.Contains(text, "Replay ledger (response streams): 68157 judged, 0 faulty\n") {
		t.Errorf("ledger line:\n%s", text)
	}

	paged := base()
	for i := range paged.Ops {
		if paged.Ops[i].Name == "tools/list" {
			paged.Ops[i].Pages += 3 // three ops followed a cursor
			paged.All.Pages += 3
		}
	}
	if l := lineWith(textOf(t, paged, ""), "Pages: "); !strings.HasPrefix(l, "Pages: 11411 list pages") {
		t.Errorf("pagination, Pages line %q", l)
	}

	tests := []struct {
		name string
		mod  func(*results.Summary)
		want string
	}{
		{"reopened", func(s *results.Summary) { s.Net.Connections, s.Net.ByProtocol["http/1.1"] = 17, 17 },
			"Connections (mcpbench HTTP/1.1; --http auto): 17 opened (http/1.1 17); more than the 16 the sessions keep open"},
		{"concurrency", func(s *results.Summary) { s.Concurrency, s.Net.Connections = 4, 17 }, ""}, // 8 × (4 + 1) = 40 kept
		{"mixed", func(s *results.Summary) { s.Net.ByProtocol = map[string]int64{"http/1.1": 5, "h2": 3} },
			"Connections (mcpbench HTTP/1.1; --http auto): 8 opened (h2 3, http/1.1 5)\n"},
		{"proxy", func(s *results.Summary) { s.Net.Proxy, s.Net.Proxied = "http://127.0.0.1:3128 (--proxy)", 8 },
			"Connections (mcpbench HTTP/1.1; --http auto): 8 opened (http/1.1 8), 8 through the proxy\n"},
	}
	for _, tt := range tests {
		s := base()
		tt.mod(s)
		text := textOf(t, s, "")
		if got := strings.Contains(text, "Connections ("); got != (tt.want != "") {
			t.Errorf("%s: Connections line printed %v, want %v:\n%s", tt.name, got, tt.want != "", text)
		}
		if tt.want != "" && !strings.Contains(text, tt.want) {
			t.Errorf("%s: lacks %q:\n%s", tt.name, tt.want, text)
		}
	}
}

// A run that measured nothing (interrupted during set-up) gets no verdict
// of OK: "NONE", with the reason.
func TestSummaryWithNothingMeasuredHasNoVerdict(t *testing.T) {
	s := &results.Summary{Interrupted: true, StopReason: "interrupted during set-up (interrupted by signal): nothing was measured"}
	got := verdictLine(s)
	want := "Verdict: NONE — no operation was measured (interrupted: interrupted during set-up (interrupted by signal): nothing was measured)"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	s.All.Count = 1
	if got := verdictLine(s); !strings.HasPrefix(got, "Verdict: OK") {
		t.Errorf("one op measured: %q, want OK", got)
	}
}
