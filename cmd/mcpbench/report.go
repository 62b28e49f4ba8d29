package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/metrics"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/soak"
	"github.com/mcpbench/mcpbench/sweep"
	"github.com/mcpbench/mcpbench/verdict"
	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	var format string
	var spectrum bool
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Print the report of a run, a sweep or a soak from its results directory (text, markdown or JSON)",
		Long: `report prints a finished run's report from its results directory alone: the same
summary the run printed, then (text) the detailed percentile spectrum of every
op from histograms.hlog. If summary.json is missing (the run crashed or was
killed), the summary is rebuilt from intervals.csv and histograms.hlog.

A sweep directory (sweep.json) prints the step table and the verdict with
their confidence intervals; a soak directory (soak.json) the run's report
followed by the soak's verdicts. JSON prints sweep.json for a sweep, and
{"summary": …, "soak": …} for a soak.`,
		Example: `  mcpbench report results/20261121-060320-smoke
  mcpbench report results/run1 --format markdown > run1.md
  mcpbench report results/run1 --format json | jq .all.response_time_ms
  mcpbench report results/cap                      # a sweep
  mcpbench report results/soak --format markdown   # a soak`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sw, err := metrics.ReadSweep(args[0]); err == nil {
				return reportSweep(cmd.OutOrStdout(), sw, format)
			}
			return reportRun(cmd.OutOrStdout(), args[0], format, spectrum)
		},
	}
	format = "text"
	cmd.Flags().VarP(&formatValue{format: &format, allowed: []string{"text", "markdown", "json"}}, "format", "f", "output format: text, markdown or json")
	cmd.Flags().BoolVar(&spectrum, "spectrum", true, "text: append the percentile spectrum of each op")
	return cmd
}

// reportSweep prints a sweep's report.
func reportSweep(out io.Writer, sw *metrics.Sweep, format string) error {
	switch format {
	case "text":
		return sweep.WriteText(out, sw)
	case "json":
		return launch.WriteJSON(out, sw)
	}
	return report.WriteSweepMarkdown(out, sw)
}

// reportRun prints a run's report, and a soak's verdicts after it when
// dir holds soak.json.
func reportRun(out io.Writer, dir, format string, spectrum bool) error {
	res, err := metrics.ReadResults(dir)
	if err != nil {
		return withCode(exitFailed, err)
	}
	sum := res.Summary
	if sum == nil {
		sum = res.Rebuild()
	}
	sk, _ := metrics.ReadSoak(dir)
	if sk != nil {
		sum.Soak = sk.Outcome() // the run's one verdict, as the soak printed it
		if sk.Verdict == "" {
			sk.Verdict = report.VerdictLevel(sum)
		}
	}
	switch format {
	case "text":
		if err := report.WriteTextIn(out, sum, dir); err != nil {
			return err
		}
		if sk != nil {
			fmt.Fprintln(out)
			if err := soak.WriteText(out, sk); err != nil {
				return err
			}
		}
		if spectrum {
			return report.WriteSpectrum(out, res)
		}
		return nil
	case "json":
		if sk != nil {
			return launch.WriteJSON(out, struct {
				Summary *metrics.Summary `json:"summary"`
				Soak    *metrics.Soak    `json:"soak"`
			}{sum, sk})
		}
		return launch.WriteJSON(out, sum)
	}
	if err := report.WriteMarkdown(out, sum); err != nil {
		return err
	}
	if sk != nil {
		return report.WriteSoakMarkdown(out, sk)
	}
	return nil
}

func newCompareCmd() *cobra.Command {
	var failIf []string
	var jsonOut, force bool
	var format, junit string
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs, sweeps or soaks; says what is beyond the noise; --fail-if limits turn a regression into exit 99",
		Long: `compare prints two runs side by side. It opens with a headline on all ops
together: throughput, dropped arrivals, errors, p50, p90 and p99, each with
its direction, its size and whether it is beyond the noise, by a test right
for the quantity (beyond when p < 0.05): Welch's t test on the per-interval
throughput (intervals.csv), the two-proportion z test on dropped arrivals
and on errors, a Mann–Whitney U test of the per-interval percentiles. Then
op by op: rate, error rate, response-time percentiles, service time and
faulty streams, with B − A and the relative change. A and B are results
directories (or summary.json files, which have no intervals to test).

Runs that differ in profile, load model, offered rate, VUs (max VUs for the
open model), stages, protocol or target are not like-for-like: compare names
the differences and refuses (exit 2) unless --force, which compares them
anyway under a NOT LIKE-FOR-LIKE line.

Two sweep directories compare their verdicts — maximum sustainable rate,
highest load under the SLO, the SLO's bracket (last passing load, first
failing load) and the knee with its 95 % interval — and p99 at each load
both ran with the steps' intervals; a difference is beyond the noise when
the two intervals (or brackets) do not overlap. Sweeps of a different
profile, dimension, protocol, target, step length or SLO are refused unless
--force. Two soak directories compare as runs, then their verdicts side by
side.

--fail-if sets a regression limit on the change from A to B, e.g. 'p99>+10%'
(p99 of all ops grew more than 10 %), 'tools/call:p99>+5ms', 'p(95)>+10%',
'rate<-5%', 'error_rate>+0.5pp' (percentage points), 'get:lost>+0'. It reads
the same metrics as run --threshold (see run --help): any percentile (from
histograms.hlog when the summary does not keep it), every counter the
summary prints, with the scopes OP:, post:, get:, sessions:. For sweeps the
figures are max_sustainable_rate, max_load, slo_crossing, knee and knee_rate
('max_sustainable_rate<-5%'). Every limit is printed, passing or crossed; a
crossed one exits 99; an unknown metric exits 2 listing the valid names.`,
		Example: `  mcpbench compare results/v1.2 results/v1.3
  mcpbench compare results/main results/pr --fail-if 'p99>+10%' --fail-if 'rate<-5%'
  mcpbench compare results/cap-v1 results/cap-v2 --fail-if 'max_sustainable_rate<-5%'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := launch.CheckJUnitPath(junit); err != nil {
				return usageError("%v", err)
			}
			swA, errA := metrics.ReadSweep(args[0])
			swB, errB := metrics.ReadSweep(args[1])
			switch {
			case errA == nil && errB == nil:
				return compareSweeps(cmd, args, swA, swB, failIf, jsonOut, force, junit)
			case errA == nil:
				return usageError("compare: %s is a sweep and %s is not: compare two sweeps or two runs", args[0], args[1])
			case errB == nil:
				return usageError("compare: %s is a sweep and %s is not: compare two sweeps or two runs", args[1], args[0])
			}
			return compareRuns(cmd, args, failIf, jsonOut, force, junit)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "compare runs (or sweeps) that are not like-for-like (different profile or resolved profile (run.json spec: op arguments, mix, …), model, offered rate, VUs, stages, protocol or target), under a NOT LIKE-FOR-LIKE line")
	cmd.Flags().StringArrayVar(&failIf, "fail-if", nil, "regression limit (repeatable), e.g. 'p99>+10%', 'rate<-5%', 'error_rate>+0.5pp'; sweeps: 'max_sustainable_rate<-5%'")
	cmd.Flags().StringVar(&junit, "junit", "", "write the --fail-if limits as JUnit XML to this file (one test case per limit and op), as run --junit")
	addFormat(cmd.Flags(), &format, &jsonOut, "text", "json")
	return cmd
}

// compareRuns compares two runs (or soaks): the table with the noise
// tests, the limits, a soak's verdicts.
func compareRuns(cmd *cobra.Command, args, failIf []string, jsonOut, force bool, junit string) error {
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
		return withCode(exitFailed, err)
	}
	b, err := readSummary(args[1])
	if err != nil {
		return withCode(exitFailed, err)
	}
	ra, rb := results(args[0]), results(args[1])
	mism := verdict.LikeForLike(a, b)
	if ra != nil && rb != nil && ra.Run != nil && rb.Run != nil {
		mism = append(mism, verdict.SpecLikeForLike(ra.Run.Spec, rb.Run.Spec)...)
	}
	if len(mism) > 0 && !force {
		return notLikeForLike(args, mism)
	}
	cmp := verdict.Compare(a, b)
	if ra != nil && rb != nil {
		verdict.AddNoise(cmp, ra.Intervals, rb.Intervals)
	}
	head := verdict.Findings(a, b, ra, rb)
	verdict.ApplyFindings(cmp, head)
	var limits []verdict.LimitResult
	qa, qb := quantiles(ra), quantiles(rb)
	var groups [][]verdict.LimitResult // per --fail-if, for --junit
	for _, r := range regs {
		g := r.Evaluate(a, b, qa, qb)
		groups = append(groups, g)
		limits = append(limits, g...)
	}
	writeLimitsJUnit(cmd, junit, failIf, groups, b.Started)
	out := cmd.OutOrStdout()
	ska, _ := metrics.ReadSoak(args[0])
	skb, _ := metrics.ReadSoak(args[1])
	rc := verdict.RunComparison{NotLikeForLike: mism, Headline: head, Ops: cmp, Limits: limits}
	if jsonOut {
		if err := launch.WriteJSON(out, rc); err != nil {
			return err
		}
	} else {
		if err := report.WriteCompare(out, label(args[0], a), label(args[1], b), rc); err != nil {
			return err
		}
		if ska != nil && skb != nil {
			if err := report.WriteSoakCompare(out, ska, skb); err != nil {
				return err
			}
		}
	}
	return limitsExit(cmd, limits)
}

// compareSweeps compares two sweeps.
func compareSweeps(cmd *cobra.Command, args []string, a, b *metrics.Sweep, failIf []string, jsonOut, force bool, junit string) error {
	var lims []verdict.SweepLimit
	for _, e := range failIf {
		l, err := verdict.ParseSweepLimit(e)
		if err != nil {
			return usageError("%v", err)
		}
		lims = append(lims, l)
	}
	if a.By != b.By {
		return usageError("compare: %s sweeps %s, %s sweeps %s: their loads do not compare", args[0], a.By, args[1], b.By)
	}
	mism := verdict.SweepLikeForLike(a, b)
	if len(mism) > 0 && !force {
		return notLikeForLike(args, mism)
	}
	c := verdict.CompareSweeps(a, b)
	c.NotLikeForLike = mism
	var limits []verdict.LimitResult
	var groups [][]verdict.LimitResult // per --fail-if, for --junit
	for _, l := range lims {
		g := l.Evaluate(c)
		groups = append(groups, g)
		limits = append(limits, g...)
	}
	writeLimitsJUnit(cmd, junit, failIf, groups, b.Started)
	out := cmd.OutOrStdout()
	if jsonOut {
		if err := launch.WriteJSON(out, struct {
			verdict.SweepComparison
			Limits []verdict.LimitResult `json:"limits,omitempty"`
		}{c, limits}); err != nil {
			return err
		}
	} else {
		sweepLabel := func(path string, sw *metrics.Sweep) string {
			return fmt.Sprintf("%s (sweep %s, %s, %s)", path, sw.Profile, sw.Protocol, sw.Started.Format("2006-01-02 15:04"))
		}
		if err := report.WriteSweepCompare(out, sweepLabel(args[0], a), sweepLabel(args[1], b), c, limits); err != nil {
			return err
		}
	}
	return limitsExit(cmd, limits)
}

// notLikeForLike is compare's refusal of two runs or sweeps that are
// not like-for-like: exit 2 naming each difference and --force.
func notLikeForLike(args []string, ms []verdict.Mismatch) error {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.String())
	}
	return usageError("compare: %s and %s are not like-for-like: %s; their differences would not be the servers' alone (--force compares them anyway)",
		args[0], args[1], strings.Join(parts, "; "))
}

// limitsExit prints the crossed limits on stderr and exits 99 when any
// was.
func limitsExit(cmd *cobra.Command, limits []verdict.LimitResult) error {
	var crossed int
	for _, l := range limits {
		if !l.Pass {
			crossed++
			fmt.Fprintln(cmd.ErrOrStderr(), "REGRESSION", l.Text)
		}
	}
	if crossed > 0 {
		return withCode(exitThresholds, fmt.Errorf("%d regression limit(s) crossed", crossed))
	}
	return nil
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

// results reads a results directory (nil for a summary.json file or an
// unreadable directory).
func results(path string) *metrics.Results {
	res, err := metrics.ReadResults(path)
	if err != nil {
		return nil
	}
	return res
}

// quantiles answers the percentiles a summary does not keep from a
// results directory's histograms.hlog (nil when there is none).
func quantiles(res *metrics.Results) verdict.QuantileSource {
	if res == nil || len(res.Histograms) == 0 {
		return nil
	}
	return res
}

func label(path string, s *metrics.Summary) string {
	return fmt.Sprintf("%s (profile %s, %s, %s, %.0f s)", path, s.Profile, s.Protocol, s.Started.Format("2006-01-02 15:04"), s.DurationS)
}

// writeLimitsJUnit writes compare's --fail-if limits (groups[i]: limit
// exprs[i]'s results) to path (nothing when path is ""); a failure is
// printed, and does not change the exit code.
func writeLimitsJUnit(cmd *cobra.Command, path string, exprs []string, groups [][]verdict.LimitResult, started time.Time) {
	if path == "" {
		return
	}
	if err := verdict.WriteJUnit(path, verdict.JUnitLimits(exprs, groups, started)); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "mcpbench: %v\n", err)
	}
}
