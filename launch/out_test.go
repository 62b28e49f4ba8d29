package launch

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// The default results directory never collides: runs that start in the
// same second — one after the other, or at once — each get their own.
func TestOutDefaultNeverCollides(t *testing.T) {
	root := filepath.Join(t.TempDir(), "results")
	now := time.Date(2026, 11, 25, 21, 0, 0, 0, time.Local)
	first, err := claimDefaultOut(root, now, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	second, err := claimDefaultOut(root, now, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if first.path != filepath.Join(root, "20261125-210000-smoke") || second.path != first.path+"-2" {
		t.Fatalf("claimed %s then %s", first.path, second.path)
	}
	const n = 16
	var wg sync.WaitGroup
	paths := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := claimDefaultOut(root, now, "smoke")
			if err != nil {
				t.Error(err)
				return
			}
			paths[i] = o.path
		}()
	}
	wg.Wait()
	slices.Sort(paths)
	if len(slices.Compact(slices.Clone(paths))) != n {
		t.Fatalf("concurrent claims shared a directory: %v", paths)
	}
	if slices.Contains(paths, first.path) || slices.Contains(paths, second.path) {
		t.Fatalf("a concurrent claim took an earlier run's directory: %v", paths)
	}
}
