package archtest

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/mcpbench/mcpbench/"

// layers lists every package of the module (its path under the module) and
// the module packages its non-test files may import: the one package map.
// A package missing here fails the test: a new package says where it sits,
// here and in docs/ARCHITECTURE.md's "## Packages" table (doc_test.go
// checks the two agree). Packages under
// scripts/ (standalone helper programs) are not checked.
var layers = map[string][]string{
	// Leaves: values, formats and codecs that know nothing of MCP.
	"internal/units":    {},
	"internal/secret":   {},
	"internal/textfmt":  {},
	"internal/stats":    {},
	"internal/kube":     {},
	"internal/jsonrpc":  {},
	"internal/netutil":  {},
	"internal/testenv":  {}, // which tests run by default (MCPBENCH_LONG: the long suites); tests only
	"internal/setting":  {}, // the names of library settings in error texts
	"internal/sse":      {"internal/setting", "internal/units"},
	"profiles":          {},
	"refserver":         {"internal/netutil"}, // its connections' jittered keep-alive
	"internal/mcptest":  {},
	"internal/archtest": {},
	// The outcome vocabulary (error Class, replay Verdict, Resume, NetStats):
	// driver and httpclient re-export it; readers of results use it.
	"outcome": {},

	// The HTTP client under the session: HTTP/1.1, HTTP/2, dialer, OAuth,
	// and the interfaces chaos and driver meet through.
	"httpclient": {"internal/netutil", "internal/secret", "internal/setting", "outcome"},
	// Faults below the session: chaos wraps an HTTP transport.
	"chaos": {"httpclient", "internal/units"},
	// The MCP session over Streamable HTTP.
	"driver": {"httpclient", "internal/jsonrpc", "internal/netutil", "internal/sse", "internal/secret", "internal/setting", "internal/units", "outcome"},

	// Checks on an op's results (driver.Op.Inspect).
	"check": {"driver"},

	// The fault-injecting proxy between any MCP client and any server.
	"proxy": {"internal/jsonrpc", "internal/netutil", "internal/sse", "internal/units"},

	// The conformance probe: raw requests against one server.
	"probe": {"driver", "internal/jsonrpc", "internal/netutil", "internal/sse"},

	// What a results directory is: summary types, intervals, hlog, sinks,
	// read, merge (never the driver).
	"results":          {"outcome", "internal/textfmt"},
	"internal/fixture": {"results"},
	// Recording (never judging): the recorder over driver results.
	"metrics": {"driver", "outcome", "results", "internal/textfmt"},
	// Judging recorded results.
	"verdict": {"outcome", "results", "internal/setting", "internal/stats", "internal/textfmt"},
	// Argument templating ({{...}} in an op's arguments, data files).
	"argtmpl": {"driver"},
	// The profile language (YAML, defaults, validation, overrides, ${NAME}).
	"profile": {"argtmpl", "chaos", "check", "driver", "httpclient", "results", "verdict", "profiles", "internal/secret", "internal/units"},
	// The compile (profile → plan) and the engine.
	"workload": {"argtmpl", "chaos", "check", "driver", "httpclient", "metrics", "results", "profile", "verdict", "internal/jsonrpc", "internal/netutil", "internal/textfmt"},
	// Orchestrating runs.
	"sweep": {"profile", "workload", "results", "report", "internal/setting", "internal/stats", "internal/textfmt"}, // report: the sweep's report model (its text prints it)
	"soak":  {"workload", "results", "outcome", "internal/setting", "internal/stats", "internal/textfmt"},
	// A test as the commands run it: prepared once, run in this process,
	// as N processes or one segment; the k8s-job manifests; the exit codes.
	"launch": {"driver", "httpclient", "internal/kube", "internal/netutil", "internal/secret", "internal/setting", "internal/sse", "live", "plots", "probe", "profile", "profiles", "proxy", "refserver", "report", "results", "soak", "sweep", "verdict", "workload"},
	// Outputs.
	"live":   {"results", "outcome", "plots", "internal/netutil", "internal/secret", "internal/setting", "internal/textfmt"},
	"report": {"results", "outcome", "verdict", "internal/textfmt"},
	"plots":  {"results", "outcome", "report", "internal/stats", "internal/secret"},
	// The command: flags → launch.Spec → launch → exit; never the engine,
	// the recorder or the session (workload, metrics, driver): launch runs
	// them. profile: the language the flags set.
	"cmd/mcpbench": {"chaos", "internal/netutil", "internal/secret", "internal/setting", "internal/units", "launch", "live", "probe", "profile", "profiles", "proxy", "refserver", "report", "verdict"},
}

// modulePackages maps each package directory of the module (relative path,
// "/"-separated) to the module packages its non-test files import.
func modulePackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if rel != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own (internal/kube/apicheck)
			}
		}
		if rel == "scripts" || strings.HasPrefix(rel, "scripts/") {
			return nil
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			t.Fatalf("%s: %v", rel, err)
		}
		var imps []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				imps = append(imps, strings.TrimPrefix(imp, module))
			}
		}
		out[rel] = imps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// violations lists what breaks the table: packages missing from it,
// imports it does not allow, and entries naming no package.
func violations(pkgs, table map[string][]string) []string {
	var out []string
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		allowed, ok := table[p]
		if !ok {
			out = append(out, "package "+p+" is not in the layer table: add it with the packages it may import (docs/ARCHITECTURE.md)")
			continue
		}
		if slices.Contains(allowed, "*") {
			continue
		}
		for _, imp := range pkgs[p] {
			if !slices.Contains(allowed, imp) {
				out = append(out, p+" imports "+imp+": not allowed by the layer table (docs/ARCHITECTURE.md)")
			}
		}
	}
	var extra []string
	for p := range table {
		if _, ok := pkgs[p]; !ok {
			extra = append(extra, "layer table names "+p+", which is not a package of the module")
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func TestImportRules(t *testing.T) {
	pkgs := modulePackages(t, filepath.Join("..", ".."))
	if len(pkgs) < 10 {
		t.Fatalf("found %d packages: the walk is broken", len(pkgs))
	}
	for _, v := range violations(pkgs, layers) {
		t.Error(v)
	}
}

// The check catches each kind of break on the real packages: an import
// the table does not allow, a package it does not list, an entry for no
// package.
func TestImportRulesCatchViolations(t *testing.T) {
	pkgs := modulePackages(t, filepath.Join("..", ".."))
	table := map[string][]string{}
	for p, a := range layers {
		table[p] = slices.DeleteFunc(slices.Clone(a), func(s string) bool { return s == "internal/sse" && p == "driver" })
	}
	delete(table, "internal/textfmt")
	table["nosuch"] = nil
	got := violations(pkgs, table)
	want := []string{
		"driver imports internal/sse: not allowed by the layer table (docs/ARCHITECTURE.md)",
		"package internal/textfmt is not in the layer table: add it with the packages it may import (docs/ARCHITECTURE.md)",
		"layer table names nosuch, which is not a package of the module",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
