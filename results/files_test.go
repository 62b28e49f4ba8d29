//go:build unix

package results

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// JSON result files get the mode os.Create gives (0666 less the umask),
// like intervals.csv and histograms.hlog; the temp file is gone.
func TestWriteJSONFollowsTheUmask(t *testing.T) {
	for _, mask := range []int{0o022, 0o077, 0o002} {
		old := syscall.Umask(mask)
		dir := t.TempDir()
		err := WriteJSON(filepath.Join(dir, "summary.json"), map[string]int{"a": 1})
		f, cerr := os.Create(filepath.Join(dir, "intervals.csv"))
		syscall.Umask(old)
		if err != nil || cerr != nil {
			t.Fatal(err, cerr)
		}
		f.Close()
		js, _ := os.Stat(filepath.Join(dir, "summary.json"))
		csv, _ := os.Stat(filepath.Join(dir, "intervals.csv"))
		if want := os.FileMode(0o666 &^ mask); js.Mode().Perm() != want || csv.Mode().Perm() != want {
			t.Errorf("umask %03o: summary.json %v, intervals.csv %v; want %v", mask, js.Mode().Perm(), csv.Mode().Perm(), want)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("temp file %s left behind", e.Name())
			}
		}
		data, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
		if string(data) != "{\n  \"a\": 1\n}\n" {
			t.Errorf("content %q", data)
		}
	}
}

// Rewriting a file (sweep.json after each step) replaces it whole.
func TestWriteJSONReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.json")
	for i := range 3 {
		if err := WriteJSON(path, i); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != "2\n" {
		t.Fatalf("content %q", data)
	}
}
