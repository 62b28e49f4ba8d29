package main

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/refserver"
)

// What a CI system reads of --junit, parsed with structs of this test's
// own (not verdict's).
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string  `xml:"name,attr"`
		Tests    int     `xml:"tests,attr"`
		Failures int     `xml:"failures,attr"`
		Errors   int     `xml:"errors,attr"`
		Skipped  int     `xml:"skipped,attr"`
		Time     float64 `xml:"time,attr"`
		Cases    []struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnitFile(t *testing.T, path string) junitDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("--junit file: %v", err)
	}
	var d junitDoc
	if err := xml.Unmarshal(data, &d); err != nil {
		t.Fatalf("--junit file does not parse: %v\n%s", err, data)
	}
	return d
}

// run --junit with one passing and one failing threshold: exit 99, and
// the file has the run's case and both thresholds, the failing one a
// <failure> with its measured value and limit.
func TestRunJUnitThresholds(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "junit.xml")
	_, errs, code := runPar(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--no-results", "--junit", path,
		"--threshold", "error_rate<1%", "--threshold", "tools/call:echo:p50<0.001ms")
	if code != exitThresholds {
		t.Fatalf("exit %d, want 99: %s", code, errs)
	}
	d := readJUnitFile(t, path)
	if len(d.Suites) != 1 || d.Tests != 3 || d.Failures != 1 || d.Errors != 0 {
		t.Fatalf("%d suites, tests %d failures %d errors %d; want 1 suite, 3 tests (the run and 2 thresholds), 1 failure", len(d.Suites), d.Tests, d.Failures, d.Errors)
	}
	s := d.Suites[0]
	if s.Name != "mcpbench run smoke" || s.Time < 0.9 || s.Time > 2 {
		t.Errorf("suite %q time %v s; want mcpbench run smoke, the 1 s window", s.Name, s.Time)
	}
	seen := 0
	for _, c := range s.Cases {
		switch c.Name {
		case "error_rate<1%", "run completed":
			if c.Failure != nil || c.Error != nil {
				t.Errorf("%s: failed (%+v %+v), want a pass", c.Name, c.Failure, c.Error)
			}
			seen++
		case "tools/call:echo:p50<0.001ms":
			if c.Classname != "tools/call:echo" || c.Failure == nil || !strings.HasPrefix(c.Failure.Message, "tools/call:echo:p50 = ") || !strings.HasSuffix(c.Failure.Message, " ms, limit < 0.001 ms") {
				t.Errorf("%s: classname %q failure %+v; want tools/call:echo, 'tools/call:echo:p50 = <measured> ms, limit < 0.001 ms'", c.Name, c.Classname, c.Failure)
			}
			seen++
		}
	}
	if seen != 3 {
		t.Errorf("cases %+v: want the run's and both thresholds'", s.Cases)
	}
}

// A --junit whose directory does not exist is refused before the run,
// naming the flag.
func TestJUnitBadPathExit2(t *testing.T) {
	t.Parallel()
	url, requests := countingServer(t)
	missing := filepath.Join(t.TempDir(), "no", "junit.xml")
	_, errs, code := runPar(t, "run", "--url", url, "--no-results", "-q", "--junit", missing)
	if code != exitUsage || !strings.Contains(errs, "--junit "+missing) || !strings.Contains(errs, "does not exist") {
		t.Fatalf("exit %d, stderr %q; want 2 naming --junit", code, errs)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the server got %d requests before the refusal", n)
	}
	if _, errs, code := runPar(t, "run", "--url", url, "--no-results", "-q", "--junit", t.TempDir()); code != exitUsage || !strings.Contains(errs, "is a directory") {
		t.Fatalf("a directory: exit %d, stderr %q; want 2", code, errs)
	}
}

// A run interrupted (Ctrl-C: its context cancelled once it measures)
// still writes the file: the run's case an error of type interrupted,
// the thresholds judged on what ran.
func TestRunJUnitInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, out := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "res")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { // cancel once the first interval is written, within 20 s
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if b, _ := os.ReadFile(filepath.Join(out, "intervals.csv")); strings.Count(string(b), "\n") >= 2 {
				break
			}
			time.Sleep(20 * time.Millisecond) // polling with a deadline: the run writes the file
		}
		cancel()
	}()
	_, errs, code := cli(ctx, "run", "--duration", "1m", "--warmup", "0s", "-q", "--out", out, "--junit", path, "--threshold", "error_rate<1%")
	if code != exitInterrupted {
		t.Fatalf("exit %d, want 130: %s", code, errs)
	}
	d := readJUnitFile(t, path)
	if len(d.Suites) != 1 || d.Tests != 2 || d.Errors != 1 {
		t.Fatalf("tests %d errors %d, want 2 (the run, the threshold), 1 error", d.Tests, d.Errors)
	}
	for _, c := range d.Suites[0].Cases {
		if c.Name == "run completed" && (c.Error == nil || c.Error.Type != "interrupted") {
			t.Errorf("run completed: %+v, want an error of type interrupted", c.Error)
		}
	}
}

// A second Ctrl-C stops at once (DELETEs hang here), and the file is
// there: it was written when the measured part ended.
func TestJUnitSurvivesSecondInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcpbench as a process")
	}
	t.Parallel()
	h, err := refserver.NewHandler(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			<-r.Context().Done() // a graceful end would wait for its timeout
			return
		}
		h.ServeHTTP(w, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	dir := t.TempDir()
	out, path := filepath.Join(dir, "res"), filepath.Join(dir, "junit.xml")
	cmd := exec.Command(os.Args[0], "run", "--url", "http://"+l.Addr().String()+"/mcp", "--vus", "4", "--duration", "1m", "--out", out, "-q",
		"--junit", path, "--threshold", "p99<10s")
	cmd.Env = append(os.Environ(), "MCPBENCH_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	poll := func(what string, ok func() bool) {
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%s: not within 20 s", what)
			}
			time.Sleep(20 * time.Millisecond) // polling with a deadline: another process
		}
	}
	poll("the run measuring", func() bool {
		b, _ := os.ReadFile(filepath.Join(out, "intervals.csv"))
		return strings.Count(string(b), "\n") >= 2
	})
	cmd.Process.Signal(syscall.SIGINT)
	poll("the measured part's end (summary.json)", func() bool { _, err := os.Stat(filepath.Join(out, "summary.json")); return err == nil })
	cmd.Process.Signal(syscall.SIGINT) // the sessions' DELETEs hang: only this ends the process
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Fatalf("exit: %v, want 130", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the second Ctrl-C did not stop the process")
	}
	d := readJUnitFile(t, path)
	if d.Tests != 2 || d.Errors != 1 || d.Failures != 0 {
		t.Fatalf("tests %d errors %d failures %d; want the run's case (interrupted) and the passing threshold", d.Tests, d.Errors, d.Failures)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries beside the file, want junit.xml and res alone (no temporary file)", len(entries))
	}
}

// sweep --junit: one suite, one case per step; soak --junit: the run's
// suite and one of its verdicts; merge --junit: the merged run's
// thresholds.
func TestJUnitSweepSoakMerge(t *testing.T) {
	testenv.Long(t)
	t.Parallel()
	dir := t.TempDir()
	t.Run("sweep", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(dir, "sweep.xml")
		_, errs, code := runPar(t, "sweep", "--tool", "echo", "--args", `{"text":"hi"}`, "--from", "20", "--to", "40", "--steps", "2", "--step", "1s", "--step-warmup", "0s",
			"--slo-p99", "0.001ms", "--keep-going", "-q", "--out", filepath.Join(dir, "sw"), "--junit", path) // an SLO no step meets
		if code != exitOK {
			t.Fatalf("sweep: exit %d: %s", code, errs)
		}
		d := readJUnitFile(t, path)
		if len(d.Suites) != 1 || d.Tests != 2 || d.Failures != 2 {
			t.Fatalf("%+v: want one suite, 2 steps both failing the SLO", d)
		}
		s := d.Suites[0]
		if s.Cases[0].Classname != "step-01" || s.Cases[0].Name != "SLO at 20 ops/s" || !strings.Contains(s.Cases[0].Failure.Message, "> 0.001 ms") {
			t.Errorf("step 1: %+v %+v", s.Cases[0], s.Cases[0].Failure)
		}
		if s.Time != 2 {
			t.Errorf("suite time %v, want 2 steps × 1 s", s.Time)
		}
	})
	t.Run("soak", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(dir, "soak.xml")
		_, errs, code := runPar(t, "soak", "--duration", "2s", "--warmup", "0s", "--churn-rate", "5", "-q", "--out", filepath.Join(dir, "soak"), "--junit", path)
		if code != exitOK && code != exitThresholds {
			t.Fatalf("soak: exit %d: %s", code, errs)
		}
		d := readJUnitFile(t, path)
		if len(d.Suites) != 2 || d.Suites[1].Tests != 4 {
			t.Fatalf("%+v: want the run's suite and the 4 soak verdicts", d)
		}
		if failed := d.Failures > 0; failed != (code == exitThresholds) {
			t.Errorf("failures %d but exit %d", d.Failures, code)
		}
	})
	t.Run("merge", func(t *testing.T) {
		t.Parallel()
		seg := filepath.Join(dir, "seg0")
		if _, errs, code := runPar(t, "run", "--rate", "40", "--duration", "1s", "--warmup", "0s", "-q", "--segment", "0/2", "--out", seg); code != exitOK {
			t.Fatalf("segment: exit %d: %s", code, errs)
		}
		path := filepath.Join(dir, "merge.xml")
		_, errs, code := runPar(t, "merge", seg, "--out", filepath.Join(dir, "merged"), "--junit", path, "--threshold", "count>=1", "--threshold", "count>1000000")
		if code != exitThresholds {
			t.Fatalf("merge: exit %d, want 99: %s", code, errs)
		}
		d := readJUnitFile(t, path)
		if d.Tests != 3 || d.Failures != 1 || d.Suites[0].Name != "mcpbench merge smoke" {
			t.Fatalf("%+v: want the merged run's case and 2 thresholds, 1 failing", d)
		}
	})
}

// compare --fail-if --junit: the crossed limit is a failed case with the
// change; the passing one passes.
func TestCompareJUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, p99 float64) string {
		s := fmt.Sprintf(`{"profile":"x","ops":[{"name":"tools/call:echo","count":100,"rate":10,"response_time_ms":{"p99":%g}}],"all":{"name":"all","count":100,"rate":10,"response_time_ms":{"p99":%g}}}`, p99, p99)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := write("a.json", 10), write("b.json", 13)
	path := filepath.Join(dir, "cmp.xml")
	if _, errs, code := runPar(t, "compare", a, b, "--fail-if", "p99>+20%", "--fail-if", "rate<-5%", "--junit", path); code != exitThresholds {
		t.Fatalf("exit %d, want 99: %s", code, errs)
	}
	d := readJUnitFile(t, path)
	if d.Tests != 2 || d.Failures != 1 || d.Suites[0].Name != "mcpbench compare" {
		t.Fatalf("%+v: want 2 cases, 1 failing", d)
	}
	for _, c := range d.Suites[0].Cases {
		if c.Name == "p99>+20%" && (c.Failure == nil || !strings.Contains(c.Failure.Message, "p99 10.00 → 13.00 (+30.0%) crosses p99>+20%")) {
			t.Errorf("p99>+20%%: %+v, want the failure with the change", c.Failure)
		}
		if c.Name == "rate<-5%" && c.Failure != nil {
			t.Errorf("rate<-5%%: failed: %+v", c.Failure)
		}
	}
}
