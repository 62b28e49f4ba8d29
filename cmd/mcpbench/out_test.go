package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// countingServer is a loopback server that counts the requests it gets
// (and answers each with a 500): a command refused before its run sends
// it none.
func countingServer(t *testing.T) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "counting only", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", requests
}

// closedURL is a loopback URL nothing listens on: a run against it never
// starts.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	return url
}

// dirNames lists a directory's entries ("plots/" for a directory).
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	return names
}

// oldResults makes dir look like an earlier run's results, with the
// plots and report of an earlier "mcpbench plot".
func oldResults(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"run.json", "summary.json", "report.html", "plots/old-chart.png"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(`{"tool": "mcpbench"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Every command that writes a results directory refuses a non-empty --out
// before its run: exit 2, the message says what to do, the server gets no
// request and the old results are as they were.
func TestOutNonEmptyRefusedBeforeLoad(t *testing.T) {
	t.Setenv("MCPBENCH_MAIN", "1") // were the refusal lost, --processes would start this binary as mcpbench, not as the tests
	url, requests := countingServer(t)
	for _, args := range [][]string{
		{"run"},
		{"run", "--processes", "2"},
		{"soak", "--duration", "2s"},
		{"soak", "--duration", "2s", "--processes", "2"},
		{"sweep", "--profile", "capacity-sweep", "--steps", "2", "--step", "1s"},
		{"sweep", "--profile", "capacity-sweep", "--steps", "2", "--step", "1s", "--processes", "2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r1")
			oldResults(t, dir)
			before := dirNames(t, dir)
			_, errs, code := run(t, append(args, "--url", url, "--out", dir, "-q")...)
			if code != exitUsage || !strings.Contains(errs, "--out "+dir+" exists and is not empty") || !strings.Contains(errs, "use --overwrite to replace it, or another --out") {
				t.Fatalf("exit %d, stderr %q; want 2 and the refusal", code, errs)
			}
			if n := requests.Load(); n != 0 {
				t.Fatalf("the server got %d requests before the refusal", n)
			}
			if after := dirNames(t, dir); !slices.Equal(before, after) {
				t.Fatalf("the old results changed: %v, then %v", before, after)
			}
		})
	}
	// merge -o: refused before the inputs are read (they do not exist).
	dir := filepath.Join(t.TempDir(), "merged")
	oldResults(t, dir)
	_, errs, code := run(t, "merge", "no-such-a", "no-such-b", "--out", dir)
	if code != exitUsage || !strings.Contains(errs, "--out "+dir+" exists and is not empty") {
		t.Fatalf("merge: exit %d, stderr %q", code, errs)
	}
}

// --overwrite empties the old results first: no stale plots or report
// remain beside the new run's files. It empties only a results
// directory, and merge refuses to empty one that holds its inputs.
func TestOutOverwrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r1")
	oldResults(t, dir)
	_, errs, code := run(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir, "--overwrite")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	names := dirNames(t, dir)
	if slices.Contains(names, "plots/") || slices.Contains(names, "report.html") || !slices.Contains(names, "intervals.csv") {
		t.Fatalf("after --overwrite: %v; want the new run's files alone", names)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "summary.json")); len(data) < 100 {
		t.Fatalf("summary.json is the old one: %q", data)
	}

	other := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "main.go"), []byte("package main"), 0o644)
	_, errs, code = run(t, "run", "--out", other, "--overwrite", "-q")
	if code != exitUsage || !strings.Contains(errs, "holds files that are not mcpbench results (main.go)") {
		t.Fatalf("--overwrite on a non-results directory: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(other, "main.go")); err != nil {
		t.Fatalf("--overwrite removed a file that is not results: %v", err)
	}

	parent := filepath.Join(t.TempDir(), "all")
	oldResults(t, parent)
	seg := filepath.Join(parent, "seg0")
	os.MkdirAll(seg, 0o755)
	_, errs, code = run(t, "merge", seg, "--out", parent, "--overwrite")
	if code != exitUsage || !strings.Contains(errs, "--overwrite would remove it") {
		t.Fatalf("merge --overwrite over its input: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(seg); err != nil {
		t.Fatalf("merge removed its input: %v", err)
	}
}

// --overwrite replaces only a directory mcpbench wrote, and only when it
// holds nothing mcpbench does not write (issue 33 item 1): a directory
// with a summary.json of someone else's and another file, or a results
// directory with a file added, is refused by every command that takes
// --out (exit 2, before any request; nothing removed); a directory a run
// wrote is replaced.
func TestOverwriteOnlyOwnResults(t *testing.T) {
	t.Setenv("MCPBENCH_MAIN", "1") // were the refusal lost, --processes would start this binary as mcpbench
	url, requests := countingServer(t)
	foreign := func(t *testing.T, dir string) {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "summary.json"), []byte("{}\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "keep"), []byte("x\n"), 0o644)
	}
	mixed := func(t *testing.T, dir string) {
		oldResults(t, dir)
		os.WriteFile(filepath.Join(dir, "keep"), []byte("x\n"), 0o644)
	}
	for _, args := range [][]string{
		{"run"},
		{"run", "--processes", "2"},
		{"soak", "--duration", "2s"},
		{"soak", "--duration", "2s", "--processes", "2"},
		{"sweep", "--profile", "capacity-sweep", "--steps", "2", "--step", "1s"},
		{"sweep", "--profile", "capacity-sweep", "--steps", "2", "--step", "1s", "--processes", "2"},
	} {
		for _, c := range []struct {
			name string
			make func(*testing.T, string)
			want string
		}{
			{"foreign", foreign, "holds files that are not mcpbench results (keep, summary.json)"},
			{"results-and-a-file", mixed, "holds files mcpbench does not write (keep)"},
		} {
			t.Run(strings.Join(args, " ")+"/"+c.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "d")
				c.make(t, dir)
				before := dirNames(t, dir)
				_, errs, code := run(t, append(args, "--url", url, "--out", dir, "--overwrite", "-q")...)
				if code != exitUsage || !strings.Contains(errs, c.want) {
					t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errs, c.want)
				}
				if n := requests.Load(); n != 0 {
					t.Fatalf("the server got %d requests before the refusal", n)
				}
				if after := dirNames(t, dir); !slices.Equal(before, after) {
					t.Fatalf("--overwrite changed the directory: %v, then %v", before, after)
				}
				if b, err := os.ReadFile(filepath.Join(dir, "keep")); string(b) != "x\n" {
					t.Fatalf("keep: %q, %v", b, err)
				}
			})
		}
	}
	t.Run("merge", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d")
		foreign(t, dir)
		_, errs, code := run(t, "merge", "no-such-a", "no-such-b", "--out", dir, "--overwrite")
		if code != exitUsage || !strings.Contains(errs, "holds files that are not mcpbench results") {
			t.Fatalf("merge: exit %d, stderr %q", code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
			t.Fatal(err)
		}
	})
	// A directory a run wrote (and plot drew in) is replaced: the second
	// run's files, none of the first's left over.
	t.Run("own", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d")
		for i := range 2 {
			_, errs, code := run(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir, "--overwrite")
			if code != exitOK {
				t.Fatalf("run %d: exit %d: %s", i, code, errs)
			}
			if i == 0 {
				os.MkdirAll(filepath.Join(dir, "plots"), 0o755)
				os.WriteFile(filepath.Join(dir, "plots", "latency.png"), []byte("png"), 0o644)
				os.WriteFile(filepath.Join(dir, "report.html"), []byte("<html>"), 0o644)
			}
		}
		if names := dirNames(t, dir); slices.Contains(names, "plots/") || slices.Contains(names, "report.html") || !slices.Contains(names, "run.json") {
			t.Fatalf("after --overwrite: %v; want the new run's files alone", names)
		}
	})
}

// A run that never starts (nothing listens) leaves no results directory:
// --out is not created, the default results/<time>-<profile> is removed,
// an empty --out given stays empty; so for run --processes.
func TestOutNeverStartedWritesNothing(t *testing.T) {
	t.Setenv("MCPBENCH_MAIN", "1") // run --processes starts this binary as mcpbench (TestMain)
	url := closedURL(t)

	dir := filepath.Join(t.TempDir(), "r1")
	stdout, errs, code := run(t, "run", "--url", url, "--vus", "2", "-q", "--out", dir)
	if code != exitFailed || !strings.Contains(errs, "the run never started: no results written to "+dir) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if strings.Contains(stdout+errs, "mcpbench plot") { // issue 33 item 9: not for a directory it removed
		t.Fatalf("a run that never started points at its removed results:\n%s", stdout)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s: %v; want no directory", dir, err)
	}

	_, errs, code = run(t, "run", "--url", url, "--vus", "2", "-q") // in a fresh directory: results/<time>-smoke
	if code != exitFailed {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if names := dirNames(t, "results"); len(names) != 0 {
		t.Fatalf("results/ holds %v; want nothing", names)
	}

	empty := t.TempDir()
	if _, errs, code = run(t, "run", "--url", url, "--vus", "2", "-q", "--out", empty); code != exitFailed {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if names := dirNames(t, empty); len(names) != 0 {
		t.Fatalf("%s holds %v; want it left empty", empty, names)
	}

	dir = filepath.Join(t.TempDir(), "p")
	_, errs, code = run(t, "run", "--url", url, "--vus", "2", "--processes", "2", "--start-delay", "500ms", "-q", "--out", dir)
	if code != exitFailed || !strings.Contains(errs, "no process could start its run") {
		t.Fatalf("--processes: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("--processes: %s: %v; want no directory", dir, err)
	}

	// sweep (in process and as processes) and soak: the same. A sweep
	// whose first step cannot start used to exit 0 with a sweep.json.
	for _, args := range [][]string{
		{"sweep", "--profile", "capacity-sweep", "--steps", "2", "--step", "1s", "--from", "10", "--to", "20"},
		{"sweep", "--profile", "capacity-sweep", "--steps", "2", "--step", "1s", "--from", "10", "--to", "20", "--processes", "2", "--start-delay", "500ms"},
		{"soak", "--duration", "2s", "--vus", "2"},
	} {
		dir := filepath.Join(t.TempDir(), "r")
		stdout, errs, code := run(t, append(args, "--url", url, "-q", "--out", dir)...)
		if code != exitFailed || !strings.Contains(errs, "the run never started: no results written to "+dir) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
		if strings.Contains(stdout+errs, "mcpbench plot "+dir) {
			t.Errorf("%v: points at its removed results:\n%s", args, stdout+errs)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: %s: %v; want no directory", args, dir, err)
		}
	}
}

// plot redraws DIR/plots whole: a chart an earlier drawing left is
// removed (a chart skipped this time must not remain), and nothing else.
func TestPlotRedrawsItsOwnCharts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r1")
	if _, errs, code := run(t, "run", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	plots := filepath.Join(dir, "plots")
	os.MkdirAll(plots, 0o755)
	for _, f := range []string{"stale-chart.png", "stale-chart.svg", "notes.txt"} {
		os.WriteFile(filepath.Join(plots, f), []byte("x"), 0o644)
	}
	if _, errs, code := run(t, "plot", dir, "--format", "svg"); code != exitOK {
		t.Fatalf("plot: exit %d: %s", code, errs)
	}
	names := dirNames(t, plots)
	if slices.Contains(names, "stale-chart.png") || slices.Contains(names, "stale-chart.svg") || !slices.Contains(names, "notes.txt") {
		t.Fatalf("plots/ after redrawing: %v", names)
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".svg") }) {
		t.Fatalf("plots/ has no chart: %v", names)
	}
}
