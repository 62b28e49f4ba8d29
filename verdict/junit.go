package verdict

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// JUnit XML (--junit FILE): the verdicts of a run, a sweep, a soak, a
// merge or a compare as test cases a CI system renders.
//
// The shape is the common one CI systems read (Jenkins' junit plugin,
// GitLab, GitHub test reporters, Azure DevOps) and the JUnit schema of
// Jenkins' xunit plugin (junit-10.xsd) validates: <testsuites name tests
// failures errors time> holding <testsuite name tests failures errors
// skipped time timestamp>, each
// with <properties>, then <testcase classname name time>, each with at
// most one <failure message type>, <error message type> or <skipped
// message>, then <system-out>. Times are seconds with three decimals,
// timestamps ISO 8601 in UTC without a zone (as the XSD's xs:dateTime
// pattern has them).
//
// What a case is (a compare's --fail-if limits: JUnitLimits):
//   - a run (JUnitRun): one case per threshold — classname its scope
//     ("total" without one, else "post", "get", "sessions" or the op as
//     written), name the expression as written — failed with the
//     measured value and the limit ("p99 = 612.3 ms, limit < 500 ms");
//     and always one case "run completed" (classname "run"): an error
//     when the run was interrupted or could not run, a failure when no
//     operation completed or every one failed. A run without thresholds
//     has that one case rather than an empty suite: Jenkins refuses a
//     report with no test results by default, and GitLab and GitHub
//     reporters show an empty suite as "no tests", which reads as a
//     broken pipeline rather than a run that had nothing to judge. The
//     suite's time is the measured window (the "run completed" case
//     carries it, so case times add up to the suite's).
//   - a sweep (JUnitSweep): one suite, one case per step (classname
//     "step-NN", name "SLO at <load>"), failed when the step failed the
//     SLO (the reasons), skipped when it was interrupted (not judged). A
//     sweep that finds its knee has failing cases past it by design: the
//     failures are the capacity the sweep measured, while the command
//     still exits 0. One suite rather than one per step keeps the sweep
//     one entry in a CI system's test history, each step a row of it.
//   - a soak (JUnitSoak): one case per soak verdict (drift, leaks,
//     hygiene; classname "soak"), skipped when not applicable.

// JUnitReport is a JUnit XML document: <testsuites> and its totals
// (no skipped count: the schema has none there; each suite has its own).
type JUnitReport struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     junitSeconds `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one <testsuite>: its counts are those of its Cases
// (NewJUnit fills them).
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       junitSeconds    `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []JUnitProperty `xml:"properties>property,omitempty"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is one <property name value>.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one <testcase>: passed when Failure, Error and Skipped
// are all nil.
type JUnitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      junitSeconds  `xml:"time,attr"`
	Skipped   *JUnitOutcome `xml:"skipped,omitempty"`
	Error     *JUnitOutcome `xml:"error,omitempty"`
	Failure   *JUnitOutcome `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitOutcome is a <failure>, <error> or <skipped>: a one-line message,
// a type, and the details as its text.
type JUnitOutcome struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitSeconds renders seconds with three decimals ("12.500").
type junitSeconds float64

func (s junitSeconds) MarshalXMLAttr(name xml.Name) (xml.Attr, error) {
	return xml.Attr{Name: name, Value: strconv.FormatFloat(float64(s), 'f', 3, 64)}, nil
}

// junitTime is t as the JUnit XSD's timestamp: UTC, no zone; "" for the
// zero time.
func junitTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

// NewJUnit is the report of suites, with every suite's counts and time
// and the totals computed from their cases (a suite's Time is kept when
// set, else the sum of its cases').
func NewJUnit(suites ...JUnitSuite) *JUnitReport {
	r := &JUnitReport{Name: "mcpbench", Suites: suites}
	for i := range r.Suites {
		s := &r.Suites[i]
		s.Tests, s.Failures, s.Errors, s.Skipped = len(s.Cases), 0, 0, 0
		var sum junitSeconds
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Error != nil:
				s.Errors++
			case c.Skipped != nil:
				s.Skipped++
			}
			sum += c.Time
		}
		if s.Time == 0 {
			s.Time = sum
		}
		r.Tests += s.Tests
		r.Failures += s.Failures
		r.Errors += s.Errors
		r.Time += s.Time
	}
	return r
}

// Encode writes the report as indented XML with its declaration.
func (r *JUnitReport) Encode(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJUnit writes the report of suites (NewJUnit) to path atomically
// (results.WriteFileAtomic): a reader, or a process stopped at once,
// sees the previous file or the whole new one, never half of it. Errors
// name the file.
func WriteJUnit(path string, suites ...JUnitSuite) error {
	var buf bytes.Buffer
	if err := NewJUnit(suites...).Encode(&buf); err != nil {
		return fmt.Errorf("%s %s: %w", setting.VerdictJUnitPath, path, err)
	}
	if err := results.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("%s %s: %w", setting.VerdictJUnitPath, path, err)
	}
	return nil
}

// JUnitRun is the suite of one run (kind: "run", "soak" or "merge",
// part of the suite's name "mcpbench <kind> <profile>"): its "run
// completed" case and one case per threshold of sum.Thresholds. sum nil
// (the run could not start) gives the "run completed" case alone, an
// error with runErr. runErr, when not nil, makes "run completed" an
// error (type "interrupted" when the summary says it was). A segment of
// a test (sum.Segment) has the "run completed" case alone, as its exit
// code ignores its thresholds: the merged run's are the test's.
func JUnitRun(kind string, sum *results.Summary, runErr error) JUnitSuite {
	s := JUnitSuite{Name: "mcpbench " + kind}
	run := JUnitCase{Classname: "run", Name: "run completed"}
	if sum == nil {
		run.Error = &JUnitOutcome{Type: "not-run", Message: "the run could not start: " + errText(runErr)}
		s.Cases = append(s.Cases, run)
		return s
	}
	if sum.Profile != "" {
		s.Name += " " + sum.Profile
	}
	s.Timestamp = junitTime(sum.Started)
	s.Time = junitSeconds(sum.DurationS)
	run.Time = s.Time
	for _, p := range []JUnitProperty{{"profile", sum.Profile}, {"target", sum.Target}, {"protocol", sum.Protocol}, {"model", sum.Model}} {
		if p.Value != "" {
			s.Properties = append(s.Properties, p)
		}
	}
	a := sum.All
	run.SystemOut = fmt.Sprintf("%d ops in %.3f s, %d errors, %d dropped", a.Count, sum.DurationS, a.Errors, a.Dropped)
	switch {
	case sum.Interrupted:
		run.Error = &JUnitOutcome{Type: "interrupted", Message: "interrupted: " + cmp.Or(sum.StopReason, errText(runErr)),
			Text: "the run stopped before its end; the thresholds judge what ran"}
	case runErr != nil:
		run.Error = &JUnitOutcome{Type: "error", Message: runErr.Error()}
	case a.Count == 0:
		run.Failure = &JUnitOutcome{Type: "no-operations", Message: "no operation completed"}
	case a.Errors == a.Count:
		run.Failure = &JUnitOutcome{Type: "all-failed", Message: fmt.Sprintf("every operation failed (%d)", a.Count)}
	}
	if sum.Segment != nil { // one segment of a test: its thresholds are the merged run's to judge
		s.Properties = append(s.Properties, JUnitProperty{"segment", sum.Segment.Segment})
		run.SystemOut += "; one segment of the test: the thresholds are judged on the merged run (mcpbench merge --junit)"
		s.Cases = append(s.Cases, run)
		return s
	}
	s.Cases = append(s.Cases, run)
	for _, t := range sum.Thresholds {
		s.Cases = append(s.Cases, thresholdCase(t))
	}
	return s
}

func errText(err error) string {
	if err == nil {
		return "unknown cause"
	}
	return err.Error()
}

// thresholdCase is one threshold's case: classname its scope, name the
// expression; the measured value and the limit in the failure's message
// (or, passed, in system-out).
func thresholdCase(r results.ThresholdResult) JUnitCase {
	scope, metric, cmpOp := "total", r.Expr, ""
	if t, err := ParseThreshold(r.Expr); err == nil {
		metric, cmpOp = t.Metric, t.Cmp
		if t.Op != "" {
			scope = t.Op
			metric = t.Op + ":" + t.Metric
		}
	}
	limit := fmt.Sprintf("limit %s %s", cmpOp, withUnit(r.Limit, r.Unit))
	var msg string
	if r.Actual < 0 && !r.Pass { // CheckThresholds' "no data"
		msg = fmt.Sprintf("%s: no data (nothing it selects was measured), %s", metric, limit)
	} else {
		msg = fmt.Sprintf("%s = %s, %s", metric, withUnit(r.Actual, r.Unit), limit)
	}
	c := JUnitCase{Classname: scope, Name: r.Expr}
	if r.Pass {
		c.SystemOut = msg
		return c
	}
	c.Failure = &JUnitOutcome{Type: "threshold", Message: msg,
		Text: fmt.Sprintf("threshold %s crossed: %s", r.Expr, msg)}
	return c
}

// withUnit is v in unit as the summary prints it: "612.3 ms", "2.50%",
// "950.0 ops/s", "3".
func withUnit(v float64, unit string) string {
	s := textfmt.Value(v, unit)
	switch unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + unit
}

// JUnitSweep is the suite of a sweep: one case per step, judged against
// the SLO (see the package's JUnit notes).
func JUnitSweep(sw *results.Sweep) JUnitSuite {
	s := JUnitSuite{Name: "mcpbench sweep " + sw.Profile, Timestamp: junitTime(sw.Started)}
	s.Properties = []JUnitProperty{{"profile", sw.Profile}, {"target", sw.Target}, {"by", sw.By},
		{"slo", sloText(sw.SLO)},
		{"max_sustainable_rate", textfmt.Num(sw.Verdict.MaxSustainable)},
		{"max_load", textfmt.Num(sw.Verdict.MaxLoad)},
		{"knee", textfmt.Num(sw.Verdict.Knee)}}
	if sw.Verdict.StoppedEarly != "" {
		s.Properties = append(s.Properties, JUnitProperty{"stopped_early", sw.Verdict.StoppedEarly})
	}
	per := sw.StepS * float64(max(sw.Repeat, 1))
	for _, st := range sw.Results {
		c := JUnitCase{Classname: fmt.Sprintf("step-%02d", st.N), Name: "SLO at " + loadText(st.Value, st.By), Time: junitSeconds(per)}
		numbers := fmt.Sprintf("achieved %.1f ops/s, p99 %s ms, errors %.2f%%, faulty streams %d", st.Achieved, textfmt.MS(st.Latency.P99), 100*st.ErrorRate, st.Faulty)
		switch {
		case st.Interrupted:
			c.Skipped = &JUnitOutcome{Message: "interrupted: a partial step, not judged"}
		case !st.Pass:
			c.Failure = &JUnitOutcome{Type: "slo", Message: strings.Join(st.Reasons, "; "),
				Text: fmt.Sprintf("SLO %s; %s", sloText(sw.SLO), numbers)}
		default:
			c.SystemOut = numbers
		}
		s.Cases = append(s.Cases, c)
	}
	return s
}

// loadText is a step's load: "500 ops/s", "64 VUs", "2000 sessions".
func loadText(v float64, by string) string {
	switch by {
	case "vus":
		return textfmt.Num(v) + " VUs"
	case "sessions":
		return textfmt.Num(v) + " sessions"
	}
	return textfmt.Num(v) + " ops/s"
}

// sloText is the SLO as one line: "p99 <= 50 ms, error rate <= 1.00%,
// replay clean".
func sloText(slo results.SLO) string {
	s := fmt.Sprintf("p99 <= %s ms, error rate <= %.2f%%", textfmt.MS(slo.P99MS), 100*slo.ErrorRate)
	if slo.ReplayClean {
		s += ", replay clean"
	}
	return s
}

// JUnitSoak is the suite of a soak's verdicts (started: when the soak
// began, for the timestamp).
func JUnitSoak(sk *results.Soak, started time.Time) JUnitSuite {
	s := JUnitSuite{Name: "mcpbench soak verdicts", Timestamp: junitTime(started), Time: junitSeconds(sk.DurationS)}
	for _, v := range sk.Verdicts {
		c := JUnitCase{Classname: "soak", Name: v.Name}
		msg := fmt.Sprintf("%s = %s", v.Name, withUnit(v.Value, v.Unit))
		if v.Detail != "" {
			msg += ": " + v.Detail
		}
		switch {
		case !v.Checked:
			c.Skipped = &JUnitOutcome{Message: cmp.Or(v.Detail, "not applicable")}
		case !v.Pass:
			c.Failure = &JUnitOutcome{Type: "soak", Message: msg}
		default:
			c.SystemOut = msg
		}
		s.Cases = append(s.Cases, c)
	}
	if sk.Interrupted {
		s.Properties = append(s.Properties, JUnitProperty{"interrupted", fmt.Sprintf("ran %.0f s of %.0f s planned", sk.DurationS, sk.PlannedS)})
	}
	return s
}

// JUnitLimits is the suite of compare --fail-if: one case per limit as
// written (exprs[i]) and op it checks (results[i], as Regression and
// SweepLimit Evaluate them: classname the op, "all" for the total, name
// the limit), failed when crossed, the change against the limit in the
// message. A limit with no result (nothing to compare) is an error case,
// so it cannot pass unseen. started is the compared run's (B's) start.
func JUnitLimits(exprs []string, results [][]LimitResult, started time.Time) JUnitSuite {
	s := JUnitSuite{Name: "mcpbench compare", Timestamp: junitTime(started)}
	for i, e := range exprs {
		var rs []LimitResult
		if i < len(results) {
			rs = results[i]
		}
		if len(rs) == 0 {
			s.Cases = append(s.Cases, JUnitCase{Classname: "all", Name: e, Error: &JUnitOutcome{Type: "no-data", Message: e + ": nothing to compare"}})
		}
		for _, l := range rs {
			c := JUnitCase{Classname: cmp.Or(l.Op, "all"), Name: e}
			if l.Pass {
				c.SystemOut = l.Text
			} else {
				c.Failure = &JUnitOutcome{Type: "regression", Message: l.Text}
			}
			s.Cases = append(s.Cases, c)
		}
	}
	return s
}

// JUnitFile is a results.Sink (and MeasuredSink) that writes a run's
// JUnit report to a file (WriteJUnit) as soon as its measured part ends
// (Measured: before the sessions close, so a second Ctrl-C keeps it) and
// again at End. It does nothing while the run goes: it never costs the
// load. The engine calls it from one goroutine; Err is read after the
// run.
type JUnitFile struct {
	path, kind string
	err        error
}

// NewJUnitFile returns the sink writing path for a run of kind (see
// JUnitRun).
func NewJUnitFile(path, kind string) *JUnitFile { return &JUnitFile{path: path, kind: kind} }

func (j *JUnitFile) Start(*results.RunInfo)           {}
func (j *JUnitFile) Interval(*results.IntervalRecord) {}
func (j *JUnitFile) Measured(sum *results.Summary)    { j.write(sum) }
func (j *JUnitFile) End(end *results.RunEnd)          { j.write(end.Summary) }

func (j *JUnitFile) write(sum *results.Summary) {
	if sum == nil {
		return
	}
	j.err = WriteJUnit(j.path, JUnitRun(j.kind, sum, nil))
}

// Err is the last write's error (nil: the file is written).
func (j *JUnitFile) Err() error { return j.err }
