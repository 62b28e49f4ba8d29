package results

import (
	"time"
)

// A Sink receives a run's results as they are made: Start when the
// measured clock starts (the run's description, its negotiated protocol
// and start time filled in), one Interval per interval, and End with the
// outcome. The results directory (ResultsDir) is one; the live progress
// display is another; a Prometheus endpoint or a merged multi-process run
// plug in the same way.
//
// The engine calls a run's sinks from one goroutine at a time, in order:
// Start at most once (never when the run could not start), Interval from
// its collector goroutine, End exactly once. A sink must not block for
// long: a slow sink must not push back on the load. End may follow no
// Start (the run stopped during set-up): the sink then has only the
// description End carries.
type Sink interface {
	Start(info *RunInfo)
	Interval(rec *IntervalRecord)
	End(end *RunEnd)
}

// Checkpointer is a Sink that also takes the summary of the measured
// window so far, every checkpoint period of a long run (soak).
type Checkpointer interface {
	Checkpoint(sum *Summary)
}

// MeasuredSink is a Sink that also takes the run's summary as soon as its
// ops have ended, before its sessions are closed (DELETE, which may hang
// up to its timeout); End follows with the closes counted. The results
// directory writes summary.json then, so a process stopped at once while
// the sessions close (a second Ctrl-C) keeps the run's summary.
type MeasuredSink interface {
	Measured(sum *Summary)
}

// Phase is where a run stands in an interval.
type Phase string

// Interval phases, as intervals.csv and the progress display show them.
const (
	PhaseWarmup   Phase = "warm-up"  // the interval ended before the measured window opened: it holds no measured op
	PhaseMeasure  Phase = "measure"  // the interval holds measured ops (it ended in the window, or began in it)
	PhaseStopping Phase = "stopping" // the graceful stop after the window
)

// IntervalRecord is one interval of a run as the sinks get it.
type IntervalRecord struct {
	// Interval is the recorder's aggregate, with its histograms; they are
	// owned by the recorder and valid during the call only.
	Interval Interval
	// Row is the interval as intervals.csv writes it.
	Row   Row
	Names []string // op names (index = op)
	Phase Phase
	// Elapsed is the time since the run's start (warm-up included);
	// Remaining the time left in the measured window.
	Elapsed, Remaining time.Duration
	// TargetRate is the arrival rate asked for (open model), 0 otherwise.
	TargetRate float64
	// Gauges when the interval ended, and drops so far.
	VUs, Sessions, Streams, Dropped int64
}

// RunEnd is a run's outcome, as End gets it.
type RunEnd struct {
	// Info describes the run (for a sink whose Start was never called).
	Info      *RunInfo
	Summary   *Summary
	Offenders OffendersFile
	// Histograms are the histograms behind the summary, tagged as
	// summary.hlog tags them (see metrics.Recorder.Histograms); nil: none kept.
	Histograms map[string]*Hist
}
