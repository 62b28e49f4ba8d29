package launch

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/verdict"
)

// ErrThreshold wraps an extra threshold Merge cannot check: its op or
// scenario is not one of the merged run's.
var ErrThreshold error = &setting.Error{Format: "%s", Names: []setting.Name{setting.Thresholds}}

// Merge merges the results directories dirs (the segments of one test,
// from --segment, --processes or k8s-job's pods: results.MergeResults)
// and checks the merged run against the thresholds of the profile the
// segments ran (run.json's spec) and extra, into the summary's
// Thresholds. It writes nothing (see results.Merged.Write). Errors:
// results.ErrNotSegments (wrapped) when dirs are not segments of one
// test, ErrThreshold (wrapped) for an extra threshold the run cannot
// check, or a directory that cannot be read.
func Merge(dirs []string, extra []verdict.Threshold) (*results.Merged, error) {
	m, err := results.MergeResults(dirs)
	if err != nil {
		return nil, err
	}
	ths, err := profileThresholds(m.Run)
	if err != nil {
		return nil, err
	}
	for _, th := range extra { // its op or scenario must be one of the run's
		if err := th.CheckTest(m.Run.Ops); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrThreshold, err)
		}
	}
	ths = append(ths, extra...)
	m.Summary.Warnings = verdict.Warnings(m.Summary) // judged on the merged numbers
	if len(ths) > 0 {
		m.Summary.Thresholds = verdict.CheckThresholds(m.Summary, ths, m)
	}
	return m, nil
}

// profileThresholds are the thresholds of the profile a run ran (run.json's
// spec), parsed again.
func profileThresholds(info *results.RunInfo) ([]verdict.Threshold, error) {
	spec, _ := info.Spec.(map[string]any)
	list, _ := spec["Thresholds"].([]any) // the profile is written with its Go field names
	var out []verdict.Threshold
	for _, x := range list {
		e, ok := x.(string)
		if !ok {
			continue
		}
		th, err := verdict.ParseThreshold(e)
		if err != nil {
			return nil, fmt.Errorf("run.json: threshold %q: %v", e, err)
		}
		out = append(out, th)
	}
	return out, nil
}

// MergeInto is 'mcpbench merge': it merges the segments' results
// directories dirs (Merge), checks the thresholds of their profile and
// extra, writes the JUnit file (junit: "" none), claims out (ClaimOut:
// overwrite) and writes the merged results there, and prints the merged
// summary to stdout as format says. Errors carry their exit code:
// ExitUsage dirs that are not one test's segments or a threshold the run
// cannot check, ExitResultsLost the merged results not written,
// ExitThresholds a threshold crossed, ExitFailed unreadable results. The
// text's Next: line names mcpbench as invocation (Spec.Invocation; "":
// "mcpbench").
func MergeInto(dirs []string, out string, overwrite bool, extra []verdict.Threshold, format, junit string, invocation string, stdout, stderr io.Writer) error {
	m, err := Merge(dirs, extra)
	if err != nil {
		code := ExitFailed
		if errors.Is(err, results.ErrNotSegments) || errors.Is(err, ErrThreshold) {
			code = ExitUsage
		}
		return WithExitCode(code, err)
	}
	sum := m.Summary
	if junit != "" {
		if err := verdict.WriteJUnit(junit, verdict.JUnitRun("merge", sum, nil)); err != nil {
			fmt.Fprintf(stderr, "mcpbench: %v\n", err)
		}
	}
	o, err := ClaimOut(setting.MergeOut.String(), out, overwrite)
	if err != nil {
		return err
	}
	if err := m.Write(out); err != nil {
		o.DropIfEmpty()
		return WithExitCode(ExitResultsLost, fmt.Errorf("results lost: writing the merged results to %s failed: %w", out, err))
	}
	w := stdout
	switch format {
	case "json":
		err = WriteJSON(w, sum)
	case "markdown":
		err = report.WriteMarkdown(w, sum)
	default:
		err = report.WriteTextWith(w, sum, report.TextOptions{Dir: out, Invocation: invocation})
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "mcpbench: merged %d results directories into %s\n", len(dirs), out)
	if n := results.ThresholdsFailed(sum.Thresholds); n > 0 {
		var crossed []string
		for _, t := range sum.Thresholds {
			if !t.Pass {
				crossed = append(crossed, t.Expr)
			}
		}
		return WithExitCode(ExitThresholds, fmt.Errorf("thresholds crossed: %s", strings.Join(crossed, ", ")))
	}
	return nil
}
