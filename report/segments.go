package report

import (
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// segments says which execution segment a run was, or, for a merged run,
// lists its segments with each one's own generator cost (each ran in a
// process of its own).
func (p *printer) segments(s *results.Summary) {
	if sg := s.Segment; sg != nil {
		p.F("Segment %s of the test (%d of %d in %s)", sg.Segment, sg.Index+1, sg.Count, sg.Sequence)
		if !sg.StartAt.IsZero() {
			p.F(", clock aligned at %s", sg.StartAt.UTC().Format(time.RFC3339Nano))
		}
		p.F(": merge the segments' results with mcpbench merge\n")
	}
	if len(s.Segments) == 0 {
		return
	}
	p.F("\nSegments merged (%d): each one's own generator cost\n", len(s.Segments))
	p.F("%-12s %9s %9s %7s %8s %8s %9s %6s %8s  %s\n", "segment", "count", "rate/s", "errors", "dropped", "CPU-s", "µs/op", "cores", "RSS MB", "results")
	for _, x := range s.Segments {
		name := "whole"
		if x.Segment != nil {
			name = x.Segment.Segment
		}
		g := x.Generator
		p.F("%-12s %9d %9.1f %7d %8d %8.2f %9.1f %6.2f %8.0f  %s", name, x.Count, x.Rate, x.Errors, x.Dropped, g.CPUSeconds, g.CPUPerOpUS, g.Cores, g.MaxRSSMB, x.Dir)
		if x.Interrupted {
			p.F("  (interrupted)")
		}
		p.F("\n")
	}
}
