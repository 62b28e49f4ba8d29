package launch

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// segmentAndStart reads Spec.Segment, SegmentSequence and StartAt (a
// relative start from now). Errors are usage errors naming the flag.
func (e *env) segmentAndStart() (*workload.Segment, time.Time, error) {
	seg, err := workload.ParseSegment(e.spec.Segment, e.spec.SegmentSequence)
	if err != nil {
		return nil, time.Time{}, WithExitCode(ExitUsage, err)
	}
	at, err := ParseStartAt(e.spec.StartAt, time.Now())
	if err != nil {
		return nil, time.Time{}, WithExitCode(ExitUsage, err)
	}
	return seg, at, nil
}

// ParseStartAt reads --start-at: RFC 3339, unix seconds (a fraction
// allowed), or +DURATION from now; "" is none.
func ParseStartAt(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return time.Time{}, nil
	case strings.HasPrefix(v, "+"):
		d, err := time.ParseDuration(v[1:])
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("%s %q: want +DURATION such as +30s", setting.StartAt, v)
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
	return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time (2026-11-21T06:00:00Z), unix seconds or +DURATION", setting.StartAt, v)
}

// checkScale refuses settings that do not go together.
func (e *env) checkScale() error {
	s := &e.spec
	if s.Processes < 0 || s.Processes > MaxProcesses {
		return Usagef("%s %d: want 1 … %d", setting.Processes, s.Processes, MaxProcesses)
	}
	if s.Processes > 1 && (s.Segment != "" || s.SegmentSequence != "") {
		return Usagef("%s runs its own segments: leave %s and %s out", setting.Processes, setting.Segment, setting.SegmentSequence)
	}
	if s.StartDelay != 0 && s.Processes < 2 {
		return Usagef("%s goes with %s", setting.StartDelay, setting.Processes)
	}
	return nil
}

// MaxProcesses bounds Spec.Processes.
const MaxProcesses = 1024

// shareProcs lowers GOMAXPROCS to what the segment's share of an
// open-model rate needs (setProcs sized it for the whole rate), unless
// --procs was given.
func (e *env) shareProcs(seg *workload.Segment) {
	if e.spec.Procs > 0 {
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
