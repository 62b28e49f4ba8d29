package launch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/fixture"
	"github.com/mcpbench/mcpbench/results"
)

// golden copies files of testdata/golden into a new directory under
// their new names (from → to).
func goldenDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for from, to := range files {
		data, err := os.ReadFile(filepath.Join(fixture.GoldenDir(), from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// report, plot and compare take a sweep's directory.
func TestSweepDirReportPlotCompare(t *testing.T) {
	a := goldenDir(t, map[string]string{"sweep.json": "sweep.json"})
	b := goldenDir(t, map[string]string{"sweep.json": "sweep.json"})
	out, errs, code := run(t, "report", a)
	if code != int(ExitOK) || !strings.Contains(out, "Maximum sustainable rate under the SLO: 100.0 ops/s (step 2)") {
		t.Fatalf("report: exit %d %s\n%s", code, errs, out)
	}
	out, _, code = run(t, "report", a, "--format", "json")
	var sw results.Sweep
	if code != int(ExitOK) || json.Unmarshal([]byte(out), &sw) != nil || len(sw.Results) != 2 {
		t.Fatalf("report --format json: exit %d\n%s", code, out)
	}
	if out, _, code = run(t, "report", a, "--format", "markdown"); code != int(ExitOK) || !strings.Contains(out, "| step | rate |") {
		t.Fatalf("report markdown: exit %d\n%s", code, out)
	}
	out, errs, code = run(t, "compare", a, b, "--fail-if", "max_sustainable_rate<-5%")
	if code != int(ExitOK) || !strings.Contains(out, "max_sustainable_rate ops/s") || !strings.Contains(out, "PASS  max_sustainable_rate 100.0 → 100.0 (+0.0%) within") {
		t.Fatalf("compare: exit %d %s\n%s", code, errs, out)
	}
	run1 := goldenDir(t, map[string]string{"run-open.summary.json": "summary.json"})
	if _, errs, code := run(t, "compare", a, run1); code != int(ExitUsage) || !strings.Contains(errs, "is a sweep and") {
		t.Fatalf("sweep against run: exit %d %s", code, errs)
	}
	if _, errs, code := run(t, "compare", a, b, "--fail-if", "p99>+10%"); code != int(ExitUsage) || !strings.Contains(errs, "comparing sweeps, the figures are") {
		t.Fatalf("run limit on sweeps: exit %d %s", code, errs)
	}
	out, errs, code = run(t, "plot", a)
	page, err := os.ReadFile(filepath.Join(a, "report.html"))
	if code != int(ExitOK) || err != nil || !strings.Contains(string(page), "mcpbench sweep report") || !strings.Contains(out, "capacity-latency.svg") {
		t.Fatalf("plot: exit %d %s %v\n%s", code, errs, err, out)
	}
}

// report, plot and compare take a soak's directory: the run's report with
// the soak's verdicts.
func TestSoakDirReportPlotCompare(t *testing.T) {
	files := map[string]string{"run-soak.summary.json": "summary.json", "soak.json": "soak.json"}
	a, b := goldenDir(t, files), goldenDir(t, files)
	out, errs, code := run(t, "report", a)
	if code != int(ExitOK) || !strings.Contains(out, "Soak verdicts") || !strings.Contains(out, "latency drift") {
		t.Fatalf("report: exit %d %s\n%s", code, errs, out)
	}
	out, _, code = run(t, "report", a, "--format", "json")
	var both struct {
		Summary *results.Summary
		Soak    *results.Soak
	}
	if code != int(ExitOK) || json.Unmarshal([]byte(out), &both) != nil || both.Summary == nil || both.Soak == nil || len(both.Soak.Verdicts) != 4 {
		t.Fatalf("report json: exit %d\n%s", code, out)
	}
	if out, _, code = run(t, "report", a, "--format", "markdown"); code != int(ExitOK) || !strings.Contains(out, "## Soak verdicts") {
		t.Fatalf("report markdown: exit %d\n%s", code, out)
	}
	if out, errs, code = run(t, "compare", a, b); code != int(ExitOK) || !strings.Contains(out, "Soak verdicts") || !strings.Contains(out, "session hygiene") {
		t.Fatalf("compare: exit %d %s\n%s", code, errs, out)
	}
	_, errs, code = run(t, "plot", a)
	page, err := os.ReadFile(filepath.Join(a, "report.html"))
	if code != int(ExitOK) || err != nil || !strings.Contains(string(page), `<section id="soak">`) {
		t.Fatalf("plot: exit %d %s %v", code, errs, err)
	}
}
