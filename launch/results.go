package launch

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/report"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/soak"
	"github.com/mcpbench/mcpbench/sweep"
	"github.com/mcpbench/mcpbench/verdict"
)

// Report prints the report of the results directory dir as format says
// ("text", "markdown" or "json"): a sweep's (sweep.json) step table and
// verdict, or a run's summary — rebuilt from intervals.csv and
// histograms.hlog when summary.json is missing — followed (text, with
// spectrum) by each op's percentile spectrum and, for a soak (soak.json),
// its verdicts. The text's Next: line names mcpbench as invocation (the
// command line that runs it, as Spec.Invocation; "": "mcpbench").
// Errors: ExitFailed when dir holds no results.
func Report(w io.Writer, dir, format string, spectrum bool, invocation string) error {
	if sw, err := results.ReadSweep(dir); err == nil {
		return reportSweep(w, sw, format)
	}
	return reportRun(w, dir, format, spectrum, invocation)
}

// Compare is 'mcpbench compare A B': two runs (or soaks) side by side
// with the noise tests, or two sweeps' verdicts; FailIf's regression
// limits (verdict.ParseRegression, ParseSweepLimit) judged, written to
// JUnit when set, and printed on Stderr when crossed.
type Compare struct {
	A, B   string   // results directories (or summary.json files)
	FailIf []string // regression limits
	JSON   bool     // print JSON
	Force  bool     // compare what is not like-for-like
	JUnit  string   // the limits as JUnit XML to this file ("": none)

	Stdout, Stderr io.Writer
}

// Run compares: nil, or an error with its exit code — ExitThresholds a
// limit crossed, ExitUsage not like-for-like (without Force), a sweep
// and a run, a bad limit, ExitFailed unreadable results.
func (c Compare) Run() error {
	if err := CheckJUnitPath(c.JUnit); err != nil {
		return WithExitCode(ExitUsage, err)
	}
	swA, errA := results.ReadSweep(c.A)
	swB, errB := results.ReadSweep(c.B)
	switch {
	case errA == nil && errB == nil:
		return c.sweeps(swA, swB)
	case errA == nil:
		return Usagef("compare: %s is a sweep and %s is not: compare two sweeps or two runs", c.A, c.B)
	case errB == nil:
		return Usagef("compare: %s is a sweep and %s is not: compare two sweeps or two runs", c.B, c.A)
	}
	return c.runs()
}

// reportSweep prints a sweep's report.
func reportSweep(out io.Writer, sw *results.Sweep, format string) error {
	switch format {
	case "text":
		return sweep.WriteText(out, sw)
	case "json":
		return WriteJSON(out, sw)
	}
	return report.WriteSweepMarkdown(out, sw)
}

// reportRun prints a run's report, and a soak's verdicts after it when
// dir holds soak.json.
func reportRun(out io.Writer, dir, format string, spectrum bool, invocation string) error {
	res, err := results.ReadResults(dir)
	if err != nil {
		return WithExitCode(ExitFailed, err)
	}
	sum := res.Summary
	if sum == nil {
		sum = res.Rebuild()
	}
	sk, _ := results.ReadSoak(dir)
	if sk != nil {
		sum.Soak = sk.Outcome() // the run's one verdict, as the soak printed it
		if sk.Verdict == "" {
			sk.Verdict = report.VerdictLevel(sum)
		}
	}
	switch format {
	case "text":
		if err := report.WriteTextWith(out, sum, report.TextOptions{Dir: dir, Invocation: invocation}); err != nil {
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
			return WriteJSON(out, struct {
				Summary *results.Summary `json:"summary"`
				Soak    *results.Soak    `json:"soak"`
			}{sum, sk})
		}
		return WriteJSON(out, sum)
	}
	if err := report.WriteMarkdown(out, sum); err != nil {
		return err
	}
	if sk != nil {
		return report.WriteSoakMarkdown(out, sk)
	}
	return nil
}

// compareRuns compares two runs (or soaks): the table with the noise
// tests, the limits, a soak's verdicts.
func (c Compare) runs() error {
	args, failIf, jsonOut, force, junit := []string{c.A, c.B}, c.FailIf, c.JSON, c.Force, c.JUnit
	var regs []verdict.Regression
	for _, e := range failIf {
		r, err := verdict.ParseRegression(e)
		if err != nil {
			return WithExitCode(ExitUsage, err)
		}
		regs = append(regs, r)
	}
	a, err := readSummary(args[0])
	if err != nil {
		return WithExitCode(ExitFailed, err)
	}
	b, err := readSummary(args[1])
	if err != nil {
		return WithExitCode(ExitFailed, err)
	}
	ra, rb := readResultsDir(args[0]), readResultsDir(args[1])
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
	writeLimitsJUnit(c.Stderr, junit, failIf, groups, b.Started)
	out := c.Stdout
	ska, _ := results.ReadSoak(args[0])
	skb, _ := results.ReadSoak(args[1])
	rc := verdict.RunComparison{NotLikeForLike: mism, Headline: head, Ops: cmp, Limits: limits}
	if jsonOut {
		if err := WriteJSON(out, rc); err != nil {
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
	return limitsExit(c.Stderr, limits)
}

// compareSweeps compares two sweeps.
func (c Compare) sweeps(a, b *results.Sweep) error {
	args, failIf, jsonOut, force, junit := []string{c.A, c.B}, c.FailIf, c.JSON, c.Force, c.JUnit
	var lims []verdict.SweepLimit
	for _, e := range failIf {
		l, err := verdict.ParseSweepLimit(e)
		if err != nil {
			return WithExitCode(ExitUsage, err)
		}
		lims = append(lims, l)
	}
	if a.By != b.By {
		return Usagef("compare: %s sweeps %s, %s sweeps %s: their loads do not compare", args[0], a.By, args[1], b.By)
	}
	mism := verdict.SweepLikeForLike(a, b)
	if len(mism) > 0 && !force {
		return notLikeForLike(args, mism)
	}
	sc := verdict.CompareSweeps(a, b)
	sc.NotLikeForLike = mism
	var limits []verdict.LimitResult
	var groups [][]verdict.LimitResult // per --fail-if, for --junit
	for _, l := range lims {
		g := l.Evaluate(sc)
		groups = append(groups, g)
		limits = append(limits, g...)
	}
	writeLimitsJUnit(c.Stderr, junit, failIf, groups, b.Started)
	out := c.Stdout
	if jsonOut {
		if err := WriteJSON(out, struct {
			verdict.SweepComparison
			Limits []verdict.LimitResult `json:"limits,omitempty"`
		}{sc, limits}); err != nil {
			return err
		}
	} else {
		sweepLabel := func(path string, sw *results.Sweep) string {
			return fmt.Sprintf("%s (sweep %s, %s, %s)", path, sw.Profile, sw.Protocol, sw.Started.Format("2006-01-02 15:04"))
		}
		if err := report.WriteSweepCompare(out, sweepLabel(args[0], a), sweepLabel(args[1], b), sc, limits); err != nil {
			return err
		}
	}
	return limitsExit(c.Stderr, limits)
}

// notLikeForLike is compare's refusal of two runs or sweeps that are
// not like-for-like: exit 2 naming each difference and --force.
func notLikeForLike(args []string, ms []verdict.Mismatch) error {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.String())
	}
	return Usagef("compare: %s and %s are not like-for-like: %s; their differences would not be the servers' alone (%s compares them anyway)",
		args[0], args[1], strings.Join(parts, "; "), setting.CompareForce)
}

// limitsExit prints the crossed limits on stderr and exits 99 when any
// was.
func limitsExit(stderr io.Writer, limits []verdict.LimitResult) error {
	var crossed int
	for _, l := range limits {
		if !l.Pass {
			crossed++
			fmt.Fprintln(stderr, "REGRESSION", l.Text)
		}
	}
	if crossed > 0 {
		return WithExitCode(ExitThresholds, fmt.Errorf("%d regression limit(s) crossed", crossed))
	}
	return nil
}

// readSummary reads a results directory's summary (rebuilt if missing) or
// a summary.json file.
func readSummary(path string) (*results.Summary, error) {
	if s, err := results.ReadSummary(path); err == nil {
		return s, nil
	}
	res, err := results.ReadResults(path)
	if err != nil {
		return nil, err
	}
	if res.Summary != nil {
		return res.Summary, nil
	}
	return res.Rebuild(), nil
}

// readResultsDir reads a results directory (nil for a summary.json file or an
// unreadable directory).
func readResultsDir(path string) *results.Results {
	res, err := results.ReadResults(path)
	if err != nil {
		return nil
	}
	return res
}

// quantiles answers the percentiles a summary does not keep from a
// results directory's histograms.hlog (nil when there is none).
func quantiles(res *results.Results) verdict.QuantileSource {
	if res == nil || len(res.Histograms) == 0 {
		return nil
	}
	return res
}

func label(path string, s *results.Summary) string {
	return fmt.Sprintf("%s (profile %s, %s, %s, %.0f s)", path, s.Profile, s.Protocol, s.Started.Format("2006-01-02 15:04"), s.DurationS)
}

// writeLimitsJUnit writes compare's --fail-if limits (groups[i]: limit
// exprs[i]'s results) to path (nothing when path is ""); a failure is
// printed, and does not change the exit code.
func writeLimitsJUnit(stderr io.Writer, path string, exprs []string, groups [][]verdict.LimitResult, started time.Time) {
	if path == "" {
		return
	}
	if err := verdict.WriteJUnit(path, verdict.JUnitLimits(exprs, groups, started)); err != nil {
		fmt.Fprintf(stderr, "mcpbench: %v\n", err)
	}
}
