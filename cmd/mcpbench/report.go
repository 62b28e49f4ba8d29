package main

import (
	"fmt"

	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	var format string
	var spectrum bool
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Print a run's report from its results directory (text, markdown or JSON)",
		Long: `report prints a finished run's report from its results directory alone: the same
summary the run printed, then (text) the detailed percentile spectrum of every
op from histograms.hlog. If summary.json is missing (the run crashed or was
killed), the summary is rebuilt from intervals.csv and histograms.hlog.`,
		Example: `  mcpbench report results/20261121-060320-smoke
  mcpbench report results/run1 --format markdown > run1.md
  mcpbench report results/run1 --format json | jq .all.response_time_ms`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := metrics.ReadResults(args[0])
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			sum := res.Summary
			if sum == nil {
				sum = res.Rebuild()
			}
			out := cmd.OutOrStdout()
			switch format {
			case "text":
				if err := report.WriteText(out, sum); err != nil {
					return err
				}
				if spectrum {
					return report.WriteSpectrum(out, res)
				}
				return nil
			case "markdown", "md":
				return report.WriteMarkdown(out, sum)
			case "json":
				return writeJSON(out, sum)
			}
			return usageError("--format %q: want text, markdown or json", format)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "text, markdown or json")
	cmd.Flags().BoolVar(&spectrum, "spectrum", true, "text: append the percentile spectrum of each op")
	return cmd
}

func newCompareCmd() *cobra.Command {
	var failIf []string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs op by op; --fail-if limits turn a regression into exit 99",
		Long: `compare prints two runs side by side, op by op: rate, error rate, response-time
percentiles, service time and faulty streams, with B − A and the relative
change. A and B are results directories (or summary.json files).

--fail-if sets a regression limit on the change from A to B, e.g. 'p99>+10%'
(p99 of all ops grew more than 10 %), 'tools/call:p99>+5ms', 'p(95)>+10%',
'rate<-5%', 'error_rate>+0.5pp' (percentage points), 'get:lost>+0'. It reads
the same metrics as run --threshold (see run --help): any percentile (from
histograms.hlog when the summary does not keep it), every counter the
summary prints, with the scopes OP:, post:, get:, sessions:. Any crossed
limit exits 99; an unknown metric exits 2 listing the valid names.`,
		Example: `  mcpbench compare results/v1.2 results/v1.3
  mcpbench compare results/main results/pr --fail-if 'p99>+10%' --fail-if 'rate<-5%'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var regs []verdict.Regression
			for _, e := range failIf {
				r, err := verdict.ParseRegression(e)
				if err != nil {
					return usageError("%v", err)
				}
				regs = append(regs, r)
			}
			a, err := readSummary(args[0])
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			b, err := readSummary(args[1])
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			cmp := verdict.Compare(a, b)
			out := cmd.OutOrStdout()
			if jsonOut {
				if err := writeJSON(out, cmp); err != nil {
					return err
				}
			} else if err := report.WriteCompare(out, label(args[0], a), label(args[1], b), cmp); err != nil {
				return err
			}
			var crossed []string
			qa, qb := quantiles(args[0]), quantiles(args[1])
			for _, r := range regs {
				crossed = append(crossed, r.Check(a, b, qa, qb)...)
			}
			if len(crossed) > 0 {
				for _, c := range crossed {
					fmt.Fprintln(cmd.ErrOrStderr(), "REGRESSION", c)
				}
				return &exitError{code: exitThresholds, err: fmt.Errorf("%d regression limit(s) crossed", len(crossed))}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&failIf, "fail-if", nil, "regression limit (repeatable), e.g. 'p99>+10%', 'rate<-5%', 'error_rate>+0.5pp'")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the comparison as JSON")
	return cmd
}

// readSummary reads a results directory's summary (rebuilt if missing) or
// a summary.json file.
func readSummary(path string) (*metrics.Summary, error) {
	if s, err := metrics.ReadSummary(path); err == nil {
		return s, nil
	}
	res, err := metrics.ReadResults(path)
	if err != nil {
		return nil, err
	}
	if res.Summary != nil {
		return res.Summary, nil
	}
	return res.Rebuild(), nil
}

// quantiles reads a results directory's histograms.hlog to answer the
// percentiles a summary does not keep (nil when there is none).
func quantiles(path string) verdict.QuantileSource {
	res, err := metrics.ReadResults(path)
	if err != nil || len(res.Histograms) == 0 {
		return nil
	}
	return res
}

func label(path string, s *metrics.Summary) string {
	return fmt.Sprintf("%s (profile %s, %s, %s, %.0f s)", path, s.Profile, s.Protocol, s.Started.Format("2006-01-02 15:04"), s.DurationS)
}
