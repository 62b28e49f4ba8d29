package metrics

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// recordEveryOp records k results of every op in every shard of rec
// (response and service times spread over 0.2–60 ms, one status each),
// then closes two intervals and reads the totals as a run's end does.
func recordEveryOp(rec *Recorder, k int) {
	t0 := time.Unix(1000, 0)
	for op := range rec.Names() {
		for s := range rec.shards {
			sh := rec.Shard(s)
			for j := range k {
				us := 200 + (op*7919+s*104729+j*1299709)%60_000
				start := t0.Add(time.Duration(j) * time.Millisecond)
				sh.Record(&driver.Result{Op: op, Intended: start, Start: start, FirstByte: start.Add(time.Duration(us/2) * time.Microsecond),
					End: start.Add(time.Duration(us) * time.Microsecond), Class: driver.ClassOK, Status: 200})
			}
		}
		if op == len(rec.Names())/2 {
			rec.Tick(t0.Add(time.Second), t0.Add(2*time.Second))
		}
	}
	rec.Tick(t0.Add(2*time.Second), time.Time{})
}

// heapOf is the live heap f leaves (bytes, after a GC) in the value it
// returns.
func heapOf(f func() any) (uint64, any) {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&b)
	runtime.KeepAlive(v)
	if b.HeapAlloc < a.HeapAlloc {
		return 0, v
	}
	return b.HeapAlloc - a.HeapAlloc, v
}

func opNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "tools/call:op" + strconv.Itoa(i)
	}
	return names
}

// MaxRecorderBytesPerOp bounds what the recorder holds per op of a
// profile with every op recorded in every shard (TestRecorderHeapPerOp).
// A dense HdrHistogram of the range takes 188 KB; each op had three per
// shard and six more in the aggregates (1,000 ops: 2.4 GB and up).
const maxRecorderBytesPerOp = 32 << 10

// A 1,000-op profile costs the recorder tens of MB at most, every op
// recorded in every shard: its histograms hold what they recorded, not a
// dense array each (issue 33: 1,000 ops took 2.4 GB). Measured as live
// heap, not time.
func TestRecorderHeapPerOp(t *testing.T) {
	const ops = 1000
	n, v := heapOf(func() any {
		rec := NewRecorder(opNames(ops), 2)
		recordEveryOp(rec, 20)
		hs := rec.Histograms()
		sum, _ := rec.Summarize(1)
		return []any{rec, hs, sum}
	})
	runtime.KeepAlive(v)
	t.Logf("1,000 ops, 2 shards, 20 results per op and shard: %.1f MB live, %d bytes per op", float64(n)/(1<<20), n/ops)
	if n/ops > maxRecorderBytesPerOp {
		t.Fatalf("the recorder holds %d bytes per op (%.0f MB for %d ops); want at most %d", n/ops, float64(n)/(1<<20), ops, maxRecorderBytesPerOp)
	}
}

// BenchmarkRecorderOps reports the recorder's live heap per profile op
// (heap-B/op: a NewRecorder of 1,000 ops with 8 shards, as on a 2-core
// machine, every op recorded 20 times in every shard, two intervals
// closed, the totals read): go test ./metrics -run x -bench RecorderOps.
func BenchmarkRecorderOps(b *testing.B) {
	for _, shards := range []int{1, 8} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			const ops = 1000
			var n uint64
			for b.Loop() {
				n, _ = heapOf(func() any {
					rec := NewRecorder(opNames(ops), shards)
					recordEveryOp(rec, 20)
					hs := rec.Histograms()
					return []any{rec, hs}
				})
			}
			b.ReportMetric(float64(n)/ops, "heap-B/op")
		})
	}
}

// BenchmarkShardRecord is the recorder's cost per result (one op, its
// response, service and TTFB times spread over 0.2–60 ms), the Tick of
// every 10,000 included: go test ./metrics -run x -bench ShardRecord.
func BenchmarkShardRecord(b *testing.B) {
	rec := NewRecorder(opNames(10), 1)
	sh := rec.Shard(0)
	t0 := time.Unix(1000, 0)
	res := &driver.Result{Class: driver.ClassOK, Status: 200}
	i := 0
	for b.Loop() {
		us := 200 + (i*1299709)%60_000
		res.Op, res.Intended, res.Start = i%10, t0, t0
		res.FirstByte, res.End = t0.Add(time.Duration(us/2)*time.Microsecond), t0.Add(time.Duration(us)*time.Microsecond)
		sh.Record(res)
		if i++; i%10_000 == 0 {
			rec.Tick(t0, time.Time{})
		}
	}
}

// A recorder of many ops gets fewer shards: shards × ops stays within
// shardOpSlots (at least 4 shards), so its memory does not scale with
// the cores times the ops.
func TestRecorderShardsBoundedByOps(t *testing.T) {
	for _, tc := range []struct{ ops, vus, want int }{{10_000, 1000, 6}, {100_000, 1000, 4}, {1000, 1000, min(65, 4*runtime.GOMAXPROCS(0))}, {5, 3, 3}} {
		if got := len(NewRecorder(opNames(tc.ops), tc.vus).shards); got != tc.want {
			t.Errorf("%d ops, %d VUs: %d shards, want %d", tc.ops, tc.vus, got, tc.want)
		}
	}
}
