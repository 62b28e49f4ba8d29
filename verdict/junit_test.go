package verdict

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// The structs a CI system's JUnit reader would use, written here
// independently of junit.go's, so a renamed element or attribute there
// fails these tests.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    string   `xml:"tests,attr"`
	Failures string   `xml:"failures,attr"`
	Errors   string   `xml:"errors,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

type xSuite struct {
	Name       string  `xml:"name,attr"`
	Tests      string  `xml:"tests,attr"`
	Failures   string  `xml:"failures,attr"`
	Errors     string  `xml:"errors,attr"`
	Skipped    string  `xml:"skipped,attr"`
	Time       string  `xml:"time,attr"`
	Timestamp  string  `xml:"timestamp,attr"`
	Properties []xProp `xml:"properties>property"`
	Cases      []xCase `xml:"testcase"`
}

type xProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xCase struct {
	Classname string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *xOutcome `xml:"failure"`
	Error     *xOutcome `xml:"error"`
	Skipped   *xOutcome `xml:"skipped"`
	SystemOut string    `xml:"system-out"`
}

type xOutcome struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// readJUnit reads a written report back, checks its shape (checkShape)
// and its counts against its cases.
func readJUnit(t *testing.T, path string) xSuites {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(`<?xml version="1.0" encoding="UTF-8"?>`)) {
		t.Errorf("no XML declaration: %.60q", data)
	}
	checkShape(t, data)
	var r xSuites
	if err := xml.Unmarshal(data, &r); err != nil {
		t.Fatalf("parse %s: %v\n%s", path, err, data)
	}
	var tests, failures, errs, skipped int
	var secs float64
	for _, s := range r.Suites {
		var f, e, sk int
		for _, c := range s.Cases {
			if c.Name == "" || c.Classname == "" {
				t.Errorf("suite %q: a case without name or classname: %+v", s.Name, c)
			}
			if n := btoi(c.Failure != nil) + btoi(c.Error != nil) + btoi(c.Skipped != nil); n > 1 {
				t.Errorf("case %q: %d outcomes, want at most one", c.Name, n)
			}
			f += btoi(c.Failure != nil)
			e += btoi(c.Error != nil)
			sk += btoi(c.Skipped != nil)
			seconds(t, c.Time)
		}
		for attr, want := range map[string]int{s.Tests: len(s.Cases), s.Failures: f, s.Errors: e, s.Skipped: sk} {
			if attr != strconv.Itoa(want) {
				t.Errorf("suite %q: counts tests=%s failures=%s errors=%s skipped=%s, cases say %d %d %d %d", s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), f, e, sk)
				break
			}
		}
		if s.Timestamp != "" {
			if _, err := time.Parse("2006-01-02T15:04:05", s.Timestamp); err != nil {
				t.Errorf("suite %q: timestamp %q is not the XSD's: %v", s.Name, s.Timestamp, err)
			}
		}
		tests, failures, errs, skipped = tests+len(s.Cases), failures+f, errs+e, skipped+sk
		secs += seconds(t, s.Time)
	}
	if r.Tests != strconv.Itoa(tests) || r.Failures != strconv.Itoa(failures) || r.Errors != strconv.Itoa(errs) {
		t.Errorf("testsuites counts %s/%s/%s, the suites add up to %d/%d/%d", r.Tests, r.Failures, r.Errors, tests, failures, errs)
	}
	_ = skipped // <testsuites> has no skipped count in the schema
	if got := seconds(t, r.Time); got < secs-0.002 || got > secs+0.002 {
		t.Errorf("testsuites time %v, the suites add up to %v", got, secs)
	}
	return r
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func seconds(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		t.Errorf("time %q: not seconds (%v)", s, err)
	}
	return v
}

// checkShape walks the XML as the common JUnit XSD (junit-10.xsd of
// Jenkins' xunit plugin; GitLab and the GitHub reporters read the same
// shape) allows it:
// testsuites > testsuite > (properties > property)?, testcase*,
// system-out?, system-err?; testcase > (skipped | error | failure)?,
// system-out?, system-err?; and the attributes each element requires.
func checkShape(t *testing.T, data []byte) {
	t.Helper()
	children := map[string][]string{
		"":           {"testsuites"},
		"testsuites": {"testsuite"},
		"testsuite":  {"properties", "testcase", "system-out", "system-err"},
		"properties": {"property"},
		"testcase":   {"skipped", "error", "failure", "system-out", "system-err"},
	}
	// The attributes junit-10.xsd (Jenkins' xunit plugin) allows; a
	// strict reader refuses others (it has no skipped on <testsuites>).
	allowed := map[string][]string{
		"testsuites": {"name", "time", "tests", "failures", "disabled", "errors"},
		"testsuite": {"name", "tests", "failures", "errors", "time", "disabled", "skipped", "skips", "timestamp", "hostname",
			"id", "package", "assertions", "file", "skip", "log", "url"},
		"testcase": {"name", "assertions", "time", "timestamp", "classname", "status", "class", "file", "line", "log", "group", "url"},
		"property": {"name", "value"},
		"failure":  {"type", "message"},
		"error":    {"type", "message"},
		"skipped":  {"type", "message"},
	}
	required := map[string][]string{
		"testsuite": {"name", "tests", "failures", "errors", "time"},
		"testcase":  {"name", "classname", "time"},
		"property":  {"name", "value"},
		"failure":   {"message"},
		"error":     {"message"},
	}
	type frame struct {
		name string
		last int // index in children[name] of the last child seen: order is checked
	}
	stack := []frame{{"", -1}}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			top := &stack[len(stack)-1]
			name := tok.Name.Local
			i := slices.Index(children[top.name], name)
			if i < 0 {
				t.Errorf("<%s> inside <%s>: the JUnit schema has no such child", name, top.name)
			} else if i < top.last {
				t.Errorf("<%s> after a later element inside <%s>: out of the schema's order", name, top.name)
			}
			if top.name == "testcase" && i >= 0 && i <= 2 && top.last >= 0 && top.last <= 2 {
				t.Errorf("<testcase> with two outcomes (<%s> after <%s>)", name, children["testcase"][top.last])
			}
			top.last = max(top.last, i)
			for _, a := range tok.Attr {
				if list, ok := allowed[name]; ok && !slices.Contains(list, a.Name.Local) {
					t.Errorf("<%s %s=…>: the JUnit schema has no such attribute", name, a.Name.Local)
				}
			}
			for _, a := range required[name] {
				if !slices.ContainsFunc(tok.Attr, func(x xml.Attr) bool { return x.Name.Local == a }) {
					t.Errorf("<%s> without its %s attribute", name, a)
				}
			}
			stack = append(stack, frame{name, -1})
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
}

func caseNamed(t *testing.T, s xSuite, name string) xCase {
	t.Helper()
	for _, c := range s.Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("suite %q has no case %q", s.Name, name)
	return xCase{}
}

// A run with a failing and passing thresholds: the failing one is a
// <failure> naming its measured value and its limit, the passing ones
// pass with theirs in system-out, and the counts match.
func TestJUnitRunThresholds(t *testing.T) {
	sum := sampleSummary()
	sum.Profile, sum.Target, sum.DurationS = "smoke", "http://127.0.0.1:1/mcp", 12.5
	sum.Started = time.Date(2026, 11, 26, 0, 40, 0, 0, time.FixedZone("CET", 3600))
	var ths []Threshold
	exprs := []string{"tools/call:p99<200ms", "p99<=200", "error_rate<1%", "lost==0", "nosuchop:p99<1ms"}
	for _, e := range exprs {
		th, err := ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		ths = append(ths, th)
	}
	sum.Thresholds = CheckThresholds(sum, ths, nil)
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := WriteJUnit(path, JUnitRun("run", sum, nil)); err != nil {
		t.Fatal(err)
	}
	r := readJUnit(t, path)
	if len(r.Suites) != 1 {
		t.Fatalf("%d suites, want 1", len(r.Suites))
	}
	s := r.Suites[0]
	if s.Name != "mcpbench run smoke" || s.Tests != "6" || s.Failures != "3" || s.Errors != "0" {
		t.Errorf("suite %q tests=%s failures=%s errors=%s, want mcpbench run smoke, 6 (5 thresholds and the run), 3, 0", s.Name, s.Tests, s.Failures, s.Errors)
	}
	if s.Time != "12.500" || s.Timestamp != "2026-11-25T23:40:00" {
		t.Errorf("suite time %s timestamp %s, want the window 12.500 s, started 2026-11-25T23:40:00 (UTC)", s.Time, s.Timestamp)
	}
	want := []struct {
		name, classname, message string // message: the failure's; "" passes, its text in system-out
		out                      string
	}{
		{"tools/call:p99<200ms", "tools/call", "tools/call:p99 = 260.0 ms, limit < 200.0 ms", ""},
		{"p99<=200", "total", "", "p99 = 200.0 ms, limit <= 200.0 ms"},
		{"error_rate<1%", "total", "", "error_rate = 0.59%, limit < 1.00%"},
		{"lost==0", "total", "lost = 2, limit == 0", ""},
		{"nosuchop:p99<1ms", "nosuchop", "nosuchop:p99: no data (nothing it selects was measured), limit < 1.000 ms", ""},
	}
	for _, w := range want {
		c := caseNamed(t, s, w.name)
		if c.Classname != w.classname {
			t.Errorf("%s: classname %q, want %q", w.name, c.Classname, w.classname)
		}
		switch {
		case w.message == "" && (c.Failure != nil || c.Error != nil || c.Skipped != nil):
			t.Errorf("%s: failed (%+v), want a pass", w.name, c.Failure)
		case w.message == "" && c.SystemOut != w.out:
			t.Errorf("%s: system-out %q, want %q", w.name, c.SystemOut, w.out)
		case w.message != "" && c.Failure == nil:
			t.Errorf("%s: passed, want a failure %q", w.name, w.message)
		case w.message != "" && (c.Failure.Message != w.message || c.Failure.Type != "threshold" || !strings.Contains(c.Failure.Text, w.name)):
			t.Errorf("%s: failure %+v, want message %q, type threshold, the expression in its text", w.name, *c.Failure, w.message)
		}
	}
	run := caseNamed(t, s, "run completed")
	if run.Classname != "run" || run.Failure != nil || run.Error != nil || run.Time != "12.500" {
		t.Errorf("run completed: %+v, want a pass carrying the window's 12.500 s", run)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if props["profile"] != "smoke" || props["target"] != sum.Target {
		t.Errorf("properties %v, want the profile and the target", props)
	}
}

// The run's own case: passes with nothing to judge (one case, not an
// empty suite), an error when interrupted or never started, a failure
// when no operation completed.
func TestJUnitRunCase(t *testing.T) {
	ok := &results.Summary{Profile: "smoke", DurationS: 5, All: results.OpSummary{Count: 100}}
	interrupted := &results.Summary{Profile: "smoke", DurationS: 2, Interrupted: true, StopReason: "interrupted by signal", All: results.OpSummary{Count: 40}}
	none := &results.Summary{Profile: "smoke", DurationS: 5}
	allFailed := &results.Summary{Profile: "smoke", DurationS: 5, All: results.OpSummary{Count: 7, Errors: 7}}
	tests := []struct {
		name    string
		suite   JUnitSuite
		outcome string // "", "failure", "error"
		message string
	}{
		{"no thresholds", JUnitRun("run", ok, nil), "", ""},
		{"interrupted", JUnitRun("run", interrupted, errors.New("interrupted")), "error", "interrupted: interrupted by signal"},
		{"never started", JUnitRun("run", nil, errors.New("initialize: connection refused")), "error", "the run could not start: initialize: connection refused"},
		{"no ops", JUnitRun("run", none, nil), "failure", "no operation completed"},
		{"all failed", JUnitRun("run", allFailed, nil), "failure", "every operation failed (7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j.xml")
			if err := WriteJUnit(path, tt.suite); err != nil {
				t.Fatal(err)
			}
			r := readJUnit(t, path)
			if len(r.Suites) != 1 || len(r.Suites[0].Cases) != 1 {
				t.Fatalf("%+v: want one suite of one case", r)
			}
			c := r.Suites[0].Cases[0]
			var got *xOutcome
			outcome := ""
			switch {
			case c.Failure != nil:
				got, outcome = c.Failure, "failure"
			case c.Error != nil:
				got, outcome = c.Error, "error"
			}
			if outcome != tt.outcome || (got != nil && got.Message != tt.message) {
				t.Errorf("case %q: %s %+v, want %s %q", c.Name, outcome, got, tt.outcome, tt.message)
			}
		})
	}
}

// A sweep: one suite, one case per step; a step failing the SLO fails
// with its reasons, an interrupted one is skipped, and the time is the
// steps' measured windows.
func TestJUnitSweep(t *testing.T) {
	sw := &results.Sweep{Profile: "capacity-sweep", By: "rate", StepS: 10, Repeat: 2, Started: time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC),
		SLO: results.SLO{P99MS: 50, ErrorRate: 0.01, ReplayClean: true},
		Results: []results.SweepStep{
			{N: 1, By: "rate", Value: 500, Achieved: 500, Pass: true, Latency: results.Latency{P99: 3}},
			{N: 2, By: "rate", Value: 1000, Achieved: 990, Latency: results.Latency{P99: 80}, Reasons: []string{"p99 80.00 ms > 50.00 ms"}},
			{N: 3, By: "rate", Value: 1500, Interrupted: true},
		},
		Verdict: results.SweepVerdict{MaxSustainable: 500, MaxLoad: 500}}
	path := filepath.Join(t.TempDir(), "sweep.xml")
	if err := WriteJUnit(path, JUnitSweep(sw)); err != nil {
		t.Fatal(err)
	}
	r := readJUnit(t, path)
	s := r.Suites[0]
	if s.Tests != "3" || s.Failures != "1" || s.Skipped != "1" || s.Time != "60.000" || s.Timestamp != "2026-11-26T01:00:00" {
		t.Errorf("suite tests=%s failures=%s skipped=%s time=%s timestamp=%s, want 3 1 1 60.000 (3 steps × 2 repeats × 10 s) 2026-11-26T01:00:00", s.Tests, s.Failures, s.Skipped, s.Time, s.Timestamp)
	}
	if c := caseNamed(t, s, "SLO at 500 ops/s"); c.Classname != "step-01" || c.Failure != nil || c.Skipped != nil {
		t.Errorf("step 1: %+v, want step-01 passed", c)
	}
	if c := caseNamed(t, s, "SLO at 1000 ops/s"); c.Failure == nil || c.Failure.Message != "p99 80.00 ms > 50.00 ms" || !strings.Contains(c.Failure.Text, "p99 <= 50.00 ms") {
		t.Errorf("step 2: %+v, want a failure with its reason and the SLO", c)
	}
	if c := caseNamed(t, s, "SLO at 1500 ops/s"); c.Skipped == nil || c.Failure != nil {
		t.Errorf("step 3 (interrupted): %+v, want skipped", c)
	}
}

// A soak: the run's suite and one of its verdicts.
func TestJUnitSoak(t *testing.T) {
	sum := &results.Summary{Profile: "soak-churn", DurationS: 600, All: results.OpSummary{Count: 1000}}
	sk := &results.Soak{DurationS: 600, Verdicts: []results.SoakVerdict{
		{Name: "latency drift", Checked: true, Pass: true, Value: 0.5, Unit: "ms/h"},
		{Name: "target leak", Checked: false, Detail: "no --target-pid"},
		{Name: "session hygiene", Checked: true, Pass: false, Value: 3, Detail: "3 deleted sessions answered 200"},
	}}
	path := filepath.Join(t.TempDir(), "soak.xml")
	if err := WriteJUnit(path, JUnitRun("soak", sum, nil), JUnitSoak(sk, sum.Started)); err != nil {
		t.Fatal(err)
	}
	r := readJUnit(t, path)
	if len(r.Suites) != 2 || r.Tests != "4" || r.Failures != "1" || r.Suites[1].Skipped != "1" || r.Time != "1200.000" {
		t.Fatalf("%d suites tests=%s failures=%s skipped=%s time=%s, want 2 4 1 1 1200.000", len(r.Suites), r.Tests, r.Failures, r.Suites[1].Skipped, r.Time)
	}
	if c := caseNamed(t, r.Suites[1], "session hygiene"); c.Failure == nil || c.Failure.Message != "session hygiene = 3: 3 deleted sessions answered 200" {
		t.Errorf("session hygiene: %+v, want a failure with its count and detail", c)
	}
}

// WriteJUnit replaces a file whole and leaves no temporary file; a
// missing directory is an error naming --junit; the sink writes the file
// when the measured part ends.
func TestJUnitFileWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.xml")
	if err := os.WriteFile(path, []byte(strings.Repeat("old ", 10000)), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := NewJUnitFile(path, "run")
	var _ results.Sink = sink
	var _ results.MeasuredSink = sink
	sum := &results.Summary{Profile: "p", DurationS: 1, All: results.OpSummary{Count: 1}}
	th, _ := ParseThreshold("count>=2")
	sum.Thresholds = CheckThresholds(sum, []Threshold{th}, nil)
	sink.Start(&results.RunInfo{})
	sink.Measured(sum)
	if err := sink.Err(); err != nil {
		t.Fatal(err)
	}
	r := readJUnit(t, path)
	if c := caseNamed(t, r.Suites[0], "count>=2"); c.Failure == nil || c.Failure.Message != "count = 1, limit >= 2" {
		t.Errorf("count>=2: %+v, want a failure 'count = 1, limit >= 2'", c)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want j.xml alone (no temporary file left)", names)
	}
	err := WriteJUnit(filepath.Join(dir, "no", "such", "j.xml"), JUnitRun("run", sum, nil))
	if err == nil || !strings.Contains(err.Error(), "verdict.WriteJUnit's path") {
		t.Errorf("missing directory: %v, want an error naming its path setting", err)
	}
}

// compare --fail-if: a case per limit and op, the crossed one failed
// with its change, a limit with nothing to compare an error.
func TestJUnitLimits(t *testing.T) {
	a, b := sampleSummary(), sampleSummary()
	b.Ops[1].Response.P99 = 400 // tools/call:slow: 260 → 400 ms
	var exprs []string
	var groups [][]LimitResult
	for _, e := range []string{"tools/call:p99>+10%", "rate<-5%"} {
		r, err := ParseRegression(e)
		if err != nil {
			t.Fatal(err)
		}
		exprs, groups = append(exprs, e), append(groups, r.Evaluate(a, b, nil, nil))
	}
	exprs, groups = append(exprs, "get:lost>+0"), append(groups, nil)
	path := filepath.Join(t.TempDir(), "cmp.xml")
	if err := WriteJUnit(path, JUnitLimits(exprs, groups, time.Time{})); err != nil {
		t.Fatal(err)
	}
	r := readJUnit(t, path)
	s := r.Suites[0]
	// tools/call:p99 checks echo and slow; rate checks the total; get:lost nothing.
	if s.Tests != "4" || s.Failures != "1" || s.Errors != "1" {
		t.Fatalf("tests %s failures %s errors %s, want 4 1 1: %+v", s.Tests, s.Failures, s.Errors, s.Cases)
	}
	for _, c := range s.Cases {
		switch {
		case c.Classname == "tools/call:slow":
			if c.Name != "tools/call:p99>+10%" || c.Failure == nil || !strings.Contains(c.Failure.Message, "260.0 → 400.0") || !strings.Contains(c.Failure.Message, "crosses") {
				t.Errorf("slow: %+v %+v, want a failure with the change", c, c.Failure)
			}
		case c.Name == "get:lost>+0":
			if c.Error == nil {
				t.Errorf("get:lost>+0 with nothing to compare: %+v, want an error", c)
			}
		default:
			if c.Failure != nil || c.Error != nil || c.SystemOut == "" {
				t.Errorf("%s %s: %+v, want a pass with its numbers", c.Classname, c.Name, c)
			}
		}
	}
}

// A segment's thresholds are not its to judge (its exit code ignores
// them): its file has the run's case alone, and says why.
func TestJUnitSegment(t *testing.T) {
	sum := sampleSummary()
	sum.Segment = &results.SegmentInfo{Segment: "0:1/2"}
	th, _ := ParseThreshold("lost==0")
	sum.Thresholds = CheckThresholds(sum, []Threshold{th}, nil) // fails on this segment's data
	path := filepath.Join(t.TempDir(), "seg.xml")
	if err := WriteJUnit(path, JUnitRun("run", sum, nil)); err != nil {
		t.Fatal(err)
	}
	r := readJUnit(t, path)
	s := r.Suites[0]
	if s.Tests != "1" || s.Failures != "0" || !strings.Contains(s.Cases[0].SystemOut, "judged on the merged run") {
		t.Errorf("tests %s failures %s, case %+v: want the run's case alone, passing, naming the merge", s.Tests, s.Failures, s.Cases)
	}
}
