package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/results"
)

// Every shell example of the README and the docs runs (briefly:
// durations, steps and sizes shrunk) against the embedded server or a
// local `serve`, so an example that breaks fails CI (issue: the README's
// --target-pid $(pgrep …) failed whenever pgrep matched two processes).
// The chaos examples must open every session and leave the ledger clean.
//
// What runs (docExamples): every line of a ```sh block, and the command of
// an output block (a bare ``` block whose first line is "$ mcpbench …":
// the command and below it what it printed, compared with what the
// shrunk run prints, volatile fields masked: shownOutputMatches). A block
// after an HTML comment "<!-- external: WHY -->" needs an outside system
// (a clone, Docker, Kubernetes, a browser) and is not run; any other shell
// block (```bash, ```shell, ```console) must carry that marker, and a ```sh
// block may hold only mcpbench commands (`mcpbench …`, `go run
// ./cmd/mcpbench …`), `export NAME=VALUE`, `NAME=$(…)` and comments, so
// nothing in a run block is silently skipped.
//
// Each file runs in a directory of its own, with its own servers. Each
// command is this test binary run as mcpbench (TestMain), in a process of
// its own: the servers first, then the other commands a few at a time,
// each after the commands whose results it reads (report, plot, compare
// and merge after the --out they name) and after those that listen on the
// same --prometheus address; a command that writes no named results runs
// in a directory of its own, so default results directories never meet.
func TestReadmeCommands(t *testing.T) {
	testenv.Long(t)
	if testing.Short() || raceEnabled {
		t.Skip("runs every README and docs example (skipped under -race: the plain run covers it)")
	}
	files := docFiles(t)
	total, external := 0, 0
	for _, f := range files {
		ex := docExamples(t, f)
		external += ex.external
		for _, c := range ex.cmds {
			if c.export == "" {
				total++
			}
		}
	}
	if total < 25 {
		t.Fatalf("found %d commands in the README's and docs' shell blocks: the parser missed some", total)
	}
	t.Logf("%d commands run from %d files; %d blocks marked external", total, len(files), external)
	slots := make(chan struct{}, 4) // commands at once, over every file: most wait on their duration, not the CPU
	for _, f := range files {
		cmds := docExamples(t, f).cmds
		if len(cmds) == 0 {
			continue
		}
		t.Run(f.rel, func(t *testing.T) {
			t.Parallel()
			runDocCommands(t, f.rel, cmds, slots)
		})
	}
}

// runDocCommands runs the commands of one file (see TestReadmeCommands),
// at most cap(slots) at once across the files.
func runDocCommands(t *testing.T, file string, cmds []readmeCmd, slots chan struct{}) {
	root, err := filepath.Abs("../..") // the docs' paths are relative to the repository
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	environ := append(os.Environ(), "TOKEN=readme-token", "MCPBENCH_MAIN=1") // MCPBENCH_MAIN: the binary runs as mcpbench (TestMain)
	px, err := mcptest.StartProxy()                                          // the docs' proxy on 127.0.0.1:3128
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	env := &readmeEnv{dir: dir, addrs: map[string]string{"127.0.0.1:3128": strings.TrimPrefix(px.URL, "http://")}}
	type job struct {
		name, cwd string
		args, env []string
		after     []chan struct{}
		expect    string
	}
	var jobs []*job
	serving := map[string]bool{}
	writer := map[string]chan struct{}{}   // results dir → done when the command writing it ends
	listener := map[string]chan struct{}{} // --prometheus address → the last command listening there
	var done []chan struct{}
	for _, c := range cmds {
		if c.export != "" {
			environ = append(environ, c.export)
			continue
		}
		args := env.rewrite(t, c.args)
		for i, a := range args {
			if strings.HasPrefix(a, "examples/") || strings.HasPrefix(a, "docs/") {
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
			startServer(t, dir, args, environ)
			waitListening(t, addr)
			if i := slices.Index(args, "--tls-dir"); i >= 0 {
				waitFile(t, filepath.Join(args[i+1], "ca.pem"))
			}
			if i := slices.Index(args, "--pid-file"); i >= 0 {
				waitFile(t, args[i+1])
			}
			continue
		}
		if args[0] == "proxy" { // runs until stopped, as serve does
			startServer(t, dir, args, environ)
			waitListening(t, args[slices.Index(args, "--listen")+1])
			continue
		}
		j := &job{name: name, args: args, env: slices.Clone(environ), cwd: dir, expect: c.expect}
		ch := make(chan struct{})
		shared := false
		for i, a := range args {
			switch {
			case strings.HasPrefix(a, "results/") && slices.Contains([]string{"report", "plot", "compare", "merge"}, args[0]) && args[i-1] != "--out":
				shared = true
				from := a
				if _, ok := writer[a]; !ok && args[0] == "compare" {
					from = "results/vus64" // compare A B: runs the docs do not make are copies of one they do
				}
				if w, ok := writer[from]; ok {
					j.after = append(j.after, w)
				}
			case a == "--out" && i+1 < len(args):
				shared = true
				writer[args[i+1]] = ch
			case a == "--prometheus" && i+1 < len(args):
				if l, ok := listener[args[i+1]]; ok {
					j.after = append(j.after, l)
				}
				listener[args[i+1]] = ch
			}
		}
		if !shared { // default results directories of its own
			j.cwd = filepath.Join(dir, fmt.Sprintf("cmd%02d", len(jobs)))
			if err := os.Mkdir(j.cwd, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		jobs = append(jobs, j)
		done = append(done, ch)
	}
	// The programs' own secret files (the pid file) exist now: read them.
	for _, j := range jobs {
		for i, a := range j.args {
			if f, ok := strings.CutPrefix(a, "$(cat "); ok {
				pid, err := os.ReadFile(strings.TrimSuffix(f, ")"))
				if err != nil {
					t.Fatal(err)
				}
				j.args[i] = strings.TrimSpace(string(pid))
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			defer close(done[i])
			for _, a := range j.after {
				<-a
			}
			slots <- struct{}{}
			defer func() { <-slots }()
			for _, p := range j.args {
				// compare A B: runs the docs do not make are copies of one they do.
				if strings.HasPrefix(p, "results/") && j.args[0] == "compare" {
					if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
						if err := os.CopyFS(filepath.Join(dir, p), os.DirFS(filepath.Join(dir, "results/vus64"))); err != nil {
							t.Errorf("%s: mcpbench %s: copy results/vus64 to %s: %v", file, j.name, p, err)
							return
						}
					}
				}
			}
			chaos := slices.ContainsFunc(j.args, func(a string) bool { return a == "--chaos" || a == "resume-chaos" || a == "reconnect-storm" }) &&
				!slices.Contains(j.args, "--dry-run") && j.expect == "" // a plan, not a run; a shown output is text
			if chaos {
				j.args = append(j.args, "--format", "json")
			}
			t0 := time.Now()
			cmd := exec.Command(exe, j.args...)
			cmd.Args[0] = "mcpbench" // as the docs' shell runs it: mcpbench on $PATH
			cmd.Dir, cmd.Env = j.cwd, j.env
			var out, errs bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errs
			if j.expect != "" {
				cmd.Stderr = &out // one stream, in the order written, as a terminal shows it
			}
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			// A crossed threshold (--threshold, --fail-if, a profile's
			// thresholds:) is a result, not a break: the limit is the
			// user's, and a shortened run on a busy machine may cross it.
			okCodes := []int{exitOK, exitThresholds}
			if !slices.Contains(okCodes, code) {
				t.Errorf("%s: mcpbench %s\n  ran as: %s\n  exit %d (%v) after %v\n%s\n%s", file, j.name, strings.Join(j.args, " "), code, err, time.Since(t0).Round(time.Millisecond), tail(out.String()), tail(errs.String()))
				return
			}
			if j.expect != "" {
				got := strings.ReplaceAll(out.String(), root+string(filepath.Separator), "") // the docs' paths, as the docs give them
				if missing, ok := shownOutputMatches(j.expect, got); !ok {
					t.Errorf("%s: the output shown for mcpbench %s is no longer what it prints: %q is not in its output (in this order, volatile fields masked); run it and paste its output\n  ran as: %s\n%s", file, j.name, missing, strings.Join(j.args, " "), tail(got))
				}
				return
			}
			if !chaos {
				return
			}
			var s results.Summary
			if err := json.Unmarshal(out.Bytes(), &s); err != nil {
				t.Errorf("%s: mcpbench %s: --format json: %v", file, j.name, err)
				return
			}
			verdicts := map[string]int64{}
			for _, l := range []*results.LedgerSummary{s.All.Ledger, getLedger(&s)} {
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
				t.Errorf("%s: mcpbench %s: sessions %d opened, %d failed; verdicts %v (want every session opened, a clean ledger)", file, j.name, s.Sessions.Opened, s.Sessions.Failed, verdicts)
			}
		})
	}
	wg.Wait()
}

// startServer runs a README serve command as a process of its own (this
// binary as mcpbench), stopped when the test ends.
func startServer(t *testing.T, dir string, args, environ []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Args[0] = "mcpbench" // as the docs' shell runs it
	cmd.Dir, cmd.Env = dir, environ
	var errs bytes.Buffer
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
}

func getLedger(s *results.Summary) *results.LedgerSummary {
	if s.GETStreams == nil {
		return nil
	}
	return s.GETStreams.Ledger
}

// readmeCmd is an mcpbench command of the docs (with expect, the output
// the docs show for it), or an export line (NAME=VALUE) that the commands
// after it see.
type readmeCmd struct {
	args   []string
	export string
	expect string
}

// readmeCommands extracts the mcpbench commands of text's run blocks (see
// docExamples; continuation lines joined, comments dropped), external
// blocks left out.
func readmeCommands(text string) []readmeCmd {
	var out []readmeCmd
	for _, b := range docBlocks(text) {
		if b.external {
			continue
		}
		out = append(out, b.cmds()...)
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
	for _, a := range args {
		a = strings.ReplaceAll(a, "https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp")
		a = reAddr.ReplaceAllStringFunc(a, func(m string) string { return e.addr(t, m) })
		a = strings.ReplaceAll(a, "/tmp/mcpbench-", filepath.Join(e.dir, "mcpbench-"))
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
		time.Sleep(20 * time.Millisecond) // polling with a deadline: the server starts in another process
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
		time.Sleep(5 * time.Millisecond) // polling with a deadline: serve writes it in another process
	}
	t.Fatalf("serve wrote no %s", path)
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}
