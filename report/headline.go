package report

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// The first lines of a summary: the verdict, and where to look next.

// WriteTextIn is WriteText for a summary that belongs to the results
// directory dir ("" for none): the summary's first lines then also say
// where to look next — DIR/report.html when it is there, else
// `mcpbench plot DIR` to draw it, and DIR/offenders.json when streams
// were faulty. It reads dir's file list only; errors are the writer's.
func WriteTextIn(w io.Writer, s *results.Summary, dir string) error {
	return writeText(w, s, TextOptions{Dir: dir})
}

// TextOptions say what WriteTextWith's first lines may add to the
// summary's text.
type TextOptions struct {
	// Dir is the results directory the summary belongs to ("": none, no
	// Next: line).
	Dir string
	// Invocation is the command line that runs mcpbench, as the user
	// invoked it, for the commands the Next: line names: "mcpbench" (""),
	// "go run ./cmd/mcpbench", "./mcpbench". Said as given.
	Invocation string
}

// WriteTextWith is WriteTextIn with its options: the Next: line names the
// command as o.Invocation ("Next: go run ./cmd/mcpbench plot DIR …").
// It reads o.Dir's file list only; errors are the writer's.
func WriteTextWith(w io.Writer, s *results.Summary, o TextOptions) error {
	return writeText(w, s, o)
}

// verdictLine says in one line whether the run passed and what went
// wrong, before any table:
//
//	Verdict: FAIL — 1 of 2 thresholds failed (p(95)<1s: actual 1006 ms) · 9 errors (3.00% of ops) · …
//	Verdict: WARN — 21 dropped (6.42% of arrivals; WARNING W-DROPS-VU-CAP below) · mcpbench used 1.93 of its 2 cores (WARNING W-GENERATOR-CPU below)
//	Verdict: OK — no errors · no drops · 5190 streams judged, none faulty · no thresholds set
//
// FAIL: a threshold failed (the run exits 99). WARN: none failed, but
// something is wrong: errors, drops, faulty streams (replay ledger of
// response and GET streams), sessions that failed to open, deleted
// sessions the server mishandled, requested features that could not
// apply, tool calls the reference server ran twice, the warnings
// (verdict.Warnings: each named by its id; drops over 1 % by the drop
// count's). OK: none of that.
func verdictLine(s *results.Summary) string {
	warns := verdict.Warnings(s)
	var problems []string
	failed := results.ThresholdsFailed(s.Thresholds)
	if failed > 0 {
		var which []string
		for _, t := range s.Thresholds {
			if !t.Pass {
				which = append(which, t.Expr+": "+thresholdActual(t))
			}
		}
		if len(which) > 3 {
			which = append(which[:3], "…")
		}
		problems = append(problems, fmt.Sprintf("%d of %d thresholds failed (%s)", failed, len(s.Thresholds), strings.Join(which, "; ")))
	}
	a := &s.All
	if a.Errors > 0 {
		problems = append(problems, fmt.Sprintf("%d errors (%.2f%% of ops)", a.Errors, 100*a.ErrorRate))
	}
	dropWarn := ""
	for _, w := range warns {
		if strings.HasPrefix(w.ID, "W-DROPS-") {
			dropWarn = "; WARNING " + w.ID + " below"
		}
	}
	if s.Dropped > 0 {
		problems = append(problems, fmt.Sprintf("%d dropped (%.2f%% of arrivals%s)", s.Dropped, 100*s.DroppedRate, dropWarn))
	}
	if n, of := checksFailed(s); n > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d checks failed", n, of))
	}
	judged, faulty, parts := streamsFaulty(s)
	if faulty > 0 {
		problems = append(problems, fmt.Sprintf("%d faulty streams (%s)", faulty, strings.Join(parts, ", ")))
	}
	if n := s.Sessions.Failed; n > 0 {
		problems = append(problems, fmt.Sprintf("%d sessions failed to open", n))
	}
	if h := s.Sessions.Hygiene; h != nil && h.Faulty > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d deleted sessions mishandled", h.Faulty, h.Probed))
	}
	// A soak's summary (s.Soak): one verdict for the run and its soak
	// verdicts; a failed one fails the run as a threshold does (exit 99),
	// none judged is a WARN.
	if o := s.Soak; o != nil {
		switch {
		case len(o.Failed) > 0:
			failed++
			problems = append(problems, fmt.Sprintf("soak: %s failed (below)", strings.Join(o.Failed, ", ")))
		case o.Judged == 0:
			problems = append(problems, fmt.Sprintf("soak not judged: none of its %d verdicts had anything to judge (below)", o.Verdicts))
		}
	}
	if n := len(s.NotApplicable); n > 0 {
		what := "features"
		if n == 1 {
			what = "feature"
		}
		problems = append(problems, fmt.Sprintf("%d requested %s not applicable (below)", n, what))
	}
	if sv := s.Server; sv != nil && sv.DoubleExecutions > 0 {
		problems = append(problems, fmt.Sprintf("%d tool calls ran twice on the server", sv.DoubleExecutions))
	}
	for _, w := range warns {
		switch w.ID {
		case verdict.WGeneratorCPU:
			head, _, _ := strings.Cut(w.Text, ":") // "mcpbench used 1.93 of its 2 cores"
			problems = append(problems, head+" (WARNING "+w.ID+" below)")
		case verdict.WStartLag:
			problems = append(problems, fmt.Sprintf("%d of %d ops started late (WARNING %s below)", s.All.LateStarts, s.All.Count, w.ID))
		}
	}
	switch {
	case failed > 0:
		return "Verdict: FAIL — " + strings.Join(problems, " · ")
	case len(problems) > 0:
		if n := len(s.Thresholds); n > 0 {
			problems = append(problems, fmt.Sprintf("%d thresholds passed", n))
		}
		return "Verdict: WARN — " + strings.Join(problems, " · ")
	}
	if a.Count == 0 && a.Errors == 0 && s.Dropped == 0 {
		// Nothing measured (interrupted during set-up, or a window
		// with no op): no verdict rests on nothing.
		why := "no operation was measured"
		if s.Interrupted {
			why += " (interrupted: " + cmp.Or(s.StopReason, "stopped early") + ")"
		}
		return "Verdict: NONE — " + why
	}
	ok := []string{"no errors"}
	if s.Model == "open" {
		ok = append(ok, "no drops")
	}
	if judged > 0 {
		ok = append(ok, fmt.Sprintf("%d streams judged, none faulty", judged))
	}
	if n := len(s.Thresholds); n > 0 {
		ok = append(ok, fmt.Sprintf("%d thresholds passed", n))
	} else {
		ok = append(ok, "no thresholds set")
	}
	return "Verdict: OK — " + strings.Join(ok, " · ")
}

// streamsFaulty counts the streams the replay ledgers judged and found
// faulty, response and GET streams together, and names the faulty ones
// by kind ("27 of 270 response", "3 of 40 GET").
func streamsFaulty(s *results.Summary) (judged, faulty int64, parts []string) {
	if l := s.All.Ledger; l != nil {
		judged, faulty = judged+l.Streams, faulty+l.Faulty
		if l.Faulty > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d response", l.Faulty, l.Streams))
		}
	}
	if g := s.GETStreams; g != nil && g.Ledger != nil {
		judged, faulty = judged+g.Ledger.Streams, faulty+g.Ledger.Faulty
		if g.Ledger.Faulty > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d GET", g.Ledger.Faulty, g.Ledger.Streams))
		}
	}
	return judged, faulty, parts
}

// thresholdActual renders a threshold's measured value as the
// Thresholds block does: "1006 ms", "no data".
func thresholdActual(t results.ThresholdResult) string {
	if t.Actual < 0 && !t.Pass {
		return "no data"
	}
	return strings.TrimSpace(fmt.Sprintf("actual %.4g %s", t.Actual, t.Unit))
}

// nextLine says where to look next in the results directory o.Dir ("":
// nothing to say): its report.html when `mcpbench plot` wrote one, else
// the command that draws it (mcpbench named as o.Invocation); its
// offenders.json when streams were faulty.
func nextLine(s *results.Summary, o TextOptions) string {
	dir, mcpbench := o.Dir, cmp.Or(o.Invocation, "mcpbench")
	if dir == "" {
		return ""
	}
	var next []string
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		next = append(next, fmt.Sprintf("open %s (charts; %s plot %s draws them again)", filepath.Join(dir, "report.html"), mcpbench, dir))
	} else {
		next = append(next, fmt.Sprintf("%s plot %s (charts and %s)", mcpbench, dir, filepath.Join(dir, "report.html")))
	}
	if _, faulty, _ := streamsFaulty(s); faulty > 0 {
		next = append(next, fmt.Sprintf("the worst faulty streams are in %s", filepath.Join(dir, results.FileOffenders)))
	}
	return "Next: " + strings.Join(next, " · ")
}
