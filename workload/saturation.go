package workload

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcpbench/mcpbench/results"
)

// loadPoint is an interval's load (live VUs, or the arrival rate asked
// for) and its service time p50 (ms).
type loadPoint struct {
	load float64
	svc  float64
}

// serviceRoseWithLoad reports whether the service time rose with the load
// the target was given: over the measured window's intervals sorted by
// load, the median service p50 of the busiest third at least 1.5 times
// (and 5 ms above) that of the lightest third, the busiest under more
// load. A server with spare capacity serves at the same speed under more
// load; one that queues takes longer with each op in flight.
// Load is the interval's live VUs (the open model adds them when all are
// busy: the high-water mark of ops in flight), else its arrival rate (a
// ramp). It returns both ends and the load's unit.
func (e *engine) serviceRoseWithLoad() (light, busy loadPoint, unit string, ok bool) {
	for _, by := range []struct {
		unit string
		of   func(r *results.Row) float64
	}{
		{"VUs", func(r *results.Row) float64 { return float64(r.VUs) }},
		{"ops/s asked", func(r *results.Row) float64 { return r.TargetRate }},
	} {
		var pts []loadPoint
		for i := range e.rows {
			r := &e.rows[i]
			if !r.Start.Before(e.warmEnd) && r.End.Before(e.end.Add(e.opts.Interval)) && r.All.Count > 0 {
				pts = append(pts, loadPoint{by.of(r), r.All.SvcP50})
			}
		}
		if len(pts) < 3 {
			return light, busy, "", false
		}
		slices.SortStableFunc(pts, func(a, b loadPoint) int { return cmp.Compare(a.load, b.load) })
		third := len(pts) / 3
		light, busy = medians(pts[:third]), medians(pts[len(pts)-third:])
		if busy.load > light.load && busy.svc >= 1.5*light.svc && busy.svc >= light.svc+5 {
			return light, busy, by.unit, true
		}
	}
	return light, busy, "", false
}

// medians returns the median load and the median service time of pts.
func medians(pts []loadPoint) loadPoint {
	load := make([]float64, len(pts))
	svc := make([]float64, len(pts))
	for i, p := range pts {
		load[i], svc[i] = p.load, p.svc
	}
	slices.Sort(load)
	slices.Sort(svc)
	return loadPoint{load[len(pts)/2], svc[len(pts)/2]}
}

// saturation says why the target reads as saturated ("" when it does
// not): its service time climbed during the run, or rose with the load.
// Then more VUs would only queue more work, at the cap or not.
func (e *engine) saturation(svcMean float64) string {
	if e.serviceClimbed() {
		return fmt.Sprintf("its service time climbed during the run (mean %.1f ms at the end)", svcMean)
	}
	if light, busy, unit, ok := e.serviceRoseWithLoad(); ok {
		return fmt.Sprintf("its service time rose with load (interval service p50 %.1f ms at %.4g %s, %.1f ms at %.4g %s)", light.svc, light.load, unit, busy.svc, busy.load, unit)
	}
	return ""
}
