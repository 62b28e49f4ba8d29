package results

// Write writes the merged results to dir as a run's results directory:
// run.json, intervals.csv, histograms.hlog, summary.hlog, offenders.json
// and summary.json (through a ResultsDir, their only writer).
func (m *Merged) Write(dir string) error {
	w, err := NewResultsDir(dir)
	if err != nil {
		return err
	}
	m.Replay(w)
	return w.Err()
}

// Replay hands the merged run to sinks the way a run hands them its own
// (see Sink): Start with the merged run.json, one Interval per merged
// interval — its phase, its row, its histograms (response and service
// time per op and of all ops, merged from the segments' histograms.hlog),
// the time since the merged clock's start, the time left in the measured
// window, and the gauges summed — and End with the merged summary. A
// sweep step or a soak run as child processes (--processes) is judged
// from it by the sinks that judge an in-process run. The caller completes
// m.Summary first (thresholds, server counters): End hands it as it is.
// The sinks are called from the caller's goroutine, in order.
func (m *Merged) Replay(sinks ...Sink) {
	for _, s := range sinks {
		s.Start(m.Run)
	}
	_, windowEnd := m.window()
	var dropped int64
	for _, mi := range m.intervals {
		iv, row := m.interval(mi)
		dropped += row.Dropped
		rec := &IntervalRecord{Interval: iv, Row: row, Names: m.ops, Phase: mi.phase, Elapsed: row.End.Sub(m.origin),
			TargetRate: row.TargetRate, VUs: row.VUs, Sessions: row.Sessions, Streams: row.Streams, Dropped: dropped}
		if row.End.Before(windowEnd) {
			rec.Remaining = windowEnd.Sub(row.End)
		}
		for _, s := range sinks {
			s.Interval(rec)
		}
	}
	end := &RunEnd{Info: m.Run, Summary: m.Summary, Offenders: m.Offenders, Histograms: HistsOf(m.Totals)}
	for _, s := range sinks {
		s.End(end)
	}
}
