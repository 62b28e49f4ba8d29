package metrics

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
)

// BenchmarkRecordOp is the recorder's cost per completed op (one shard,
// results due in the open interval): what counting by intended start and
// late starts add to the hot path.
func BenchmarkRecordOp(b *testing.B) {
	rec := NewRecorder([]string{"tools/call:echo"}, 1)
	t0 := time.Unix(1_700_000_000, 0)
	rec.Begin(t0, t0.Add(time.Hour))
	sh := rec.Shard(0)
	r := &driver.Result{Op: 0, Class: driver.ClassOK, Status: 200}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		at := t0.Add(time.Duration(i%1_000_000) * time.Microsecond)
		r.Intended, r.Start, r.FirstByte, r.End = at, at.Add(50*time.Microsecond), at.Add(time.Millisecond), at.Add(2*time.Millisecond)
		sh.Record(r)
	}
}

// BenchmarkRecordOpLate is the cost per op that completes after the
// interval of its intended start closed (counted in the open one, noted
// with its response time for the end's restatement); a Tick every 10,000
// ops, as a second of a 10,000/s overload.
func BenchmarkRecordOpLate(b *testing.B) {
	rec := NewRecorder([]string{"tools/call:echo"}, 1)
	t0 := time.Unix(1_700_000_000, 0)
	rec.Begin(t0, t0.Add(time.Second))
	rec.Tick(t0.Add(time.Second), t0.Add(time.Hour))
	sh := rec.Shard(0)
	r := &driver.Result{Op: 0, Class: driver.ClassOK, Status: 200}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		at := t0.Add(time.Duration(i%900_000) * time.Microsecond)
		r.Intended, r.Start, r.FirstByte, r.End = at, at.Add(50*time.Microsecond), at.Add(1500*time.Millisecond), at.Add(1500*time.Millisecond+time.Duration(i%1000)*time.Microsecond)
		sh.Record(r)
		if i%10_000 == 9_999 {
			rec.Tick(t0.Add(time.Hour), t0.Add(2*time.Hour))
		}
	}
}
