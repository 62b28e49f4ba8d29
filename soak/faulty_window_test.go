package soak

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// The correctness verdict counts the same set as the summary: every
// measured op, those that ended in the graceful stop after the window
// included (the last interval, phase stopping). A stream faulty there
// was missing from the verdict (1708 where the summary said 1709).
func TestSoakFaultyCountsTheSummarysSet(t *testing.T) {
	c := &Collector{}
	phases := []results.Phase{results.PhaseWarmup}
	for range 20 {
		phases = append(phases, results.PhaseMeasure)
	}
	phases = append(phases, results.PhaseStopping)
	var total int64
	for i, ph := range phases {
		row := results.Row{All: results.RowOp{Count: 100, P99: 5}}
		if ph != results.PhaseWarmup { // only measured ops are recorded
			row.All.Faulty = int64(i % 3)
			if ph == results.PhaseStopping {
				row.All.Faulty = 1 // a measured op that ended after the window
			}
			total += row.All.Faulty
		}
		c.Interval(&results.IntervalRecord{Row: row, Phase: ph, Elapsed: time.Duration(i+1) * time.Second, Sessions: 10})
	}
	// The summary of the same run: every measured op's stream.
	sum := &results.Summary{All: results.OpSummary{Ledger: &results.LedgerSummary{Streams: 2100, Faulty: total}}}
	pl := &workload.Plan{}
	sk := c.Soak(pl, sum)
	var v results.SoakVerdict
	for _, x := range sk.Verdicts {
		if x.Name == "correctness drift" {
			v = x
		}
	}
	if v.Value != float64(total) || v.Pass {
		t.Fatalf("correctness drift counts %v faulty streams, the summary %d: %+v", v.Value, total, v)
	}
	if !strings.HasPrefix(v.Detail, strconv.FormatInt(total, 10)+" of 2100 response streams faulty") {
		t.Fatalf("detail %q", v.Detail)
	}

	// A clean run (a correct server) stays clean with its stopping
	// interval counted.
	c = &Collector{}
	for i, ph := range phases {
		c.Interval(&results.IntervalRecord{Row: results.Row{All: results.RowOp{Count: 100, P99: 5}}, Phase: ph, Elapsed: time.Duration(i+1) * time.Second})
	}
	sk = c.Soak(pl, &results.Summary{All: results.OpSummary{Ledger: &results.LedgerSummary{Streams: 2100}}})
	for _, x := range sk.Verdicts {
		if x.Name == "correctness drift" && (!x.Pass || x.Value != 0) {
			t.Fatalf("a clean soak: %+v", x)
		}
	}
}
