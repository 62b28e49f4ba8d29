package metrics

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

func result(op int, intendedMS, startMS, endMS int, class driver.Class, status int) *driver.Result {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := &driver.Result{Op: op, Intended: at(intendedMS), Start: at(startMS), FirstByte: at(startMS + 1), End: at(endMS), Class: class, Status: status}
	if class != driver.ClassOK {
		r.Err = errors.New(class.String())
	}
	return r
}

func TestRecorderMergesShardsAndIntervals(t *testing.T) {
	rec := NewRecorder([]string{"a", "b"}, 64)
	var wg sync.WaitGroup
	// 100 VUs record 10 results each: op a takes 10 ms of service after
	// waiting 0..99 ms from its intended start.
	for vu := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh := rec.Shard(vu)
			for range 10 {
				sh.Record(result(0, 0, vu, vu+10, driver.ClassOK, 200))
			}
		}()
	}
	wg.Wait()
	rec.Shard(3).Record(result(1, 0, 0, 5, driver.ClassTimeout, 0))
	rec.Shard(3).Record(result(1, 0, 0, 5, driver.ClassCanceled, 0))
	rec.Shard(4).Dropped(1, time.Time{}, 1500*time.Millisecond)
	iv := rec.Tick(time.Now(), time.Time{})
	if iv.Ops[0].Count != 1000 || iv.All.Count != 1001 {
		t.Fatalf("interval counts %d %d", iv.Ops[0].Count, iv.All.Count)
	}
	rec.Shard(7).Record(result(0, 0, 0, 1000, driver.ClassOK, 200))
	rec.Tick(time.Now(), time.Time{})
	ops, all := rec.Summarize(10)
	a, b := ops[0], ops[1]
	if a.Count != 1001 || a.Rate != 100.1 || a.Errors != 0 {
		t.Fatalf("a: %+v", a)
	}
	// HDR reports a bucket's highest equivalent value: 10 ms reads 10.007.
	if a.Service.P50 < 10 || a.Service.P50 > 10.01 || a.Service.Max < 999 || a.Response.P50 < 59 || a.Response.P50 > 61 || a.Response.Max < 999 {
		t.Fatalf("a latency: service %+v response %+v", a.Service, a.Response)
	}
	if a.TTFB.P50 < 1 || a.TTFB.P50 > 1.001 {
		t.Fatalf("ttfb %+v", a.TTFB)
	}
	if b.Count != 1 || b.Errors != 1 || b.ErrorsByClass["timeout"] != 1 || b.Interrupted != 1 || b.Dropped != 1 || b.Status["0"] != 1 {
		t.Fatalf("b: %+v", b)
	}
	if all.Count != 1002 || all.Errors != 1 || all.Dropped != 1 {
		t.Fatalf("all: %+v", all)
	}
}

func TestRecorderResumesAndLedger(t *testing.T) {
	rec := NewRecorder([]string{"call"}, 1)
	r := result(0, 0, 0, 2000, driver.ClassOK, 200)
	r.Resumes = []driver.Resume{
		{Hint: 500, Waited: 500 * time.Millisecond, Delay: 501 * time.Millisecond, TimeToResume: 510 * time.Millisecond, OK: true},
		{Hint: 500, Waited: 0, Delay: time.Millisecond, TimeToResume: 3 * time.Millisecond, OK: false},
	}
	r.Ledger.Checked = true
	r.Ledger.Counts[driver.VerdictLost] = 2
	rec.Shard(0).Record(r)
	rec.Tick(time.Now(), time.Time{})
	ops, _ := rec.Summarize(1)
	o := ops[0]
	if o.Resumes == nil || o.Resumes.Attempts != 2 || o.Resumes.Accepted != 1 || o.Resumes.Early != 1 {
		t.Fatalf("resumes %+v", o.Resumes)
	}
	if o.Resumes.TimeToResume.Max < 509 || o.Resumes.Wait.Max < 499 {
		t.Fatalf("resume latencies %+v", o.Resumes)
	}
	if o.Ledger == nil || o.Ledger.Streams != 1 || o.Ledger.Faulty != 1 || o.Ledger.Verdicts["lost"] != 2 || len(o.Ledger.Verdicts) != len(driver.StreamVerdicts) {
		t.Fatalf("ledger %+v", o.Ledger)
	}
	offs, n := rec.Offenders()
	if n != 1 || len(offs) != 1 || offs[0].Verdicts["lost"] != 2 || offs[0].Op != "call" {
		t.Fatalf("offenders %d %+v", n, offs)
	}
}

func TestGeneratorCost(t *testing.T) {
	t0 := time.Unix(0, 0)
	g := results.GeneratorCost(results.Usage{At: t0, CPU: time.Second}, results.Usage{At: t0.Add(10 * time.Second), CPU: 3 * time.Second, MaxRSS: 64 << 20}, 40000, 2, false)
	want := results.Generator{CPUSeconds: 2, CPUPerOpUS: 50, Cores: 0.2, MaxRSSMB: 64, NumCPU: 2}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Fatal(diff)
	}
	if u := results.ReadUsage(); u.CPU <= 0 || u.MaxRSS <= 0 {
		t.Fatalf("getrusage reading %+v", u)
	}
}

// An interval row counts ops by intended start: one intended before the
// interval's end counts in it even when it completes after the end (but
// before the Tick), one intended after the end counts in the next row
// even when it completed before the Tick, and one that completes after
// the Tick counts in the next row. Nothing is lost: the rows add up to
// the total.
func TestIntervalCountsByIntendedStart(t *testing.T) {
	rec := NewRecorder([]string{"a"}, 1)
	t0 := time.Unix(1000, 0) // result()'s time origin
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rec.Begin(t0, at(1000))
	sh := rec.Shard(0)
	sh.Record(result(0, 900, 900, 1050, driver.ClassOK, 200))      // intended in row 1, completed after its end
	sh.Record(result(0, 1020, 1020, 1060, driver.ClassTimeout, 0)) // intended in row 2, completed before the Tick
	sh.Dropped(0, at(1030), 50*time.Millisecond)                   // dropped, intended in row 2
	sh.Dropped(0, at(990), 80*time.Millisecond)                    // dropped, intended in row 1
	iv := rec.Tick(at(1000), at(2000))
	if o := iv.Ops[0]; o.Count != 1 || o.Errors != 0 || o.Dropped != 1 {
		t.Fatalf("row 1: count %d errors %d dropped %d, want 1, 0, 1", o.Count, o.Errors, o.Dropped)
	}
	sh.Record(result(0, 950, 950, 1200, driver.ClassOK, 200))   // intended in row 1, completed after its Tick
	sh.Record(result(0, 2500, 2500, 2510, driver.ClassOK, 200)) // intended in row 3
	iv = rec.Tick(at(2000), at(3000))
	if o := iv.Ops[0]; o.Count != 2 || o.Errors != 1 || o.Classes[driver.ClassTimeout] != 1 || o.Dropped != 1 {
		t.Fatalf("row 2: count %d errors %d timeouts %d dropped %d, want 2, 1, 1, 1", o.Count, o.Errors, o.Classes[driver.ClassTimeout], o.Dropped)
	}
	iv = rec.Tick(at(2600), time.Time{}) // the last Tick takes everything
	if o := iv.Ops[0]; o.Count != 1 || o.Dropped != 0 {
		t.Fatalf("last row: count %d dropped %d, want 1, 0", o.Count, o.Dropped)
	}
	ops, all := rec.Summarize(2.6)
	if ops[0].Count != 4 || all.Errors != 1 || all.Dropped != 2 {
		t.Fatalf("totals: count %d errors %d dropped %d, want 4, 1, 2", ops[0].Count, all.Errors, all.Dropped)
	}
}
