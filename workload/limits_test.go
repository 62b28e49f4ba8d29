package workload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// opsYAML is a profile of n ping ops, each named.
func opsYAML(n int) []byte {
	var b strings.Builder
	b.WriteString("name: many\nvus: 2\nduration: 1s\nops:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: op%d\n    method: ping\n", i)
	}
	return []byte(b.String())
}

// A profile file over MaxProfileBytes is refused by its size, before it
// is read: the error names the limit and what to do instead, and the
// refusal allocates nothing like the file's size.
func TestProfileOverSizeRefusedBeforeRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	data := opsYAML(profile.MaxProfileBytes / 30)
	if len(data) <= profile.MaxProfileBytes {
		t.Fatalf("the fixture has %d bytes, want more than %d", len(data), profile.MaxProfileBytes)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	_, err := profile.LoadProfile(path)
	runtime.ReadMemStats(&b)
	if err == nil || !strings.Contains(err.Error(), "profile.MaxProfileBytes") || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes, larger than a profile may be (4MiB,", len(data))) ||
		!strings.Contains(err.Error(), "data file") || !strings.Contains(err.Error(), path) {
		t.Fatalf("LoadProfile of %d bytes: %v; want a refusal naming the file, the limit and what to do", len(data), err)
	}
	if got := b.TotalAlloc - a.TotalAlloc; got > 1<<20 {
		t.Fatalf("refusing the file allocated %d bytes; want it refused before reading (< 1 MiB)", got)
	}
	// At the limit it is read.
	small := filepath.Join(t.TempDir(), "ok.yaml")
	if err := os.WriteFile(small, opsYAML(3), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := profile.LoadProfile(small); err != nil {
		t.Fatal(err)
	}
}

// A profile of more than MaxProfileOps ops is refused with one problem
// that names the limit, before any op is checked or built; MaxProfileOps
// ops compile.
func TestProfileOverOpCountRefused(t *testing.T) {
	p, errs := profile.ParseProfile(opsYAML(profile.MaxProfileOps + 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for i := range p.Ops { // every op also wrong: none of that is reported
		p.Ops[i].Method = "bogus"
	}
	_, err := Compile(p, nil)
	var pe *profile.ProfileError
	if !errors.As(err, &pe) || len(pe.Errs) != 1 || !strings.Contains(err.Error(), fmt.Sprintf("ops: %d, more than a profile may have (%d, profile.MaxProfileOps)", profile.MaxProfileOps+1, profile.MaxProfileOps)) {
		t.Fatalf("Compile of %d ops: %v; want the one problem naming the limit", profile.MaxProfileOps+1, err)
	}
	p, _ = profile.ParseProfile(opsYAML(profile.MaxProfileOps))
	pl, err := Compile(p, nil)
	if err != nil || len(pl.Ops) != profile.MaxProfileOps {
		t.Fatalf("Compile of %d ops: %v", profile.MaxProfileOps, err)
	}
}

// A profile with 100,000 problems prints the first MaxProblemsShown and
// the count of the rest (859k problems printed 60 MB before: issue 33).
func TestProfileErrorShowsFirstProblemsAndCount(t *testing.T) {
	errs := make([]error, 100_000)
	for i := range errs {
		errs[i] = fmt.Errorf("ops[%d].method: %q, want one of …", i, "bogus")
	}
	msg := (&profile.ProfileError{Source: "p.yaml", Errs: errs}).Error()
	lines := strings.Split(msg, "\n")
	if len(lines) != 1+profile.MaxProblemsShown+1 {
		t.Fatalf("%d lines, want a heading, %d problems and the count of the rest:\n%s", len(lines), profile.MaxProblemsShown, msg)
	}
	if lines[0] != "profile p.yaml: 100000 problems:" || lines[1] != `  - ops[0].method: "bogus", want one of …` ||
		lines[profile.MaxProblemsShown] != `  - ops[49].method: "bogus", want one of …` ||
		lines[profile.MaxProblemsShown+1] != "  … and 99950 more (the first 50 shown; fix these and run again to see the rest)" {
		t.Fatalf("got:\n%s\n…%s", strings.Join(lines[:3], "\n"), strings.Join(lines[len(lines)-2:], "\n"))
	}
	if n := len((&profile.ProfileError{Source: "p", Errs: errs[:profile.MaxProblemsShown]}).Error()); strings.Contains((&profile.ProfileError{Source: "p", Errs: errs[:profile.MaxProblemsShown]}).Error(), "more (") || n == 0 {
		t.Fatal("exactly MaxProblemsShown problems: all shown, no count line")
	}
}

// heapAtEnd is a sink that reads the live heap when the run ends, the
// recorder and its totals still held (bytes, after a GC).
type heapAtEnd struct{ at uint64 }

func (h *heapAtEnd) Start(*results.RunInfo)           {}
func (h *heapAtEnd) Interval(*results.IntervalRecord) {}
func (h *heapAtEnd) End(*results.RunEnd) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	h.at = ms.HeapAlloc
}

// A 1,000-op profile runs in tens of MB: compiled, run (4 VUs, 3,000
// ops spread over every op, each answered at once by a fake) and its
// results written, the run holds at most 40 MB more than before it at
// its end (issue 33: 2.4 GB). Measured as live heap, not time.
func TestThousandOpProfileHeap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "ping", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.Result(r, map[string]any{})
		})
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		rd, err := results.NewResultsDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p, errs := profile.ParseProfile(opsYAML(1000))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		p.URL, p.Protocol = "http://fake/mcp", driver.Protocol20251125
		p.VUs, p.Iterations, p.Duration = 4, 3000, profile.Duration(time.Minute)
		pl, err := Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		h := &heapAtEnd{}
		sum, err := Run(t.Context(), pl, Options{Sinks: []results.Sink{rd, h}})
		if err != nil {
			t.Fatal(err)
		}
		if err := rd.Err(); err != nil {
			t.Fatal(err)
		}
		if sum.All.Count != 3000 || len(sum.Ops) < 900 {
			t.Fatalf("%d ops of %d kinds; want 3000 of 900 kinds or more", sum.All.Count, len(sum.Ops))
		}
		grown := int64(h.at) - int64(before.HeapAlloc)
		t.Logf("1,000-op profile: %.1f MB live at the run's end (%d bytes per op)", float64(grown)/(1<<20), grown/1000)
		if grown > 40<<20 {
			t.Fatalf("the run held %.0f MB at its end for 1,000 ops; want at most 40 MB", float64(grown)/(1<<20))
		}
	})
}
