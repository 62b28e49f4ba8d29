package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/profiles"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The docs and --help say the same: every flag the README or a docs page
// names exists (on the command it is given to, in a shell example), every
// flag of every command is in the flag tables of docs/reference/flags.md,
// the table of docs/reference/commands.md lists every command, and the
// table of docs/reference/profiles.md every built-in profile. (The
// generated pages of docs/reference/cli are checked apart:
// TestDocsCLIReference.)

// readmeText returns the README.
func readmeText(t *testing.T) string {
	t.Helper()
	return docText(t, "README.md")
}

// docText returns a file of the documentation by its path from the
// repository root ("docs/reference/flags.md").
func docText(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const (
	flagsDoc    = "docs/reference/flags.md"
	commandsDoc = "docs/reference/commands.md"
	profilesDoc = "docs/reference/profiles.md"
)

// commands returns every command of the tree but the root, help and
// hidden ones, by their path without "mcpbench " ("run", "k8s-job").
func commands(root *cobra.Command) map[string]*cobra.Command {
	root.InitDefaultCompletionCmd() // cobra adds it when the command runs
	out := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			if s.Hidden || s.Name() == "help" {
				continue
			}
			out[strings.TrimPrefix(s.CommandPath(), root.Name()+" ")] = s
			walk(s)
		}
	}
	walk(root)
	return out
}

// visibleFlags calls fn for each flag of c that --help shows (help itself
// left out).
func visibleFlags(c *cobra.Command, fn func(*pflag.Flag)) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Deprecated == "" && f.Name != "help" {
			fn(f)
		}
	})
}

var (
	reFlag  = regexp.MustCompile(`(^|[^\w-])--([a-z][a-z0-9-]*[a-z0-9])`)
	reFence = regexp.MustCompile("(?s)```.*?```")
)

// otherTools are flags the README's prose names that are another tool's.
var otherTools = map[string]bool{
	"local-ips":      true, // k6's, next to --source-addr
	"from-literal":   true, // kubectl's (create secret), in troubleshooting's remedy
	"flags-from-env": true, // not a flag: the marker argument of --processes' children (troubleshooting)
}

// readmeFlags returns the flags the README names: in its prose and tables
// (code blocks left out: they hold kubectl's and go's flags too) and in
// its shell examples' mcpbench commands.
func readmeFlags(readme string) map[string]bool {
	named := map[string]bool{}
	for _, m := range reFlag.FindAllStringSubmatch(reFence.ReplaceAllString(readme, ""), -1) {
		if !otherTools[m[2]] {
			named[m[2]] = true
		}
	}
	for _, rc := range readmeCommands(readme) {
		for _, a := range rc.args {
			if strings.HasPrefix(a, "--") {
				name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				named[name] = true
			}
		}
	}
	return named
}

func TestReadmeFlagsExist(t *testing.T) {
	cmds := commands(newRootCmd())
	all := map[string]bool{"help": true}
	for _, c := range cmds {
		c.Flags().VisitAll(func(f *pflag.Flag) { all[f.Name] = true })
	}
	for _, f := range docFiles(t) {
		if strings.HasPrefix(f.rel, "docs/reference/cli/") {
			continue // generated from the commands (TestDocsCLIReference); cobra's completion text names the shells' flags
		}
		// A flag the README or a page names anywhere exists on some command.
		for name := range readmeFlags(f.text) {
			if !all[name] {
				t.Errorf("%s names --%s: no command has it", f.rel, name)
			}
		}
		// A flag given to a command in a shell example is that command's.
		for _, rc := range readmeCommands(f.text) {
			if len(rc.args) == 0 {
				continue
			}
			c, ok := cmds[rc.args[0]]
			if !ok {
				t.Errorf("%s runs mcpbench %s: no such command", f.rel, strings.Join(rc.args, " "))
				continue
			}
			for _, a := range rc.args[1:] {
				if !strings.HasPrefix(a, "--") {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if c.Flags().Lookup(name) == nil {
					t.Errorf("%s: mcpbench %s: %s has no --%s", f.rel, strings.Join(rc.args, " "), c.Name(), name)
				}
			}
		}
	}
}

// Each flag --help shows is in the flag tables of docs/reference/flags.md:
// run's (which sweep, soak and k8s-job share) in "Flags of `run`", every
// other command's in its rows of "Flags of the other commands".
func TestReadmeDocumentsEveryFlag(t *testing.T) {
	readme := docText(t, flagsDoc)
	runDoc := readmeFlags(readmeSection(t, readme, "## Flags of `run` (shared by `sweep` and `soak`)"))
	otherDoc := map[string]map[string]bool{}                                       // command → the flags of its rows
	reRow := regexp.MustCompile("^\\| `([a-z0-9-]+)` \\|((?:[^|\\\\]|\\\\.)*)\\|") // | `cmd` | flags (\| escaped) |
	for _, line := range strings.Split(readmeSection(t, readme, "## Flags of the other commands"), "\n") {
		if m := reRow.FindStringSubmatch(line); m != nil {
			if otherDoc[m[1]] == nil {
				otherDoc[m[1]] = map[string]bool{}
			}
			for name := range readmeFlags(m[2]) {
				otherDoc[m[1]][name] = true
			}
		}
	}
	runFlags := map[string]bool{}
	visibleFlags(newRunCmd(), func(f *pflag.Flag) { runFlags[f.Name] = true })
	var missing []string
	for path, c := range commands(newRootCmd()) {
		if strings.HasPrefix(path, "completion") {
			continue // cobra's own shell scripts: --help documents them
		}
		visibleFlags(c, func(f *pflag.Flag) {
			switch {
			case path == "run" && !runDoc[f.Name]:
				missing = append(missing, "run --"+f.Name+" (in Flags of `run`)")
			case path != "run" && runFlags[f.Name] && (path == "sweep" || path == "soak" || path == "k8s-job"):
				// shared with run: documented there
			case path != "run" && !otherDoc[path][f.Name]:
				missing = append(missing, path+" --"+f.Name+" (in Flags of the other commands)")
			}
		})
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("flags --help shows that the flag tables of "+flagsDoc+" lack (%d):\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}

// readmeSection returns a doc page from heading (a whole line) to the
// next level-2 heading.
func readmeSection(t *testing.T, readme, heading string) string {
	t.Helper()
	readme = "\n" + readme // a heading on the first line
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("the page has no %q", heading)
	}
	rest := readme[i+len(heading)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// readmeTable returns the first cell of each row of the table that
// follows heading (a line of a doc page), backquotes dropped.
func readmeTable(t *testing.T, readme, heading string) []string {
	t.Helper()
	readme = "\n" + readme // a heading on the first line
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("the page has no %q", heading)
	}
	var rows []string
	inTable := false
	for _, line := range strings.Split(readme[i+len(heading)+2:], "\n") {
		switch {
		case strings.HasPrefix(line, "|"):
			inTable = true
			cell := strings.TrimSpace(strings.Split(line, "|")[1])
			if cell != "" && !strings.HasPrefix(cell, "---") {
				rows = append(rows, cell)
			}
		case inTable:
			return rows[1:] // the header row
		}
	}
	return rows[1:]
}

func TestReadmeCommandsTable(t *testing.T) {
	rows := readmeTable(t, docText(t, commandsDoc), "# Commands")
	listed := map[string]bool{}
	reCmd := regexp.MustCompile("`mcpbench ([a-z0-9-]+)")
	for _, r := range rows {
		for _, m := range reCmd.FindAllStringSubmatch(r, -1) {
			listed[m[1]] = true
		}
	}
	cmds := commands(newRootCmd())
	for path := range cmds {
		if !strings.Contains(path, " ") && !listed[path] {
			t.Errorf("the Commands table of "+commandsDoc+" lacks mcpbench %s", path)
		}
	}
	for name := range listed {
		if _, ok := cmds[name]; !ok {
			t.Errorf("the Commands table of "+commandsDoc+" lists mcpbench %s: no such command", name)
		}
	}
	if len(listed) != len(cmds)-countSub(cmds) {
		t.Errorf("the Commands table lists %d commands, mcpbench has %d", len(listed), len(cmds)-countSub(cmds))
	}
}

// countSub counts the commands below the first level (completion's shells).
func countSub(cmds map[string]*cobra.Command) int {
	n := 0
	for path := range cmds {
		if strings.Contains(path, " ") {
			n++
		}
	}
	return n
}

func TestReadmeProfilesTable(t *testing.T) {
	rows := readmeTable(t, docText(t, profilesDoc), "# Profiles: the built-ins and the YAML schema")
	var listed []string
	for _, r := range rows {
		listed = append(listed, strings.Trim(r, "`"))
	}
	sort.Strings(listed)
	want := profiles.Names()
	if !slices.Equal(listed, want) {
		t.Errorf("the Profiles table of "+profilesDoc+" lists %d profiles %v; the built-ins are %d: %v", len(listed), listed, len(want), want)
	}
}
