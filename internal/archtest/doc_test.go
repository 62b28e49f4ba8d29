package archtest

import (
	"flag"
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

// docRow is one row of the "## Packages" table.
type docRow struct {
	line int // index in the page's lines
	pkg  string
	imps []string
	job  string
}

// docTable reads the package map of docs/ARCHITECTURE.md: the first
// markdown table under the heading "## Packages", one row per package:
// | `pkg` | `imp`, `imp` (or — for none, `*` for anything) | job |.
// end is the index of the line after the table.
func docTable(lines []string) (rows []docRow, end int, errs []string) {
	i := slices.Index(lines, "## Packages")
	if i < 0 {
		return nil, 0, []string{archDoc + ` has no "## Packages" section`}
	}
	inTable := false
	end = len(lines)
	for n := i + 1; n < len(lines); n++ {
		l := lines[n]
		if strings.HasPrefix(l, "#") {
			end = n
			break
		}
		if !strings.HasPrefix(l, "|") {
			if inTable {
				end = n
				break // the table ended
			}
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if !inTable {
			inTable = true // the header row
			if len(cells) < 2 || strings.TrimSpace(cells[0]) != "package" || strings.TrimSpace(cells[1]) != "may import" {
				return nil, 0, []string{archDoc + `: the "## Packages" table's header is not | package | may import | job |`}
			}
			continue
		}
		if strings.Trim(strings.TrimSpace(cells[0]), "-") == "" {
			continue // the delimiter row
		}
		if len(cells) < 3 {
			errs = append(errs, archDoc+":"+strconv.Itoa(n+1)+": a row without package, imports and job")
			continue
		}
		r := docRow{line: n, pkg: strings.Trim(strings.TrimSpace(cells[0]), "`"), imps: []string{}, job: strings.TrimSpace(strings.Join(cells[2:], "|"))}
		if c := strings.TrimSpace(cells[1]); c != "—" {
			for _, f := range strings.Split(c, ",") {
				f = strings.TrimSpace(f)
				if strings.HasPrefix(f, "`*`") {
					f = "*"
				}
				r.imps = append(r.imps, strings.Trim(f, "`"))
			}
		}
		rows = append(rows, r)
	}
	return rows, end, errs
}

// docLayers is the doc's table as a layers map, and what is wrong with it
// (a malformed row, a package twice, a job not written).
func docLayers(text string) (map[string][]string, []string) {
	rows, _, errs := docTable(strings.Split(text, "\n"))
	out := map[string][]string{}
	for _, r := range rows {
		if _, dup := out[r.pkg]; dup {
			errs = append(errs, archDoc+":"+strconv.Itoa(r.line+1)+": "+r.pkg+" listed twice")
		}
		if r.job == "" || r.job == jobToWrite {
			errs = append(errs, archDoc+":"+strconv.Itoa(r.line+1)+": "+r.pkg+": say its job")
		}
		out[r.pkg] = r.imps
	}
	return out, errs
}

// jobToWrite is the job of a row -update-doc added.
const jobToWrite = "(its job: write it)"

var updateDoc = flag.Bool("update-doc", false, "rewrite the imports of docs/ARCHITECTURE.md's Packages table from layers (rows added for new packages, their job to write; rows of gone packages removed)")

// importsCell is how the table says the imports imps.
func importsCell(imps []string) string {
	switch {
	case len(imps) == 0:
		return "—"
	case slices.Contains(imps, "*"):
		return "`*` (anything)"
	}
	s := slices.Clone(imps)
	slices.Sort(s)
	return "`" + strings.Join(s, "`, `") + "`"
}

// rewriteDoc is text with its Packages table's imports set from table:
// a row per package of table, in the page's order, new ones at the end.
func rewriteDoc(text string, table map[string][]string) string {
	lines := strings.Split(text, "\n")
	rows, end, _ := docTable(lines)
	if len(rows) == 0 {
		return text
	}
	seen := map[string]bool{}
	drop := map[int]bool{}
	for _, r := range rows {
		imps, ok := table[r.pkg]
		if !ok || seen[r.pkg] {
			drop[r.line] = true
			continue
		}
		seen[r.pkg] = true
		lines[r.line] = "| `" + r.pkg + "` | " + importsCell(imps) + " | " + r.job + " |"
	}
	var add []string
	for p := range table {
		if !seen[p] {
			add = append(add, "| `"+p+"` | "+importsCell(table[p])+" | "+jobToWrite+" |")
		}
	}
	sort.Strings(add)
	var out []string
	for n, l := range lines {
		if n == end {
			out = append(out, add...)
		}
		if !drop[n] {
			out = append(out, l)
		}
	}
	if end == len(lines) {
		out = append(out, add...)
	}
	return strings.Join(out, "\n")
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
//
// go test ./internal/archtest -run TestArchitectureDocAgrees -update-doc
// rewrites the table's imports from layers first (rows for new packages
// are added with a job to write, which fails until it is written).
func TestArchitectureDocAgrees(t *testing.T) {
	text := readDoc(t)
	if *updateDoc {
		text = rewriteDoc(text, layers)
		if err := os.WriteFile(filepath.Join("..", "..", filepath.FromSlash(archDoc)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc, errs := docLayers(text)
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

// sorted returns a sorted copy of a.
func sorted(a []string) []string { a = slices.Clone(a); slices.Sort(a); return a }

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
		"driver: layers allows [" + strings.Join(sorted(table["driver"]), ", ") + "], " + archDoc + " says [" + strings.Join(sorted(layers["driver"]), ", ") + "]",
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

// -update-doc's rewrite makes the table agree with layers: a changed
// import list is rewritten, a gone package's row dropped, a new package
// added with its job to write (which docLayers reports).
func TestArchitectureDocRewrite(t *testing.T) {
	table := map[string][]string{}
	for p, a := range layers {
		table[p] = slices.Clone(a)
	}
	table["check"] = append(table["check"], "internal/units")
	delete(table, "internal/textfmt")
	table["nosuch"] = []string{"driver"}
	doc, errs := docLayers(rewriteDoc(readDoc(t), table))
	if d := disagreements(doc, table); len(d) != 0 {
		t.Errorf("after the rewrite: %q", d)
	}
	if len(errs) != 1 || !strings.HasSuffix(errs[0], ": nosuch: say its job") {
		t.Errorf("errors %q, want one asking for nosuch's job", errs)
	}
	if got := rewriteDoc(readDoc(t), layers); got != readDoc(t) {
		t.Errorf("the rewrite of an agreeing page changed it")
	}
}
