package verdict

import (
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// Each wave counts its own (storm-caused) attempts sent to a rel="stream"
// URL (SEP-1335); a normal re-open through a link in its span is not the wave's.
func TestStormsCountLinkResumes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tl := results.NewTimeline(t0, 30*time.Second)
	w1, w2 := t0.Add(5*time.Second), t0.Add(15*time.Second)
	for i := range 100 {
		at := w1.Add(time.Duration(i) * time.Millisecond)
		tl.Record(&driver.Resume{At: at, Storm: true, Link: i < 30})
		at = w2.Add(time.Duration(i) * time.Millisecond)
		tl.Record(&driver.Resume{At: at, Storm: true, Link: i < 7})
		tl.Record(&driver.Resume{At: at, Link: true}) // a normal re-open through a link: not the wave's
	}
	ws := Storms([]time.Time{w1, w2}, tl, nil)
	if len(ws) != 2 || ws[0].Attempts != 100 || ws[0].ViaLink != 30 || ws[1].Attempts != 100 || ws[1].ViaLink != 7 {
		t.Fatalf("waves %+v: want 100 attempts each, 30 and 7 via links", ws)
	}
}
