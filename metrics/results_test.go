package metrics

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// Intervals written by ResultsDir come back through hdrhistogram-go's
// log reader with the same counts and percentiles, and a summary rebuilt
// from the files (no summary.json) agrees with the recorder's.
func TestResultsRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	names := []string{"tools/call:echo", "my op, with spaces"}
	rec := NewRecorder(names, 4)
	t0 := time.Unix(2000, 0)
	rec.Begin(t0, t0.Add(time.Second))
	w, err := results.NewResultsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	w.Start(&results.RunInfo{Tool: "mcpbench", Version: "test", Target: "http://x/mcp", Profile: "p", ProtocolNegotiated: "2025-11-25", Started: t0, Ops: names})
	for sec := range 3 {
		for i := range 100 {
			r := result(i%2, 0, 0, 1+i%20+sec, driver.ClassOK, 200)
			if i == 7 {
				r.Class, r.Err = driver.ClassTimeout, os.ErrDeadlineExceeded
				r.Resumes = []driver.Resume{{TimeToResume: 42 * time.Millisecond, OK: true}}
			}
			rec.Shard(i).Record(r)
		}
		iv := rec.Tick(t0.Add(time.Duration(sec+1)*time.Second), t0.Add(time.Duration(sec+2)*time.Second))
		w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Phase: results.PhaseMeasure})
	}
	ops, all := rec.Summarize(3)
	sum := &results.Summary{Ops: ops, All: all, DurationS: 3, Rate: all.Rate}
	w.End(&results.RunEnd{Summary: sum})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}

	// The hlog through the library's own reader.
	f, _ := os.Open(filepath.Join(dir, results.FileHistogram))
	defer f.Close()
	lr := hdr.NewHistogramLogReader(f)
	merged := map[string]*hdr.Histogram{}
	n := 0
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil || h == nil {
			break
		}
		n++
		if merged[h.Tag()] == nil {
			merged[h.Tag()] = results.NewHistogram()
		}
		merged[h.Tag()].Merge(h)
	}
	if n != 3*5 { // per interval: 2 ops × (response, service) + one op's resume
		t.Fatalf("%d interval histograms, want 15", n)
	}
	total := rec.Total()
	for i, name := range names {
		got := merged[results.HlogTag(name)+".response"]
		if got == nil || got.TotalCount() != total[i].Count || got.ValueAtQuantile(99) != total[i].Response.ValueAtQuantile(99) || got.Max() != total[i].Response.Max() {
			t.Fatalf("%s: hlog %v vs recorder count %d p99 %d", name, got, total[i].Count, total[i].Response.ValueAtQuantile(99))
		}
	}
	if merged["tools/call:echo.resume"] == nil && merged["my_op__with_spaces.resume"] == nil {
		t.Fatal("no resume histogram")
	}

	res, err := results.ReadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Run == nil || res.Summary == nil || len(res.Intervals) != 3 || len(res.Ops) != 2 {
		t.Fatalf("read back: run %v summary %v intervals %d ops %v", res.Run != nil, res.Summary != nil, len(res.Intervals), res.Ops)
	}
	if iv := res.Intervals[1]; iv.All.Count != 100 || iv.Ops[names[0]].Count != 50 || iv.ErrorsByClass["timeout"] != 1 || iv.T != 2 {
		t.Fatalf("interval 1: %+v", iv)
	}
	// Without summary.json the summary is rebuilt from the other files.
	os.Remove(filepath.Join(dir, results.FileSummary))
	res, _ = results.ReadResults(dir)
	rb := res.Rebuild()
	if rb.All.Count != all.Count || rb.All.Errors != all.Errors || rb.All.Response.P99 != all.Response.P99 || rb.Ops[0].Service.P50 != ops[0].Service.P50 || !rb.Interrupted {
		t.Fatalf("rebuilt %+v\nvs %+v", rb.All, all)
	}
}
