package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
)

// The reference server serves its 50 ms tool at the same speed however
// many VUs wait on it: with 2 VUs for 100/s offered, the drops are the VU
// cap's, not a saturated target's; the table with the dropped ops counts
// the offered ops.
func TestDropsOnReferenceServerBlameTheVUCap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reference server for a few seconds")
	}
	p := echoProfile()
	p.Ops = []profile.OpSpec{{Method: "tools/call", Tool: "slow", Arguments: map[string]any{"ms": 50}, Weight: weight(1)}}
	p.Rate, p.VUs, p.MaxVUs, p.Duration = 100, 2, 2, profile.Duration(3*time.Second)
	sum, _ := runRef(t, refserver.Options{}, p)
	w := sum.DropWarning
	if sum.DroppedRate < 0.01 || !strings.Contains(w, "cause: the VU cap: all 2 VUs") || strings.Contains(w, "saturated") {
		t.Fatalf("dropped %.1f%%, warning %q", 100*sum.DroppedRate, w)
	}
	o := sum.All
	if o.WithDropped == nil || o.Offered != o.Count+o.Dropped || o.CensoredFromMS <= 0 || o.Errors != 0 {
		t.Fatalf("offered %d of %d completed + %d dropped, censored from %v ms, %d errors", o.Offered, o.Count, o.Dropped, o.CensoredFromMS, o.Errors)
	}
}
