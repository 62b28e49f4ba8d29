package main

import (
	"context"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The README opens with the two commands (.ci/run and the tests rely on
// them), and its quickstarts are output blocks: a command and what it
// printed, which TestReadmeCommands runs (shortened) and compares with
// what the run prints now, volatile fields masked (shownOutputMatches).
// After the summary changed, run the quickstart's command as written and
// paste its output (elide with "…" what the reader does not need).

const exampleCommand = "go run ./cmd/mcpbench run"

// readmeFirstBlock is the README's first code block, exactly.
const readmeFirstBlock = "```sh\n" +
	"go run ./cmd/mcpbench run     # benchmark the embedded MCP reference server (no flags needed)\n" +
	"go test ./...                 # run the tests\n" +
	"```\n"

func TestReadmeExample(t *testing.T) {
	readme := readmeText(t)
	i := strings.Index(readme, "```")
	if i < 0 || !strings.HasPrefix(readme[i:], readmeFirstBlock) {
		t.Errorf("the README's first code block must be the two commands, exactly:\n%s", readmeFirstBlock)
	}
	var outputs []docBlock
	for _, b := range docBlocks(readme) {
		if b.output() && !b.external {
			outputs = append(outputs, b)
		}
	}
	if len(outputs) < 3 {
		t.Fatalf("the README shows %d commands with their output, want the three quickstarts", len(outputs))
	}
	for _, b := range outputs {
		if strings.Count(b.text, "\n") < 5 {
			t.Errorf("README:%d: an output block with %d lines: show what the command printed", b.line, strings.Count(b.text, "\n"))
		}
	}
	// The embedded server's run, as the first command gives it, prints
	// the summary the quickstarts show (their labels, in their order).
	if testing.Short() || raceEnabled {
		return
	}
	t.Chdir(t.TempDir()) // the results directory lands here
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.NumCPU()))
	out, code := cliCombined(t.Context(), "run", "--duration", "1s", "--warmup", "0s")
	if code != exitOK {
		t.Fatalf("%s: exit %d:\n%s", exampleCommand, code, out)
	}
	for _, label := range []string{"Verdict:", "Next:", "Response time (ms", "Throughput:", "Errors:", "Replay ledger (response streams):", "Sessions:", "Generator:"} {
		if !strings.Contains(out, "\n"+label) {
			t.Errorf("%s no longer prints a line %q, which the quickstarts show:\n%s", exampleCommand, label, out)
		}
	}
}

var (
	reShapeURL     = regexp.MustCompile(`https?://127\.0\.0\.1:\d+/mcp`)
	reShapeResults = regexp.MustCompile(`results/\S+`)
	reShapeVersion = regexp.MustCompile(`mcpbench dev(-[0-9a-f]+)?|mcpbench v\S+`)
	reShapeNumber  = regexp.MustCompile(`\d+(\.\d+)?`)
)

// shapeLines masks what differs run to run in each line of out — the
// address, the results directory, the version, every number — collapses
// runs of spaces (the table's columns) and drops blank lines and progress
// lines ("[ 1.0s/1s] …").
func shapeLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "[") {
			continue
		}
		l = reShapeURL.ReplaceAllString(l, "URL")
		l = reShapeResults.ReplaceAllString(l, "results/DIR")
		l = reShapeVersion.ReplaceAllString(l, "mcpbench VERSION")
		l = reShapeNumber.ReplaceAllString(l, "N")
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

// conditional reports whether a line is a notice some runs print and
// others do not.
func conditional(l string) bool {
	for _, p := range []string{"mcpbench:", "note:", "WARNING:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// fixed are the lines every run prints.
func fixed(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !conditional(l) {
			out = append(out, l)
		}
	}
	return out
}

// readmeAbs is README.md's absolute path, taken before a test changes
// directory (go test starts in the package's directory).
var readmeAbs, _ = filepath.Abs("../../README.md")

// cliCombined runs mcpbench in-process with stdout and stderr on one
// writer, in the order written, as a terminal shows them.
func cliCombined(ctx context.Context, args ...string) (string, int) {
	var buf lockedBuffer
	code := cliTo(ctx, &buf, &buf, args...)
	return buf.String(), code
}
