package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const archDoc = "docs/ARCHITECTURE.md"

// docLayers reads the package map of docs/ARCHITECTURE.md: the first
// markdown table under the heading "## Packages", one row per package:
// | `pkg` | `imp`, `imp` (or — for none, `*` for anything) | job |.
func docLayers(text string) (map[string][]string, []string) {
	var errs []string
	lines := strings.Split(text, "\n")
	i := slices.Index(lines, "## Packages")
	if i < 0 {
		return nil, []string{archDoc + ` has no "## Packages" section`}
	}
	out := map[string][]string{}
	inTable := false
	for n, l := range lines[i+1:] {
		if strings.HasPrefix(l, "#") {
			break
		}
		if !strings.HasPrefix(l, "|") {
			if inTable {
				break // the table ended
			}
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if !inTable {
			inTable = true // the header row
			if len(cells) < 2 || strings.TrimSpace(cells[0]) != "package" || strings.TrimSpace(cells[1]) != "may import" {
				return nil, []string{archDoc + `: the "## Packages" table's header is not | package | may import | job |`}
			}
			continue
		}
		if strings.Trim(strings.TrimSpace(cells[0]), "-") == "" {
			continue // the delimiter row
		}
		line := i + 2 + n
		if len(cells) < 3 {
			errs = append(errs, archDoc+":"+strconv.Itoa(line)+": a row without package, imports and job")
			continue
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := out[pkg]; dup {
			errs = append(errs, archDoc+":"+strconv.Itoa(line)+": "+pkg+" listed twice")
		}
		imps := []string{}
		if c := strings.TrimSpace(cells[1]); c != "—" {
			for _, f := range strings.Split(c, ",") {
				f = strings.TrimSpace(f)
				if strings.HasPrefix(f, "`*`") {
					f = "*"
				}
				imps = append(imps, strings.Trim(f, "`"))
			}
		}
		out[pkg] = imps
	}
	return out, errs
}

// disagreements lists where the doc's map and the layers table differ,
// both ways: a package in one only, or different imports.
func disagreements(doc, table map[string][]string) []string {
	var out []string
	for p, imps := range table {
		d, ok := doc[p]
		if !ok {
			out = append(out, "layers lists "+p+"; "+archDoc+" does not")
			continue
		}
		a, b := slices.Clone(imps), slices.Clone(d)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			out = append(out, p+": layers allows ["+strings.Join(a, ", ")+"], "+archDoc+" says ["+strings.Join(b, ", ")+"]")
		}
	}
	for p := range doc {
		if _, ok := table[p]; !ok {
			out = append(out, archDoc+" lists "+p+"; layers does not")
		}
	}
	sort.Strings(out)
	return out
}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(archDoc)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docs/ARCHITECTURE.md states the layers table: the same packages with
// the same allowed imports.
func TestArchitectureDocAgrees(t *testing.T) {
	doc, errs := docLayers(readDoc(t))
	for _, e := range errs {
		t.Error(e)
	}
	if len(doc) < 10 {
		t.Fatalf("%s lists %d packages: the table was not found", archDoc, len(doc))
	}
	for _, d := range disagreements(doc, layers) {
		t.Error(d)
	}
}

// The comparison catches a planted disagreement of each kind, in both
// directions.
func TestArchitectureDocDisagreementsCaught(t *testing.T) {
	doc, _ := docLayers(readDoc(t))
	table := map[string][]string{}
	for p, a := range layers {
		table[p] = slices.Clone(a)
	}
	table["driver"] = slices.DeleteFunc(table["driver"], func(s string) bool { return s == "internal/sse" }) // the table allows less
	table["check"] = append(table["check"], "internal/units")                                                // the table allows more
	delete(table, "internal/textfmt")                                                                        // the doc lists a package the table lacks
	table["nosuch"] = nil                                                                                    // the table lists one the doc lacks
	got := disagreements(doc, table)
	want := []string{
		"check: layers allows [driver, internal/units], " + archDoc + " says [driver]",
		archDoc + " lists internal/textfmt; layers does not",
		"driver: layers allows [httpclient, internal/jsonrpc, internal/netutil, internal/secret, internal/setting, internal/units], " + archDoc + " says [httpclient, internal/jsonrpc, internal/netutil, internal/secret, internal/setting, internal/sse, internal/units]",
		"layers lists nosuch; " + archDoc + " does not",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("disagreements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codePath = regexp.MustCompile("`([A-Za-z0-9_.*/-]+/[A-Za-z0-9_.*-]+\\.(?:go|md|sh|yaml|yml|json))`")
)

// Every relative link of docs/ARCHITECTURE.md resolves in the repository:
// markdown links (relative to docs/) and file paths in code spans
// (relative to the module root, or to docs/ when they start with ../ or
// ./; a * is a glob).
func TestArchitectureDocLinksResolve(t *testing.T) {
	text := readDoc(t)
	root := filepath.Join("..", "..")
	docDir := filepath.Join(root, "docs")
	for _, bad := range brokenLinks(text, root, docDir) {
		t.Errorf("%s links %s, which is not in the repository", archDoc, bad)
	}
}

func brokenLinks(text, root, docDir string) []string {
	var bad []string
	exists := func(p string) bool {
		m, err := filepath.Glob(p)
		return err == nil && len(m) > 0
	}
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		l := m[1]
		if strings.Contains(l, "://") || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "mailto:") {
			continue
		}
		l, _, _ = strings.Cut(l, "#")
		if !exists(filepath.Join(docDir, filepath.FromSlash(l))) {
			bad = append(bad, l)
		}
	}
	for _, m := range codePath.FindAllStringSubmatch(text, -1) {
		l := m[1]
		base := root
		if strings.HasPrefix(l, "../") || strings.HasPrefix(l, "./") {
			base = docDir
		}
		if !exists(filepath.Join(base, filepath.FromSlash(l))) {
			bad = append(bad, l)
		}
	}
	return bad
}

// The link check catches a link to a file that is not there (as the
// page's old `../shared/DESIGN.md`), in a code span and as a link.
func TestArchitectureDocBrokenLinkCaught(t *testing.T) {
	root := filepath.Join("..", "..")
	text := "see `../shared/DESIGN.md`, [x](../nosuch.md), [ok](../README.md), `driver/session.go`, `httpclient/h1*.go`"
	got := brokenLinks(text, root, filepath.Join(root, "docs"))
	if want := []string{"../nosuch.md", "../shared/DESIGN.md"}; !slices.Equal(got, want) {
		t.Fatalf("broken: %q, want %q", got, want)
	}
}
