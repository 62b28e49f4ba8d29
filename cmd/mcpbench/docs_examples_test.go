package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpbench/mcpbench/outcome"
)

// The README and docs/ as a test reads them: the files, their fenced
// blocks, which blocks run (TestReadmeCommands) and which are marked as
// needing an outside system, the output blocks' comparison, and the
// relative links between the pages.

// docFile is a markdown file of the documentation: rel its path from the
// repository root ("README.md", "docs/how-to/soak.md").
type docFile struct {
	rel, text string
}

// docFiles returns README.md and every docs/**/*.md, sorted by path.
func docFiles(t *testing.T) []docFile {
	t.Helper()
	root := "../.."
	var out []docFile
	add := func(rel string) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, docFile{rel: rel, text: string(data)})
	}
	add("README.md")
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			add(filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b docFile) int { return strings.Compare(a.rel, b.rel) })
	return out
}

// docBlock is a fenced block: its language ("sh", "" …), its text, the
// 1-based line its fence opens on, and whether an "<!-- external: … -->"
// comment marks it (the last non-blank line before the fence).
type docBlock struct {
	lang, text string
	line       int
	external   bool
}

var reExternal = regexp.MustCompile(`^<!-- external(:.*)? -->$`)

// docBlocks returns the fenced blocks of a markdown text.
func docBlocks(text string) []docBlock {
	var out []docBlock
	lines := strings.Split(text, "\n")
	prev := "" // the last non-blank line outside a block
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "```") {
			if strings.TrimSpace(l) != "" {
				prev = strings.TrimSpace(l)
			}
			continue
		}
		b := docBlock{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: i + 1, external: reExternal.MatchString(prev)}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
		prev = ""
	}
	return out
}

// shellLangs are the fence languages of shell examples.
var shellLangs = []string{"sh", "bash", "shell", "console", "zsh"}

// output reports whether b is an output block: no language (or text) and
// a first line "$ mcpbench …" or "$ go run ./cmd/mcpbench …".
func (b docBlock) output() bool {
	return (b.lang == "" || b.lang == "text") && (strings.HasPrefix(b.text, "$ mcpbench ") || strings.HasPrefix(b.text, "$ go run ./cmd/mcpbench "))
}

// cmds returns the commands b runs: each mcpbench line and export of an sh
// block; an output block's command with the output below it.
func (b docBlock) cmds() []readmeCmd {
	switch {
	case b.output():
		first, rest, _ := strings.Cut(b.text, "\n")
		words := shellWords(strings.TrimPrefix(first, "$ "))
		return []readmeCmd{{args: mcpbenchArgs(words), expect: rest}}
	case b.lang != "sh":
		return nil
	}
	var out []readmeCmd
	for _, line := range shellLines(b.text) {
		words := shellWords(line)
		if len(words) > 0 && words[len(words)-1] == "&" {
			words = words[:len(words)-1]
		}
		switch {
		case len(words) == 2 && words[0] == "export" && strings.Contains(words[1], "=") && !strings.Contains(words[1], "$"): // not PATH="$PATH:…"
			out = append(out, readmeCmd{export: words[1]})
		case mcpbenchArgs(words) != nil:
			out = append(out, readmeCmd{args: mcpbenchArgs(words)})
		}
	}
	return out
}

// mcpbenchArgs returns the arguments of an mcpbench command line
// ("mcpbench ARGS" or "go run ./cmd/mcpbench ARGS"), nil for another.
func mcpbenchArgs(words []string) []string {
	switch {
	case len(words) >= 2 && words[0] == "mcpbench":
		return words[1:]
	case len(words) >= 4 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/mcpbench":
		return words[3:]
	}
	return nil
}

// shellLines returns the lines of a shell block, continuation lines joined.
func shellLines(text string) []string {
	return strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n")
}

var reAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\$\(`)

// docExamples is what TestReadmeCommands runs of one file, and how many of
// its shell blocks are marked external.
type docExampleSet struct {
	cmds     []readmeCmd
	external int
}

// docExamples returns the examples of f, failing t for a shell block that
// is neither run nor marked external, and for a line of a run block that
// the test would skip.
func docExamples(t *testing.T, f docFile) docExampleSet {
	t.Helper()
	var set docExampleSet
	for _, b := range docBlocks(f.text) {
		shell := slices.Contains(shellLangs, b.lang) || b.output()
		switch {
		case !shell:
			continue
		case b.external:
			set.external++
			continue
		case b.lang != "sh" && !b.output():
			t.Errorf("%s:%d: a ```%s block: write it as ```sh so the test runs it, or mark it <!-- external: WHY -->", f.rel, b.line, b.lang)
			continue
		}
		if b.lang == "sh" {
			for _, line := range shellLines(b.text) {
				words := shellWords(line)
				if len(words) == 0 || mcpbenchArgs(words) != nil || words[0] == "export" || reAssign.MatchString(line) {
					continue
				}
				if f.rel == "README.md" && strings.HasPrefix(line, "go test ./... ") && strings.HasPrefix(f.text[strings.Index(f.text, "```"):], readmeFirstBlock) {
					continue // the README's second command is the suite this test belongs to
				}
				t.Errorf("%s:%d: %q in a run block is not an mcpbench command, so no test runs it: move it to a block marked <!-- external: WHY -->", f.rel, b.line, line)
			}
		}
		set.cmds = append(set.cmds, b.cmds()...)
	}
	return set
}

// Each doc's shell blocks are run or marked external (docExamples says
// why not); the counts are logged. Cheap: it runs nothing.
func TestDocsExamplesMarked(t *testing.T) {
	run, external, outputs, servers := 0, 0, 0, 0
	for _, f := range docFiles(t) {
		set := docExamples(t, f)
		external += set.external
		for _, c := range set.cmds {
			switch {
			case c.expect != "":
				outputs++
				run++
			case c.export == "" && (c.args[0] == "serve" || c.args[0] == "proxy"):
				servers++
			case c.export == "":
				run++
			}
		}
	}
	t.Logf("examples: %d commands run by TestReadmeCommands (%d of them output blocks, their output compared), %d serve/proxy lines (started once per address and file), %d blocks marked external", run, outputs, servers, external)
}

var (
	reVolatileWord = regexp.MustCompile(`\b(within|beyond|PASS|FAIL|pass|FAIL:|OK|WARN)\b`)
	reEventID      = regexp.MustCompile(`\b[A-Z0-9]{20,}_\d+\b`)
	reStepRow      = regexp.MustCompile(`^N[rc]? N `)
)

// volatilePrefixes are lines whose text past the prefix says how this run
// went (a verdict, a noisy sweep's knee): only the prefix is compared.
var volatilePrefixes = []string{"Verdict:", "Next:", "Knee:", "Maximum sustainable rate", "throughput ", "Soak:"}

// shownLine masks l as shapeLines does, then what differs between two runs
// of one command on a noisy machine: verdict words, event ids, the text
// after a volatile prefix. It reports false for a line a run may or may
// not print (notices, warnings with their cause and remedy, the start-lag
// line, a sweep's step rows and its confidence, cool-down and stopped-early
// lines, an elision "…").
func shownLine(l string) (string, bool) {
	l = reEventID.ReplaceAllString(l, "ID")
	shaped := shapeLines(l)
	if len(shaped) == 0 {
		return "", false
	}
	s := reVolatileWord.ReplaceAllString(shaped[0], "V")
	for _, p := range []string{"…", "...", "mcpbench:", "note:", "WARNING", "cause:", "remedy:", "Start lag", "(steps marked", "sweep step",
		"Confidence:", "Cool-downs:", "Stopped early:"} { // a sweep prints these only when it has something to say
		if strings.HasPrefix(s, p) {
			return "", false
		}
	}
	if reStepRow.MatchString(s) {
		return "", false
	}
	for _, p := range volatilePrefixes {
		if strings.HasPrefix(s, p) {
			return p, true
		}
	}
	return s, true
}

// shownOutputMatches reports whether every line the docs show (its
// masked form: shownLine) is printed by the run, in the same order; the
// run may print more (the docs elide with "…"). It returns the first
// shown line not found.
func shownOutputMatches(shown, got string) (string, bool) {
	var have []string
	for _, l := range strings.Split(got, "\n") {
		if s, ok := shownLine(l); ok {
			have = append(have, s)
		} else if s := strings.Join(shapeLines(l), ""); s != "" {
			have = append(have, reVolatileWord.ReplaceAllString(s, "V"))
		}
	}
	for _, l := range strings.Split(shown, "\n") {
		want, ok := shownLine(l)
		if !ok {
			continue
		}
		i := slices.IndexFunc(have, func(h string) bool {
			return h == want || strings.HasPrefix(h, want) && slices.Contains(volatilePrefixes, want)
		})
		if i < 0 {
			return l, false
		}
		have = have[i+1:]
	}
	return "", true
}

func TestDocsShownOutputMatches(t *testing.T) {
	got := "mcpbench  http://127.0.0.1:4242/mcp  ·  protocol 2025-11-25\nVerdict: WARN — 3 of 9 ops started late\nWARNING W-START-LAG: late\n  cause: busy\nop count p99\ntools/call:echo 12 1.5\nThresholds: 1 of 1 passed\n  FAIL  p99<5ms (actual 9.1 ms)\n"
	shown := "mcpbench  http://127.0.0.1:8080/mcp  ·  protocol 2025-11-25\nVerdict: OK — no errors\n…\nop count p99\ntools/call:echo 2000 11.66\nThresholds: 1 of 1 passed\n  PASS  p99<5ms (actual 1.2 ms)\n"
	if l, ok := shownOutputMatches(shown, got); !ok {
		t.Errorf("shown output should match (numbers, addresses, verdict words masked; warnings optional): %q not found", l)
	}
	for _, bad := range []string{
		"op count p99 p99.9\n",                     // a column the run does not print
		"tools/call:echo 1 1\nop count p99\n",      // out of order
		"tools/call:slow 2000 11.66\n",             // another op
		"Errors: 0\n",                              // a line the run does not print
		"Thresholds: 1 of 1 passed\nVerdict: OK\n", // out of order
	} {
		if _, ok := shownOutputMatches(bad, got); ok {
			t.Errorf("shown %q should not match the run's output", bad)
		}
	}
}

var (
	reMDLink   = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	reHeading  = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	reNotSlug  = regexp.MustCompile(`[^\p{L}\p{M}\p{N}\p{Pc} -]`)
	reCodeSpan = regexp.MustCompile("`[^`\n]*`")
)

// slug is the anchor GitHub gives a heading: lower case, punctuation but
// hyphens and underscores dropped, spaces made hyphens.
func slug(heading string) string {
	s := strings.ToLower(strings.TrimSpace(heading))
	s = reNotSlug.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '-'
		}
		return r
	}, s)
}

// anchors returns the anchors of a markdown text's headings (a repeated
// heading gets -1, -2 … as on GitHub).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	text = reFence.ReplaceAllString(text, "") // a "# comment" in a code block is no heading
	for _, m := range reHeading.FindAllStringSubmatch(text, -1) {
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every relative link of the README and the docs resolves: the file (or
// directory) exists, and an #anchor names a heading of the page it points
// to. Links to the web are not followed.
func TestDocsLinks(t *testing.T) {
	files := docFiles(t)
	byPath := map[string]string{}
	for _, f := range files {
		byPath[f.rel] = f.text
	}
	n := 0
	for _, f := range files {
		text := reFence.ReplaceAllString(f.text, "") // links in code blocks are examples
		text = reCodeSpan.ReplaceAllString(text, "")
		for _, m := range reMDLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			path := f.rel
			if file != "" {
				path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f.rel), file)))
				if strings.HasPrefix(path, "../") {
					t.Errorf("%s: link %q leaves the repository", f.rel, target)
					continue
				}
				if _, err := os.Stat(filepath.Join("../..", path)); err != nil {
					t.Errorf("%s: link %q: %s does not exist", f.rel, target, path)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			page, ok := byPath[path]
			if !ok {
				continue // an anchor into a file that is not a doc page (a line of code): not checked
			}
			if !anchors(page)[anchor] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", f.rel, target, path, anchor)
			}
		}
	}
	if n < 50 {
		t.Errorf("found %d relative links in the docs: the parser missed some", n)
	}
}

// The Dockerfile builds the binary as .ci/run does (go mod download, then
// go build with -buildvcs=false), statically (CGO_ENABLED=0), and runs it
// as a non-root user with mcpbench as the entry point. docker build itself
// runs where a Docker daemon is (scripts/check-docker.sh).
func TestDocsDockerfile(t *testing.T) {
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go mod download", "-buildvcs=false"} {
		if !strings.Contains(string(ci), want) {
			t.Errorf(".ci/run no longer has %q: make the Dockerfile build as it does", want)
		}
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %q (.ci/run's build)", want)
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "go build", "./cmd/mcpbench", "USER nonroot", `ENTRYPOINT ["mcpbench"]`, "/usr/local/bin/mcpbench"} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	if strings.Count(df, "\nFROM ") < 2 {
		t.Errorf("the Dockerfile is not multi-stage (want a build stage and a run stage)")
	}
}

// The error-class table of docs/reference/metrics.md names every class the
// driver counts, and no other.
func TestDocsErrorClasses(t *testing.T) {
	sec := readmeSection(t, docText(t, "docs/reference/metrics.md"), "## Error classes")
	listed := map[string]bool{}
	for _, r := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(sec, -1) {
		listed[r[1]] = true
	}
	for c := outcome.Class(1); c < outcome.NumClasses; c++ {
		if !listed[c.String()] {
			t.Errorf("docs/reference/metrics.md's Error classes lack %s", c)
		}
		delete(listed, c.String())
	}
	for name := range listed {
		t.Errorf("docs/reference/metrics.md lists the error class %s: the driver has no such class", name)
	}
}
