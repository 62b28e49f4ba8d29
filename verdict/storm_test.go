package verdict

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// A storm at 10 s: reconnects 2 s later, p99 up for the interval holding
// the wave and the next, then back.
func TestStorms(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tl := results.NewTimeline(t0, 30*time.Second)
	at := t0.Add(10 * time.Second)
	for i := range 1000 {
		r := driver.Resume{At: at.Add(2*time.Second + time.Duration(i%50)*time.Millisecond), Hint: -1, Storm: true}
		if i < 10 {
			r.Hint, r.Delay = 1000, time.Millisecond // early: before the retry hint
		}
		tl.Record(&r)
	}
	var rows []results.Row
	for s := range 20 {
		r := results.Row{Start: t0.Add(time.Duration(s) * time.Second), End: t0.Add(time.Duration(s+1) * time.Second)}
		r.All = results.RowOp{Count: 100, P99: 2 + float64(s%3)} // 2..4 ms before the storm
		if s == 12 || s == 13 {
			r.All.P99, r.All.Errors = 80, 5
		}
		rows = append(rows, r)
	}
	ws := Storms([]time.Time{at}, tl, rows)
	if len(ws) != 1 {
		t.Fatal(len(ws))
	}
	w := ws[0]
	if w.Attempts != 1000 || w.Early != 10 || w.FirstMS != 2000 || w.LastMS != 2040 || w.PeakPerSec != 10000 {
		t.Fatalf("wave %+v", w)
	}
	if w.BaseP99MS != 4 || w.RecoveryS != 4 || w.Errors != 10 || w.PeakP99MS != 80 {
		t.Fatalf("recovery: %+v (want back at 14 s: 4 s after the cut, 10 errors)", w)
	}
	// A noisy interval later (p99 9 ms: within 2 × 4 + ... no, above 8 but
	// below 4 + 5 = 9) does not extend the recovery.
	rows[16].All.P99 = 9
	if w := Storms([]time.Time{at}, tl, rows)[0]; w.RecoveryS != 4 {
		t.Fatalf("a later noisy interval moved recovery: %+v", w)
	}
	// The same storm leaving no trace in latency.
	for i := range rows {
		rows[i].All.P99, rows[i].All.Errors = 3, 0
	}
	if w := Storms([]time.Time{at}, tl, rows)[0]; w.RecoveryS != 0 || w.Errors != 0 {
		t.Fatalf("no impact: %+v", w)
	}
}
