package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/spf13/cobra"
)

// scaleFlags are run's flags for tests bigger than one process: execution
// segments, the aligned start, and child processes.
type scaleFlags struct {
	segment, sequence, startAt string
	processes                  int
	startDelay                 time.Duration
}

// registerScale defines them (run only: sweep and soak run whole tests).
func (s *scaleFlags) registerScale(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&s.segment, "segment", "", "run one execution segment of the test: INDEX/COUNT (0-based, e.g. 0/4: a quarter of the arrival rate, VUs and churn) or FROM:TO (k6 style, e.g. 1/4:1/2); merge the segments' results with 'mcpbench merge'")
	fl.StringVar(&s.sequence, "segment-sequence", "", "the segments the test is cut into, k6 style: 0,1/4,1/2,1 (default: COUNT equal ones)")
	fl.StringVar(&s.startAt, "start-at", "", "start the run's clock at this time (RFC 3339, unix seconds, or +DURATION from now): sessions are set up before it, so segments started apart share one schedule")
	fl.IntVar(&s.processes, "processes", 0, "run the test as N child processes of mcpbench (segments 0/N … N−1/N, each with its own open-file limit and GC), show one merged progress line, and merge their results into --out (each in --out/segment-I)")
	fl.DurationVar(&s.startDelay, "start-delay", 0, "with --processes and no --start-at: start the clock this long after the children are launched, for their set-up (default 5s + 1ms per session of a child)")
}

// parse reads --segment, --segment-sequence and --start-at (now: for a
// relative --start-at). Errors name the flag.
func (s *scaleFlags) parse(now time.Time) (*workload.Segment, time.Time, error) {
	seg, err := workload.ParseSegment(s.segment, s.sequence)
	if err != nil {
		return nil, time.Time{}, err
	}
	at, err := parseStartAt(s.startAt, now)
	return seg, at, err
}

// parseStartAt reads --start-at: RFC 3339, unix seconds (a fraction
// allowed), or +DURATION from now; "" is none.
func parseStartAt(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return time.Time{}, nil
	case strings.HasPrefix(v, "+"):
		d, err := time.ParseDuration(v[1:])
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("--start-at %q: want +DURATION such as +30s", v)
		}
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && !math.IsInf(f, 0) {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))), nil
	}
	return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time (2026-11-21T06:00:00Z), unix seconds or +DURATION", v)
}

// checkScale refuses flags that do not go together.
func (s *scaleFlags) check(set func(string) bool) error {
	if s.processes < 0 || s.processes > maxProcesses {
		return fmt.Errorf("--processes %d: want 1 … %d", s.processes, maxProcesses)
	}
	if s.processes > 1 && (set("segment") || set("segment-sequence")) {
		return errors.New("--processes runs its own segments: leave --segment and --segment-sequence out")
	}
	if set("start-delay") && s.processes < 2 {
		return errors.New("--start-delay goes with --processes")
	}
	return nil
}

// maxProcesses bounds --processes.
const maxProcesses = 1024

// shareProcs lowers GOMAXPROCS to what the segment's share of an
// open-model rate needs (setProcs sized it for the whole rate), unless
// --procs was given.
func (e *env) shareProcs(seg *workload.Segment) {
	if e.f.procs > 0 {
		return
	}
	if n := workload.SegmentProcs(e.profile, seg, e.embedded, runtime.NumCPU()); n > 0 && n < runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(n)
	}
}

// segmentExit is exitFor for one segment of a test: a segment with no VU
// of the test's ran nothing and failed nothing, and crossed thresholds do
// not fail it (the test's thresholds are judged on the merged run: a
// segment's percentiles are not the test's).
func segmentExit(w io.Writer, sum *results.Summary, runErr error) error {
	if runErr == nil && !sum.Interrupted && sum.MaxVUs == 0 {
		return nil
	}
	if results.ThresholdsFailed(sum.Thresholds) > 0 {
		fmt.Fprintln(w, "mcpbench: this segment crossed thresholds (see its summary); the test's are judged on the merged run (mcpbench merge)")
		s := *sum
		s.Thresholds = nil
		sum = &s
	}
	return exitFor(sum, runErr)
}
