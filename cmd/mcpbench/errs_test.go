package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Usage mistakes say what to do, exit 2, and start nothing: no server, no
// load, no results directory.
func TestUsageErrorsSayWhatToDo(t *testing.T) {
	profile := t.TempDir() + "/p.yaml"
	if err := os.WriteFile(profile, []byte("name: p\nduration: 1m30\nops:\n  - method: tools/list\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--durtion", "5s"}, "unknown flag: --durtion; did you mean --duration?"},
		{[]string{"run", "--durtion=5s"}, "unknown flag: --durtion; did you mean --duration?"},
		{[]string{"run", "--vuss", "3"}, "unknown flag: --vuss; did you mean --vus?"},
		{[]string{"probe", "--htp", "2"}, "unknown flag: --htp; did you mean --http?"},
		{[]string{"soak", "--url", "http://127.0.0.1:1/mcp", "--timout", "1s"}, "did you mean --timeout?"},
		{[]string{"run", "--xyzzy"}, "unknown flag: --xyzzy"},
		{[]string{"run", "--duration", "1m30"}, "--duration 1m30: add a unit: 1m30s"},
		{[]string{"run", "--duration", "30"}, "--duration 30: add a unit: 30s? (or 30ms)"},
		{[]string{"sweep", "--step", "30"}, "--step 30: add a unit: 30s? (or 30ms)"},
		{[]string{"run", "--stage", "10:500"}, `duration "10": add a unit: 10s? (or 10ms)`},
		{[]string{"run", "--tool", "echo", "--cancel", "after=50"}, "after=50: add a unit: 50s? (or 50ms)"},
		{[]string{"run", "--chaos", "stall after_events=1 stall=2"}, `stall: "2": add a unit: 2s? (or 2ms)`},
		{[]string{"run", "--storm", "at=1m30"}, `at: "1m30": add a unit: 1m30s`},
		{[]string{"run", "--profile", profile}, `duration (line 2): "1m30" is not a duration: add a unit: 1m30s`},
		{[]string{"run", "--url", "127.0.0.1:8080/mcp"}, `url: "127.0.0.1:8080/mcp" has no scheme: add http:// (http://127.0.0.1:8080/mcp)`},
		{[]string{"run", "--url", "localhost:8080"}, `url: "localhost:8080" has no scheme: add http:// (http://localhost:8080)`},
		{[]string{"probe", "localhost:8080"}, `has no scheme: add http://`},
		{[]string{"sweep"}, "sweep needs the loads to step through: give --from, --to and --steps (e.g. --from 100 --to 1000 --steps 5"},
		{[]string{"sweep", "--from", "100"}, "give --to and --steps"},
		{[]string{"sweep", "--from", "100", "--to", "200"}, "give --steps"},
		{[]string{"sweep"}, "or a profile with a sweep section: --profile capacity-sweep"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			out, errs, code := cli(t.Context(), tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (usage)", code, exitUsage)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, errs)
			}
			if strings.Count(errs, tc.want) != 1 {
				t.Errorf("stderr says %q %d times, want once:\n%s", tc.want, strings.Count(errs, tc.want), errs)
			}
			if out != "" || strings.Contains(errs, "embedded reference server") {
				t.Errorf("a usage error started something: stdout %q, stderr %q", out, errs)
			}
			// (An empty results directory may be made before the profile is
			// checked; no file is written.)
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("a usage error wrote %s", path)
				}
				return nil
			})
		})
	}
}

// A secret-looking URL without a scheme is not quoted back.
func TestNoSchemeURLWithCredentialsNotShown(t *testing.T) {
	t.Chdir(t.TempDir())
	_, errs, code := cli(t.Context(), "run", "--url", "user:s3cret@localhost:8080/mcp")
	if code != exitUsage || !strings.Contains(errs, "no scheme: add http://") || strings.Contains(errs, "s3cret") {
		t.Fatalf("exit %d, stderr %q: want exit 2, the hint, and no password", code, errs)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"durtion", "duration", 1}, {"vuss", "vus", 1}, {"", "abc", 3}, {"rate", "rate", 0}, {"kitten", "sitting", 3},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
