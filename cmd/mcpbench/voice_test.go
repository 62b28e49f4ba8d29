package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/profiles"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpLine is the line --help prints for f: pflag's usage, with the
// "(default …)" it adds itself.
func helpLine(f *pflag.Flag) string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.AddFlag(f)
	return strings.TrimSpace(fs.FlagUsages())
}

// pflagDefault reports whether pflag adds "(default …)" to f's usage (and
// what it adds).
func pflagDefault(f *pflag.Flag) (string, bool) {
	line := helpLine(f)
	for _, suffix := range []string{fmt.Sprintf(" (default %q)", f.DefValue), fmt.Sprintf(" (default %s)", f.DefValue)} {
		if strings.HasSuffix(line, suffix) && !strings.HasSuffix(f.Usage, suffix) {
			return f.DefValue, true
		}
	}
	return "", false
}

var reDefaultWord = regexp.MustCompile(`\bdefault\b`)

// Every flag's help states its default at most once: never in its usage
// text and again by pflag ("(default 64MiB) … (default 0B)"), and pflag
// never prints a zero value (0, 0s, 0B) as the default of a flag whose
// zero means "not given".
func TestHelpDefaultsOnce(t *testing.T) {
	for path, c := range commands(newRootCmd()) {
		visibleFlags(c, func(f *pflag.Flag) {
			text := reDefaultWord.FindAllString(f.Usage, -1)
			def, printed := pflagDefault(f)
			if printed && len(text) > 0 {
				t.Errorf("%s --%s: the usage names a default and pflag adds (default %s):\n  %s", path, f.Name, def, helpLine(f))
			}
			if len(text) > 1 {
				t.Errorf("%s --%s: the usage names a default %d times:\n  %s", path, f.Name, len(text), helpLine(f))
			}
			switch def {
			case "0", "0s", "0B", "[]", "0.0":
				if printed {
					t.Errorf("%s --%s: pflag prints the zero value as the default:\n  %s", path, f.Name, helpLine(f))
				}
			}
		})
	}
}

var reStatedDefault = regexp.MustCompile(`\(default:? ([^);]+)[);]`)

// statedDefault is the default --help gives for flag name of cmd.
func statedDefault(t *testing.T, cmd *cobra.Command, name string) string {
	t.Helper()
	f := cmd.Flags().Lookup(name)
	if f == nil {
		t.Fatalf("%s has no --%s", cmd.Name(), name)
	}
	m := reStatedDefault.FindStringSubmatch(helpLine(f))
	if m == nil {
		t.Fatalf("%s --%s states no default:\n  %s", cmd.Name(), name, helpLine(f))
	}
	return strings.Trim(m[1], `"`)
}

// The defaults --help states are the ones the library applies.
func TestHelpDefaultsRight(t *testing.T) {
	var p profile.Profile
	p.Defaults()
	var sw profile.SweepSpec
	sw.Defaults()
	slo := sw.SLO.SLO()
	var soakSpec *profile.SoakSpec
	run, sweepCmd, soakCmd := newRunCmd(), newSweepCmd(), newSoakCmd()
	for _, tc := range []struct {
		cmd  *cobra.Command
		flag string
		want time.Duration
	}{
		{run, "max-delay", p.MaxDelay.D()},
		{run, "graceful-stop", p.GracefulStop.D()},
		{sweepCmd, "step", sw.Step.D()},
		{sweepCmd, "step-warmup", sw.Warmup.D()},
		{sweepCmd, "slo-p99", time.Duration(slo.P99MS * float64(time.Millisecond))},
		{soakCmd, "checkpoint", soakSpec.CheckpointEvery()},
	} {
		got, err := time.ParseDuration(statedDefault(t, tc.cmd, tc.flag))
		if err != nil || got != tc.want {
			t.Errorf("%s --%s: help says the default is %s, the library's is %v", tc.cmd.Name(), tc.flag, statedDefault(t, tc.cmd, tc.flag), tc.want)
		}
	}
	if got := statedDefault(t, run, "concurrency"); got != strconv.Itoa(p.Concurrency) {
		t.Errorf("run --concurrency: help says %s, the library's default is %d", got, p.Concurrency)
	}
	if got, _ := strconv.ParseFloat(statedDefault(t, sweepCmd, "slo-errors"), 64); got != 100*slo.ErrorRate {
		t.Errorf("sweep --slo-errors: help says %v %%, the library's default is %v %%", got, 100*slo.ErrorRate)
	}
	if got := statedDefault(t, soakCmd, "profile"); got != "soak-churn" {
		t.Errorf("soak --profile: help says %s, want soak-churn", got)
	}
	// --max-vus: rate × max delay (not --vus), at least --vus, at most the cap.
	open := profile.Profile{Rate: 300, VUs: 10}
	open.Defaults()
	if got := statedDefault(t, run, "max-vus"); !strings.Contains(got, "rate × --max-delay") || !strings.Contains(got, strconv.Itoa(profile.DefaultMaxVUsCap)) || open.MaxVUs != 300 {
		t.Errorf("run --max-vus: help says %q; an open profile at 300/s gets %d", got, open.MaxVUs)
	}
}

// Every command that prints a report has --format; --json, where it was
// a flag, is its deprecated alias.
func TestFormatFlag(t *testing.T) {
	for path, c := range commands(newRootCmd()) {
		if c.Flags().Lookup("json") != nil && c.Flags().Lookup("format") == nil {
			t.Errorf("%s has --json but no --format", path)
		}
		if j := c.Flags().Lookup("json"); j != nil && j.Deprecated == "" {
			t.Errorf("%s --json is not marked deprecated", path)
		}
	}
	for _, name := range []string{"run", "sweep", "soak", "probe", "report", "compare", "merge"} {
		if newRootCmdFlag(name, "format") == nil {
			t.Errorf("%s has no --format", name)
		}
	}
	t.Chdir(t.TempDir())
	ctx := context.Background()
	for _, tc := range []struct {
		args     []string
		code     int
		json     bool
		contains string
	}{
		{[]string{"run", "--dry-run", "--format", "json"}, exitOK, true, ""},
		{[]string{"run", "--dry-run", "--json"}, exitOK, true, "Flag --json has been deprecated, use --format json"},
		{[]string{"sweep", "--dry-run", "--profile", "capacity-sweep", "--format", "json"}, exitOK, true, ""},
		{[]string{"soak", "--dry-run", "--json"}, exitOK, true, "deprecated"},
		{[]string{"run", "--dry-run", "--format", "markdown"}, exitOK, false, "mcpbench run --dry-run"},
		{[]string{"run", "--dry-run", "--format", "xml"}, exitUsage, false, `invalid argument "xml" for "--format" flag: want text, json or markdown`},
		{[]string{"run", "--dry-run", "--json", "--format", "text"}, exitUsage, false, "--json is the old spelling of --format json: leave it out with --format text"},
		{[]string{"compare", "a", "b", "--format", "markdown"}, exitUsage, false, "want text or json"},
		{[]string{"report", "x", "-f", "yaml"}, exitUsage, false, "want text, markdown or json"},
	} {
		out, errs, code := cli(ctx, tc.args...)
		name := strings.Join(tc.args, " ")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", name, code, tc.code, out, errs)
			continue
		}
		if tc.contains != "" && !strings.Contains(out+errs, tc.contains) {
			t.Errorf("%s: output lacks %q:\n%s%s", name, tc.contains, out, errs)
		}
		if tc.json {
			// In-process the deprecation notice shares the writer of
			// stdout (cobra prints it with OutOrStderr); mcpbench itself
			// writes it to stderr.
			js := out[strings.Index(out, "{"):]
			var v map[string]any
			if err := json.Unmarshal([]byte(js), &v); err != nil || v["command"] != tc.args[0] {
				t.Errorf("%s: not the JSON plan (%v):\n%s", name, err, out)
			}
		}
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("a dry run wrote %d files or directories, want none", len(ents))
	}
}

// newRootCmdFlag looks up a flag of a top-level command.
func newRootCmdFlag(cmd, flag string) *pflag.Flag {
	for _, c := range newRootCmd().Commands() {
		if c.Name() == cmd {
			return c.Flags().Lookup(flag)
		}
	}
	return nil
}

func TestProfilesCommand(t *testing.T) {
	ctx := context.Background()
	out, errs, code := cli(ctx, "profiles")
	if code != exitOK {
		t.Fatalf("profiles: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	names := profiles.Names()
	if len(lines) != len(names) {
		t.Errorf("profiles printed %d lines for %d built-ins:\n%s", len(lines), len(names), out)
	}
	for i, name := range names {
		if i >= len(lines) {
			break
		}
		p, err := profile.LoadProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		words := strings.Fields(p.Description)
		head := strings.Join(words[:min(4, len(words))], " ")
		if fields := strings.Fields(lines[i]); len(fields) < 2 || fields[0] != name || !strings.Contains(lines[i], head) || len([]rune(lines[i])) > 160 {
			t.Errorf("line %d: %q; want %s and the start of its description (%q) on one line", i, lines[i], name, head)
		}
	}

	out, errs, code = cli(ctx, "profiles", "streaming")
	want, _ := profiles.Read("streaming")
	if code != exitOK || out != string(want) {
		t.Errorf("profiles streaming: exit %d, %d bytes, want the %d bytes of streaming.yaml: %s", code, len(out), len(want), errs)
	}
	out, errs, code = cli(ctx, "profiles", "nope")
	if code != exitUsage || out != "" || !strings.Contains(errs, `no built-in profile "nope" (built-ins: agent, capacity-sweep,`) {
		t.Errorf("profiles nope: exit %d, stdout %q, stderr %q; want exit 2 listing the built-ins", code, out, errs)
	}
	if _, errs, code = cli(ctx, "profiles", "smoke", "churn"); code != exitUsage {
		t.Errorf("profiles smoke churn: exit %d, want 2: %s", code, errs)
	}
}

// --dry-run prints the plan and sends nothing: a server that counts
// requests gets none, no results directory is made, no embedded server
// is started.
func TestDryRunSendsNothing(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer srv.Close()
	url := srv.URL + "/mcp"
	t.Chdir(t.TempDir())
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want []string // in this order
	}{
		{[]string{"run", "--url", url, "--rate", "250", "--duration", "3s", "--chaos", "cut after_events=2 p=0.5", "--threshold", "p99<200ms"},
			[]string{"mcpbench run --dry-run: the plan (nothing sent)", "target       " + url, "profile      smoke (built-in)",
				"model        open, 250 ops/s, 8 VUs up front, at most 250 VUs, an op later than 1s dropped",
				"window       3s measured after 1s warm-up, 5s graceful stop", "ops          tools/call:echo", `chaos        {"action":"cut","when":{"after_events":2}`,
				"thresholds   p99<200ms", "seed         1"}},
		{[]string{"run", "--url", url, "--vus", "3", "--profile", "resume-chaos"},
			[]string{"model        closed, 3 VUs", "ops          tools/call:progress", "chaos        {", "thresholds   none"}},
		{[]string{"sweep", "--url", url, "--from", "100", "--to", "300", "--steps", "3", "--step", "2s", "--slo-p99", "20ms"},
			[]string{"mcpbench sweep --dry-run", "sweep        by rate from 100 ops/s to 300 ops/s in 3 steps of 2s", "SLO          p99 ≤ 20 ms",
				"step  load", "1     100 ops/s  open, 100 ops/s", "2     200 ops/s  open, 200 ops/s", "3     300 ops/s  open, 300 ops/s"}},
		{[]string{"soak", "--url", url, "--duration", "1h", "--checkpoint", "5m"},
			[]string{"mcpbench soak --dry-run", "profile      soak-churn (built-in)", "window       1h0m0s measured", "sessions     churn 10/s", "checkpoint   every 5m0s"}},
		{[]string{"run"}, // the embedded server is not started
			[]string{"target       the embedded reference server (stateful mode; started on a free loopback port when the test runs)", "model        closed, 8 VUs"}},
	} {
		args := append(tc.args, "--dry-run")
		out, errs, code := cli(ctx, args...)
		name := strings.Join(args, " ")
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", name, code, errs)
			continue
		}
		rest := out
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: the plan lacks %q (or has it out of order):\n%s", name, w, out)
				break
			}
			rest = rest[i+len(w):]
		}
		if errs != "" {
			t.Errorf("%s: stderr %q, want nothing (no server started, no results written)", name, errs)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests from dry runs, want 0", n)
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("dry runs wrote %d files or directories, want none", len(ents))
	}
	// Credentials are never printed: header values, the URL's password.
	t.Setenv("DRYRUN_TOKEN", "s3cret-env")
	secretURL := strings.Replace(url, "http://", "http://user:s3cret-pw@", 1)
	for _, format := range []string{"text", "json"} {
		for _, cmd := range []string{"run", "sweep"} {
			args := []string{cmd, "--dry-run", "--format", format, "--url", secretURL, "-H", "Authorization: Bearer s3cret-literal", "-H", "X-Api-Key: ${DRYRUN_TOKEN}"}
			if cmd == "sweep" {
				args = append(args, "--profile", "capacity-sweep")
			}
			out, errs, code := cli(ctx, args...)
			if code != exitOK || strings.Contains(out+errs, "s3cret") || !strings.Contains(out, "Authorization: [redacted]") {
				t.Errorf("%s: exit %d; want the headers shown redacted and no secret:\n%s%s", strings.Join(args, " "), code, out, errs)
			}
		}
	}

	// A dry run checks what the run would: a bad profile exits 2.
	_, errs, code := cli(ctx, "run", "--dry-run", "--url", url, "--rate", "-5")
	if code != exitUsage || !strings.Contains(errs, "rate") {
		t.Errorf("run --dry-run --rate -5: exit %d, %q; want exit 2 naming rate", code, errs)
	}
	_, errs, code = cli(ctx, "sweep", "--dry-run", "--url", url)
	if code != exitUsage || !bytes.Contains([]byte(errs), []byte("sweep")) {
		t.Errorf("sweep --dry-run without a sweep: exit %d, %q; want exit 2", code, errs)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests, want 0", n)
	}
}

// run and soak print their summary in each --format: markdown as report
// prints it, a soak's JSON as {"summary": …, "soak": …} (as report).
func TestRunSoakFormats(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two short benchmarks")
	}
	t.Chdir(t.TempDir())
	ctx := context.Background()
	out, errs, code := cli(ctx, "run", "--duration", "500ms", "--warmup", "0s", "--no-progress", "--no-results", "--format", "markdown")
	if code != exitOK || !strings.HasPrefix(out, "## mcpbench: smoke\n") || !strings.Contains(out, "| target | `http://127.0.0.1:") {
		t.Errorf("run --format markdown: exit %d, want the markdown report:\n%s%s", code, out, errs)
	}
	out, errs, code = cli(ctx, "soak", "--duration", "1s", "--warmup", "0s", "--checkpoint", "1s", "--no-progress", "--no-results", "--format", "json")
	var v struct {
		Summary *struct{ Profile string }
		Soak    *struct{ Verdicts []any }
	}
	if err := json.Unmarshal([]byte(out), &v); code != exitOK && code != exitThresholds || err != nil || v.Summary == nil || v.Summary.Profile != "soak-churn" || v.Soak == nil || len(v.Soak.Verdicts) == 0 {
		t.Errorf("soak --format json: exit %d (%v); want one JSON object with summary and soak:\n%s%s", code, err, out, errs)
	}
}
