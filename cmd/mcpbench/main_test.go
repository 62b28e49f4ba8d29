package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/launch"
)

// cli runs mcpbench in-process with ctx and returns stdout, stderr and the
// exit code main would use (what main would print and return).
func cli(ctx context.Context, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := cliTo(ctx, &out, &errb, args...)
	return out.String(), errb.String(), code
}

// cliTo runs mcpbench in-process with ctx, writing its output to out and
// errw (the error main would print goes to errw), and returns the exit
// code main would use.
func cliTo(ctx context.Context, out, errw io.Writer, args ...string) int {
	root := newRootCmd()
	root.SetOut(out)
	root.SetErr(errw)
	root.SetArgs(args)
	err := root.ExecuteContext(withArgv(ctx, append([]string{"mcpbench"}, args...)))
	if err != nil {
		io.WriteString(errw, cliText(err))
	}
	return int(launch.CodeOf(err))
}

// runPar is cli with the test's context, in the working directory as it
// is: for tests that name their results directory (--out) or write none
// (--no-results, or a command that writes nothing), which can then run in
// parallel (run's t.Chdir cannot).
func runPar(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return cli(t.Context(), args...)
}

// run is cli in a fresh temporary directory (where the default results
// directory lands), with a background context.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	t.Chdir(t.TempDir())
	return cli(context.Background(), args...)
}

func TestRunEmbeddedWritesResults(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	out, errs, code := runPar(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir, "-H", "Authorization: Bearer s3cret")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"embedded reference server", "p99.9", "tools/call:echo", "Errors: 0"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	var sum struct {
		All struct{ Count, Errors int64 }
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(data, &sum)
	if sum.All.Count == 0 || sum.All.Errors != 0 {
		t.Fatalf("summary.json all = %+v", sum.All)
	}
	runJSON, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if bytes.Contains(runJSON, []byte("s3cret")) || !bytes.Contains(runJSON, []byte("Authorization: [redacted]")) {
		t.Fatalf("run.json must redact the header value:\n%s", runJSON)
	}
}

func TestRunExitCodes(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("vus: -1\nduration: soon\nops: [{method: nope}]\n"), 0o644)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--profile", bad}, exitUsage, "profile " + bad + ": 3 problems"},
		{[]string{"run", "--profile", "no-such-profile"}, exitUsage, "built-ins: "},
		{[]string{"run", "--url", "ftp://x"}, exitUsage, "scheme"},
		{[]string{"run", "--args", "{}"}, exitUsage, "--args needs --tool"},
		{[]string{"run", "--url", closed, "-q", "--vus", "2"}, exitFailed, "transport 2"},
		{[]string{"serve", "--mode", "bogus"}, exitUsage, "mode"},
		{[]string{"run", "--profile", "ramp", "--duration", "1s"}, exitUsage, "--duration: profile ramp's stages set the measured window (20s in all)"},
		{[]string{"run", "-s", "1s:5", "--duration", "1s"}, exitUsage, "--duration: the --stage stages set the measured window (1s in all)"},
		{[]string{"run", "--stage", "1s"}, exitUsage, `--stage: stage "1s": want DURATION:TARGET`},
		{[]string{"run", "--stage", "1s:-2"}, exitUsage, `target "-2": want a number ≥ 0`},
	}
	for _, tt := range tests {
		_, errs, code := run(t, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errs, tt.code, tt.want)
		}
	}
}

func TestRunToolFlag(t *testing.T) {
	out, errs, code := run(t, "run", "--tool", "slow", "--args", `{"ms":5}`, "--rate", "50", "--duration", "1s", "--warmup", "0s", "-q", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s struct {
		Model string
		Ops   []struct {
			Name    string
			Count   int64
			Service struct{ P50 float64 } `json:"service_time_ms"`
		}
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if s.Model != "open" || len(s.Ops) != 1 || s.Ops[0].Name != "tools/call:slow" || s.Ops[0].Count != 50 || s.Ops[0].Service.P50 < 5 {
		t.Fatalf("summary %+v", s)
	}
}

// TestRunStageFlag: --stage replaces the profile's window with a ramp. From
// 1/s to 100/s over 1 s, then 100/s for 0.5 s, the ramp makes 50.5 + 50 =
// 100.5 arrivals due; the first is due at 0, so 101 ops start, none dropped.
func TestRunStageFlag(t *testing.T) {
	t.Parallel()
	out, errs, code := runPar(t, "run", "--rate", "1", "-s", "1s:100", "-s", "500ms:100", "--warmup", "0s", "-q", "--no-results", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s struct {
		All     struct{ Count, Errors int64 }
		Dropped int64
		Stages  string
		Window  float64 `json:"duration_s"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	// The stages schedule 101 ops; each one either ran or, on a machine
	// too loaded to start it in time, was counted dropped.
	if s.All.Count+s.Dropped != 101 || s.All.Count == 0 || s.All.Errors != 0 || s.Stages != "1 → 100/s over 1s → 100/s over 500ms" || math.Abs(s.Window-1.5) > 0.01 {
		t.Fatalf("summary %+v; want 101 ops scheduled (run or dropped), 0 errors over the 1.5 s of the two stages", s)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := run(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "mcpbench ") {
		t.Fatalf("%d %q", code, out)
	}
}

func TestThresholdExitCodes(t *testing.T) {
	_, errs, code := run(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--threshold", "error_rate<1%", "--threshold", "p50<0.001ms")
	if code != exitThresholds || !strings.Contains(errs, "p50<0.001ms") || strings.Contains(errs, "error_rate<1%,") {
		t.Fatalf("crossed: exit %d, stderr %q; want 99 naming p50<0.001ms", code, errs)
	}
	_, errs, code = run(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--threshold", "error_rate<1%", "--threshold", "lost==0")
	if code != exitOK {
		t.Fatalf("passing: exit %d: %s", code, errs)
	}
}

func TestCompareFailIfExit(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, p99 float64) string {
		s := fmt.Sprintf(`{"profile":"x","ops":[{"name":"tools/call:echo","count":100,"rate":10,"response_time_ms":{"p99":%g}}],"all":{"name":"all","count":100,"rate":10,"response_time_ms":{"p99":%g}}}`, p99, p99)
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(s), 0o644)
		return path
	}
	a, b := write("a.json", 10), write("b.json", 13)
	out, errs, code := run(t, "compare", a, b, "--fail-if", "p99>+20%")
	if code != exitThresholds || !strings.Contains(errs, "REGRESSION all: p99 10.00 → 13.00 (+30.0%) crosses p99>+20%") || !strings.Contains(out, "+30.0%") ||
		!strings.Contains(out, "FAIL  all: p99 10.00 → 13.00 (+30.0%) crosses p99>+20%") {
		t.Fatalf("planted regression: exit %d\n%s\n%s", code, out, errs)
	}
	// A passing limit is printed too, in the same number format.
	if out, errs, code := run(t, "compare", a, b, "--fail-if", "p99>+50%"); code != exitOK || !strings.Contains(out, "PASS  all: p99 10.00 → 13.00 (+30.0%) within p99>+50%") {
		t.Fatalf("within the limit: exit %d %s\n%s", code, errs, out)
	}
	if _, _, code := run(t, "compare", a, b, "--fail-if", "p99>50%"); code != exitUsage {
		t.Fatalf("bad limit: exit %d", code)
	}
}

func TestReportFromFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	out, errs, code := runPar(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errs)
	}
	rep, errs, code := runPar(t, "report", dir)
	if code != exitOK || !strings.HasPrefix(rep, out) || !strings.Contains(rep, "Detailed percentile spectrum: tools/call:echo") {
		t.Fatalf("report (exit %d, %s) does not start with the run's output:\n--- run\n%s\n--- report\n%s", code, errs, out, rep)
	}
	md, _, _ := runPar(t, "report", dir, "--format", "markdown")
	if !strings.Contains(md, "| `tools/call:echo` |") {
		t.Fatalf("markdown:\n%s", md)
	}
	if _, _, code := runPar(t, "report", t.TempDir()); code != exitFailed {
		t.Fatalf("empty dir: exit %d", code)
	}
}

func TestPlotCommand(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	if _, errs, code := runPar(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir); code != exitOK {
		t.Fatalf("run: %d %s", code, errs)
	}
	out, errs, code := runPar(t, "plot", dir, "--format", "svg")
	if code != exitOK || !strings.Contains(out, "latency.svg") || !strings.Contains(out, "report.html") {
		t.Fatalf("plot: exit %d\n%s\n%s", code, out, errs)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !bytes.Contains(html, []byte("<svg")) {
		t.Fatalf("report.html: %v", err)
	}
	if _, _, code := runPar(t, "plot", filepath.Join(dir, "nope")); code == exitOK {
		t.Fatal("plot of a missing directory succeeded")
	}
}

func TestSweepCommand(t *testing.T) {
	testenv.Long(t)
	// Not parallel: step 1 must pass (50 calls/s achieved), which a CPU
	// shared with the parallel tests does not always allow.
	dir := filepath.Join(t.TempDir(), "sw")
	out, errs, code := runPar(t, "sweep", "--tool", "echo", "--args", `{"text":"hi"}`, "--from", "50", "--to", "100", "--steps", "2", "--step", "1s", "--step-warmup", "0s", "--slo-p99", "5s", "-q", "--out", dir) // a lenient SLO: the test is about the mechanics, not this machine's latency
	if code != exitOK || !strings.Contains(out, "Maximum sustainable rate under the SLO: ") || !strings.Contains(errs, "mcpbench plot "+dir) {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errs)
	}
	var sw struct {
		Results []struct {
			Value  float64
			Pass   bool
			Errors int64
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil || json.Unmarshal(data, &sw) != nil || len(sw.Results) != 2 || sw.Results[0].Value != 50 || sw.Results[1].Value != 100 || !sw.Results[0].Pass || sw.Results[1].Errors != 0 {
		t.Fatalf("sweep.json (%v): %s", err, data)
	}
	if _, err := os.Stat(filepath.Join(dir, "step-02", "summary.json")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runPar(t, "sweep", "--duration", "10s"); code != exitUsage || !strings.Contains(errs, "use --step") {
		t.Fatalf("sweep --duration: exit %d %s", code, errs)
	}
}

func TestSoakCommand(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "soak")
	out, errs, code := runPar(t, "soak", "--profile", "soak-churn", "--duration", "3s", "--warmup", "0s", "--churn-rate", "5", "-q", "--out", dir)
	if code != exitOK && code != exitThresholds {
		t.Fatalf("soak: exit %d\n%s\n%s", code, out, errs)
	}
	var sk struct {
		Verdicts []struct{ Name string }
		Pass     bool
	}
	data, err := os.ReadFile(filepath.Join(dir, "soak.json"))
	if err != nil || json.Unmarshal(data, &sk) != nil {
		t.Fatalf("soak.json (%v): %s", err, data)
	}
	var names []string
	for _, v := range sk.Verdicts {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, ", "); got != "latency drift, correctness drift, target leak, session hygiene" {
		t.Fatalf("verdicts %q", got)
	}
	if sk.Pass != (code == exitOK) {
		t.Fatalf("soak.json pass %v but exit %d", sk.Pass, code)
	}
	for _, want := range []string{"latency drift", "session hygiene"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}
