package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The README's "## Example" block is a real run's output. To regenerate it
// from a real run (6 s: the smoke profile, embedded server) after the
// summary changed, run
//
//	MCPBENCH_UPDATE_README=1 go test ./cmd/mcpbench -run TestReadmeExample -count=1
//
// and commit README.md. Without MCPBENCH_UPDATE_README the test runs a 1 s
// run and checks that the block has the shape of its output: the same
// lines, in the same order, with the same labels — numbers, addresses,
// paths and the version are masked, since they differ run to run.
// Conditional notices (lines opening with "mcpbench:", "note:" or
// "WARNING:", e.g. a busy machine's) may come and go.

const (
	exampleHeading = "## Example\n\n```\n"
	exampleCommand = "go run ./cmd/mcpbench run"
	updateReadme   = "MCPBENCH_UPDATE_README"
)

func TestReadmeExample(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs a benchmark (skipped under -race: the plain run covers it)")
	}
	readme := readmeText(t)
	start := strings.Index(readme, exampleHeading)
	if start < 0 {
		t.Fatalf("README has no %q block", strings.TrimSpace(exampleHeading))
	}
	start += len(exampleHeading)
	end := start + strings.Index(readme[start:], "```\n")
	block := readme[start:end]

	t.Chdir(t.TempDir()) // the results directory lands here
	// Every core, as a fresh process has (an earlier test's open-model run
	// against --url may have lowered it: the summary then names it).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.NumCPU()))
	if os.Getenv(updateReadme) != "" {
		out, code := cliCombined(t.Context(), "run")
		if code != exitOK {
			t.Fatalf("mcpbench run: exit %d:\n%s", code, out)
		}
		var keep []string // a terminal redraws the progress line in place: leave it out
		for _, l := range strings.SplitAfter(out, "\n") {
			if !strings.HasPrefix(l, "[") {
				keep = append(keep, l)
			}
		}
		updated := readme[:start] + "$ " + exampleCommand + "\n" + strings.Join(keep, "") + readme[end:]
		if err := os.WriteFile(readmeAbs, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the Example block of %s from a real run", readmeAbs)
		return
	}
	if !strings.HasPrefix(block, "$ "+exampleCommand+"\n") {
		t.Fatalf("the Example block must open with \"$ %s\"; it opens:\n%s", exampleCommand, block[:min(len(block), 200)])
	}
	out, code := cliCombined(t.Context(), "run", "--duration", "1s", "--warmup", "0s")
	if code != exitOK {
		t.Fatalf("mcpbench run: exit %d:\n%s", code, out)
	}
	want := shapeLines(strings.TrimPrefix(block, "$ "+exampleCommand+"\n"))
	got := shapeLines(out)
	if diff := cmp.Diff(fixed(want), fixed(got)); diff != "" {
		t.Errorf("README's Example block no longer has the shape of a run's output (-README +run); regenerate it with\n  %s=1 go test ./cmd/mcpbench -run TestReadmeExample -count=1\n%s", updateReadme, diff)
	}
	// The README's notices are a real run's: each must still be printed.
	have := map[string]bool{}
	for _, l := range got {
		have[l] = true
	}
	for _, l := range want {
		if conditional(l) && strings.HasPrefix(l, "mcpbench:") && !have[l] {
			t.Errorf("README's Example shows %q; a run no longer prints it (regenerate with %s=1)", l, updateReadme)
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
