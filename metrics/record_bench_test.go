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
