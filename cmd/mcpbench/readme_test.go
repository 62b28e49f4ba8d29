package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/metrics"
)

// Every command of the README's shell blocks runs (briefly: durations,
// steps and sizes shrunk) against the embedded server or a local `serve`,
// in the README's order, so an example that breaks fails CI (issue: the
// README's --target-pid $(pgrep …) failed whenever pgrep matched two
// processes). The chaos examples must open every session and leave the
// ledger clean.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs every README example (skipped under -race: the plain run covers it)")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(readme))
	if len(cmds) < 25 {
		t.Fatalf("found %d commands in the README's sh blocks: the parser missed some", len(cmds))
	}
	root, err := filepath.Abs("../..") // the README's paths are relative to the repository
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("TOKEN", "readme-token")
	t.Setenv("MCPBENCH_MAIN", "1")  // run --processes starts this binary as mcpbench (TestMain)
	px, err := mcptest.StartProxy() // the README's proxy on 127.0.0.1:3128
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	env := &readmeEnv{dir: dir, addrs: map[string]string{"127.0.0.1:3128": strings.TrimPrefix(px.URL, "http://")}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serving := map[string]bool{}
	procs := runtime.GOMAXPROCS(0)
	for _, c := range cmds {
		if c.export != "" {
			name, value, _ := strings.Cut(c.export, "=")
			t.Setenv(name, value)
			continue
		}
		args := env.rewrite(t, c.args)
		for i, a := range args {
			if strings.HasPrefix(a, "examples/") {
				args[i] = filepath.Join(root, a)
			}
		}
		name := strings.Join(c.args, " ")
		if args[0] == "serve" {
			i := slices.Index(args, "--addr")
			if i < 0 {
				args = append(args, "--addr", env.addr(t, "127.0.0.1:8080"))
				i = len(args) - 2
			}
			addr := args[i+1]
			if serving[addr] {
				continue // one server per address serves every block
			}
			serving[addr] = true
			go cli(ctx, args...)
			waitListening(t, addr)
			if i := slices.Index(args, "--tls-dir"); i >= 0 {
				waitFile(t, filepath.Join(args[i+1], "ca.pem"))
			}
			continue
		}
		for _, p := range args {
			// compare A B: runs the README does not make are copies of one it does.
			if strings.HasPrefix(p, "results/") && args[0] == "compare" {
				if _, err := os.Stat(p); err != nil {
					copyDir(t, "results/vus64", p)
				}
			}
		}
		chaos := slices.ContainsFunc(args, func(a string) bool { return a == "--chaos" || a == "resume-chaos" || a == "reconnect-storm" }) &&
			!slices.Contains(args, "--dry-run") // a plan, not a run
		if chaos {
			args = append(args, "--format", "json")
		}
		t0 := time.Now()
		out, errs, code := cli(ctx, args...)
		runtime.GOMAXPROCS(procs) // an open-model run against --url lowers it
		okCodes := []int{exitOK}
		if slices.Contains(args, "--threshold") || slices.Contains(args, "--fail-if") {
			okCodes = append(okCodes, exitThresholds) // the limit is the user's: crossing it is a result, not a break
		}
		if !slices.Contains(okCodes, code) {
			t.Errorf("README: mcpbench %s\n  ran as: %s\n  exit %d after %v\n%s\n%s", name, strings.Join(args, " "), code, time.Since(t0).Round(time.Millisecond), tail(out), tail(errs))
			continue
		}
		if chaos {
			var s metrics.Summary
			if err := json.Unmarshal([]byte(out), &s); err != nil {
				t.Errorf("README: mcpbench %s: --format json: %v", name, err)
				continue
			}
			verdicts := map[string]int64{}
			for _, l := range []*metrics.LedgerSummary{s.All.Ledger, getLedger(&s)} {
				if l == nil {
					continue
				}
				for v, n := range l.Verdicts {
					verdicts[v] += n
				}
			}
			bad := false
			for _, n := range verdicts {
				bad = bad || n != 0
			}
			if s.Sessions.Failed != 0 || s.Sessions.Opened == 0 || bad {
				t.Errorf("README: mcpbench %s: sessions %d opened, %d failed; verdicts %v (want every session opened, a clean ledger)", name, s.Sessions.Opened, s.Sessions.Failed, verdicts)
			}
		}
	}
}

func getLedger(s *metrics.Summary) *metrics.LedgerSummary {
	if s.GETStreams == nil {
		return nil
	}
	return s.GETStreams.Ledger
}

// readmeCmd is an mcpbench command of the README, or an export line
// (NAME=VALUE) that the commands after it see.
type readmeCmd struct {
	args   []string
	export string
}

var reBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// readmeCommands extracts the mcpbench commands of the README's sh blocks
// (continuation lines joined, comments dropped; go test and the
// development scripts left out).
func readmeCommands(readme string) []readmeCmd {
	var out []readmeCmd
	for _, m := range reBlock.FindAllStringSubmatch(readme, -1) {
		text := strings.ReplaceAll(m[1], "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			words := shellWords(line)
			if len(words) > 0 && words[len(words)-1] == "&" {
				words = words[:len(words)-1]
			}
			switch {
			case len(words) == 2 && words[0] == "export" && strings.Contains(words[1], "="):
				out = append(out, readmeCmd{export: words[1]})
			case len(words) >= 2 && words[0] == "mcpbench":
				out = append(out, readmeCmd{args: words[1:]})
			case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/mcpbench":
				out = append(out, readmeCmd{args: words[3:]})
			}
		}
	}
	return out
}

// shellWords splits a command line as sh would for the README's forms:
// single and double quotes, a trailing # comment; "$(cat FILE)" is kept as
// a word for rewrite.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '#' && !in:
			return words
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// readmeEnv maps the README's addresses and files to the test's.
type readmeEnv struct {
	dir   string
	addrs map[string]string // README's 127.0.0.1:PORT → a free port here
}

var reAddr = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// addr returns the test's address for one the README names.
func (e *readmeEnv) addr(t *testing.T, a string) string {
	if got, ok := e.addrs[a]; ok {
		return got
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := l.Addr().String()
	l.Close()
	e.addrs[a] = got
	return got
}

// rewrite points a README command at the test's servers and shrinks it:
// each 127.0.0.1:PORT becomes a free port of its own (the proxy's 3128 the
// test proxy), example hosts the server of 127.0.0.1:8080, /tmp/mcpbench-*
// files temporary ones, durations, steps and loads small.
func (e *readmeEnv) rewrite(t *testing.T, args []string) []string {
	out := make([]string, 0, len(args)+8)
	pidFile := filepath.Join(e.dir, "mcpbench-serve.pid")
	for _, a := range args {
		a = strings.ReplaceAll(a, "https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp")
		a = reAddr.ReplaceAllStringFunc(a, func(m string) string { return e.addr(t, m) })
		a = strings.ReplaceAll(a, "/tmp/mcpbench-", filepath.Join(e.dir, "mcpbench-"))
		if a == "$(cat "+pidFile+")" {
			a = fmt.Sprint(os.Getpid()) // serve runs in this process
		}
		out = append(out, a)
	}
	has := func(f string) bool { return slices.Contains(out, f) }
	for i := 1; i < len(out); i++ {
		switch {
		case out[i-1] == "--start-at":
			out[i] = "+0s" // the README's $START: now
		case out[i-1] == "--vus" && has("--processes"):
			out[i] = "8"
		}
	}
	if has("--processes") { // run, sweep, soak: the children start their clock 1 s after they are launched
		out = append(out, "--start-delay", "1s")
	}
	switch out[0] {
	case "run":
		if has("ramp") { // the stages set its window: shrink them instead
			out = append(out, "--stage", "750ms:100", "--stage", "750ms:200", "--warmup", "0s", "-q")
		} else {
			out = append(out, "--duration", "1500ms", "--warmup", "0s", "-q")
		}
		if has("reconnect-storm") {
			out = append(out, "--vus", "40", "--max-vus", "40", "--rate", "40", "--storm", "at=500ms target=get")
		}
	case "soak":
		out = append(out, "--duration", "2s", "--warmup", "0s", "--checkpoint", "1s", "-q")
	case "sweep":
		out = append(out, "--steps", "2", "--step", "1s", "--step-warmup", "0s", "-q")
		if has("sessions") {
			out = append(out, "--from", "10", "--to", "20")
		} else {
			out = append(out, "--from", "100", "--to", "200")
		}
	}
	return out
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline: the server starts in another goroutine
	}
	t.Fatalf("serve did not listen on %s", addr)
}

// waitFile waits for a file a server writes once it listens.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline: serve writes it in another goroutine
	}
	t.Fatalf("serve wrote no %s", path)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatalf("copy %s to %s: %v", from, to, err)
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}
