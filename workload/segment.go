package workload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// Execution segments (k6's idea, lib/execution_segment.go): a test is cut
// into a sequence of segments (p0, p1], (p1, p2], … with 0 = p0 < … < pn =
// 1; a process that runs one segment runs a deterministic share of the
// test, computed from its own segment alone, so n processes (on one
// machine or in n pods) run the whole test with no coordinator.
//
// What is split, and how:
//
//   - Arrival slots (open model). Slots 0, 1, 2 … of the schedule are
//     striped over the segments: within every block of LCD slots (LCD: the
//     lowest common denominator of the segments' lengths) a segment owns
//     the positions the striping gives it, its length × LCD of them, spread
//     evenly. Segment k's j-th slot is the global slot Slot(j), due when the
//     unsegmented schedule makes it due and running the op the unsegmented
//     run would give it (the op mix hashes the global slot): the segments'
//     slots together are exactly the unsegmented schedule's.
//   - VUs. VU numbers are striped the same way: a segment runs the VUs
//     whose global numbers it owns (Count of them below any bound), and a
//     VU keeps its global number, so its random stream (op choice in the
//     closed model, its session's lifetime under churn), its fault schedule
//     (chaos draws per VU) and the {{vu}} of templated arguments are the
//     unsegmented run's. Stages activate a VU when the global ramp passes
//     its number.
//   - Churn: a session lives around VUs / churn rate (both global), so each
//     segment replaces its share.
//   - Storms cut every open stream at a time since the start: each segment
//     cuts its own, at the same instant when the segments share a start
//     (--start-at).
//   - Templated arguments: {{seq}} and the turns of a data file read in
//     sequential order are run-wide counters; a segment takes its share of
//     their numbers (Slot of its own count), so no two segments send the
//     same {{seq}} or take the same turn of a row.

// Segment is one execution segment of a sequence. The zero value and nil
// are the whole test. Immutable; safe for concurrent use.
type Segment struct {
	seq   []*big.Rat // the sequence's points: 0 = seq[0] < … < seq[n] = 1
	index int        // the segment is (seq[index], seq[index+1]]
	lcd   uint64     // positions per block of the striping
	pos   []uint64   // the positions of a block the segment owns, ascending
}

// segmentSettings are the settings ParseSegment's errors name.
var segmentSettings = []string{"segment", "segment_sequence"}

// maxLCD bounds the striping block: a sequence whose lengths need a finer
// grain is refused rather than allocated.
const maxLCD = 1 << 20

// ParseSegment reads a segment as --segment gives it: "i/n" is the i-th
// (0-based) of n segments — of n equal ones, or of the sequence seq when
// one is given ("0,1/4,1,…", k6's --execution-segment-sequence; it must
// then have n segments); "a:b" is the segment from a to b (fractions,
// decimals or percentages, k6's --execution-segment), in seq when given
// (it must be one of its segments), else in the sequence 0, a, b, 1. ""
// is the whole test (nil). Errors are *SettingError, of the settings
// segment (s) and segment_sequence (seq).
func ParseSegment(s, seq string) (*Segment, error) {
	s, seq = strings.TrimSpace(s), strings.TrimSpace(seq)
	if s == "" {
		if seq != "" {
			return nil, profile.SettingErrorf(segmentSettings, "{segment_sequence} needs {segment}")
		}
		return nil, nil
	}
	var points []*big.Rat
	if seq != "" {
		var err error
		if points, err = parseSequence(seq); err != nil {
			return nil, profile.SettingErrorf(segmentSettings, "{segment_sequence} %q: %w", seq, err)
		}
	}
	if a, b, ok := strings.Cut(s, ":"); ok {
		from, err1 := parseRat(a)
		to, err2 := parseRat(b)
		if err := cmp.Or(err1, err2); err != nil {
			return nil, profile.SettingErrorf(segmentSettings, "{segment} %q: %w", s, err)
		}
		if from.Sign() < 0 || from.Cmp(to) >= 0 || to.Cmp(big.NewRat(1, 1)) > 0 {
			return nil, profile.SettingErrorf(segmentSettings, "{segment} %q: want 0 ≤ from < to ≤ 1", s)
		}
		if points == nil {
			points = []*big.Rat{new(big.Rat)}
			for _, p := range []*big.Rat{from, to} {
				if p.Cmp(points[len(points)-1]) > 0 {
					points = append(points, p)
				}
			}
			if to.Cmp(big.NewRat(1, 1)) < 0 {
				points = append(points, big.NewRat(1, 1))
			}
		}
		for i := range len(points) - 1 {
			if points[i].Cmp(from) == 0 && points[i+1].Cmp(to) == 0 {
				return newSegment(points, i)
			}
		}
		return nil, profile.SettingErrorf(segmentSettings, "{segment} %q is not a segment of the sequence %s", s, ratsString(points))
	}
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return nil, profile.SettingErrorf(segmentSettings, "{segment} %q: want INDEX/COUNT with 0 ≤ INDEX < COUNT (e.g. 0/4), or FROM:TO (e.g. 1/4:1/2)", s)
	}
	if points == nil {
		return SegmentOf(i, n)
	}
	if len(points)-1 != n {
		return nil, profile.SettingErrorf(segmentSettings, "{segment} %q: the sequence %s has %d segments, not %d", s, ratsString(points), len(points)-1, n)
	}
	return newSegment(points, i)
}

// SegmentOf returns segment i (0-based) of n equal ones; n == 1 is the
// whole test (nil).
func SegmentOf(i, n int) (*Segment, error) {
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("segment %d/%d: want 0 ≤ index < count", i, n)
	}
	if n == 1 {
		return nil, nil
	}
	points := make([]*big.Rat, n+1)
	for k := range points {
		points[k] = big.NewRat(int64(k), int64(n))
	}
	return newSegment(points, i)
}

// parseSequence reads "p0,p1,…,pn": at least two points, increasing, from 0
// to 1.
func parseSequence(s string) ([]*big.Rat, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 {
		return nil, errors.New("want at least two points, e.g. 0,1/2,1")
	}
	var out []*big.Rat
	for _, p := range parts {
		r, err := parseRat(p)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && r.Cmp(out[len(out)-1]) <= 0 {
			return nil, fmt.Errorf("points must increase (%s after %s)", r.RatString(), out[len(out)-1].RatString())
		}
		out = append(out, r)
	}
	if out[0].Sign() != 0 || out[len(out)-1].Cmp(big.NewRat(1, 1)) != 0 {
		return nil, errors.New("the sequence must start at 0 and end at 1")
	}
	return out, nil
}

// parseRat reads a fraction (1/4), a decimal (0.25) or a percentage (25%).
func parseRat(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		r, ok := new(big.Rat).SetString(p)
		if !ok {
			return nil, fmt.Errorf("%q is not a percentage", s)
		}
		return r.Quo(r, big.NewRat(100, 1)), nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a fraction, decimal or percentage", s)
	}
	return r, nil
}

func ratsString(points []*big.Rat) string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = p.RatString()
	}
	return strings.Join(out, ",")
}

// newSegment computes the striping of the sequence (k6's algorithm: the
// positions 0 … LCD−1 of a block go, in order, to the largest segment
// that has fallen behind its share) and keeps segment index's positions.
func newSegment(points []*big.Rat, index int) (*Segment, error) {
	n := len(points) - 1
	lens := make([]*big.Rat, n)
	lcd := big.NewInt(1)
	for i := range n {
		lens[i] = new(big.Rat).Sub(points[i+1], points[i])
		d := lens[i].Denom()
		g := new(big.Int).GCD(nil, nil, lcd, d)
		lcd.Mul(lcd, new(big.Int).Quo(d, g))
		if !lcd.IsInt64() || lcd.Int64() > maxLCD {
			return nil, fmt.Errorf("segment sequence %s: too fine (its lengths need blocks of more than %d slots)", ratsString(points), maxLCD)
		}
	}
	L := lcd.Int64()
	type part struct {
		norm  int64 // length × LCD: the positions of a block it owns
		index int
	}
	parts := make([]part, n)
	for i, l := range lens {
		parts[i] = part{norm: new(big.Int).Quo(new(big.Int).Mul(l.Num(), lcd), l.Denom()).Int64(), index: i}
	}
	slices.SortStableFunc(parts, func(a, b part) int { return cmp.Compare(b.norm, a.norm) })
	chosen := make([]int64, n)
	s := &Segment{seq: points, index: index, lcd: uint64(L)}
	for p := range L {
		for k := range parts {
			num, den := chosen[k]*L, parts[k].norm
			if p > num/den || (p == num/den && num%den == 0) {
				chosen[k]++
				if parts[k].index == index {
					s.pos = append(s.pos, uint64(p))
				}
				break
			}
		}
	}
	return s, nil
}

// Whole reports whether s is the whole test (nil or the zero value).
func (s *Segment) Whole() bool { return s == nil || len(s.pos) == 0 }

// Slot returns the global number of the segment's j-th slot (or VU):
// slots are numbered 0, 1, 2 … in the unsegmented test.
func (s *Segment) Slot(j uint64) uint64 {
	if s.Whole() {
		return j
	}
	m := uint64(len(s.pos))
	return j/m*s.lcd + s.pos[j%m]
}

// Count returns how many of the global numbers 0 … n−1 the segment owns:
// its share of n VUs (the segments' counts add up to n).
func (s *Segment) Count(n int) int {
	if s.Whole() || n <= 0 {
		return max(n, 0)
	}
	full, rest := uint64(n)/s.lcd, uint64(n)%s.lcd
	c := full * uint64(len(s.pos))
	for _, p := range s.pos {
		if p < rest {
			c++
		}
	}
	return int(c)
}

// Share is the segment's length: its fraction of the test (1 for the
// whole).
func (s *Segment) Share() float64 {
	if s.Whole() {
		return 1
	}
	f, _ := new(big.Rat).Sub(s.seq[s.index+1], s.seq[s.index]).Float64()
	return f
}

// String is the segment as FROM:TO ("1/4:1/2"; "0:1" for the whole).
func (s *Segment) String() string {
	if s.Whole() {
		return "0:1"
	}
	return s.seq[s.index].RatString() + ":" + s.seq[s.index+1].RatString()
}

// Info describes the segment for run.json and summary.json (nil for the
// whole test); startAt is the aligned start (zero: none).
func (s *Segment) Info(startAt time.Time) *results.SegmentInfo {
	if s.Whole() {
		if startAt.IsZero() {
			return nil
		}
		return &results.SegmentInfo{Segment: "0:1", Sequence: "0,1", Index: 0, Count: 1, StartAt: startAt}
	}
	return &results.SegmentInfo{Segment: s.String(), Sequence: ratsString(s.seq), Index: s.index, Count: len(s.seq) - 1, StartAt: startAt}
}

// Options.Segment and Options.StartAt: the engine runs the segment's share
// (share, vuID, slot, segmentSchedule below). With StartAt the sessions are
// set up first and the clock starts at StartAt (waitStart, clockStart), so
// segments started apart share one schedule; a clock whose set-up ended
// after StartAt still starts at it (ops already due are late, or dropped
// past max_delay) and the summary says so.

// segmented is a schedule's share for a segment: its j-th op is the
// schedule's op Slot(j).
type segmented struct {
	s   Schedule
	seg *Segment
}

var _ Schedule = segmented{}

// Pace implements Schedule.
func (x segmented) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return x.s.Pace(elapsed, x.seg.Slot(hits))
}

// Rate implements Schedule: the segment's share of the rate.
func (x segmented) Rate(elapsed time.Duration) float64 { return x.s.Rate(elapsed) * x.seg.Share() }

// share sets the segment's share of the VUs: the numbers it owns below
// the profile's VUs, max_vus and peak. An open-model segment may always
// start one VU: with fewer VUs than segments, one without any could not
// run its arrivals.
func (e *engine) share() {
	pl, seg := e.pl, e.opts.Segment
	e.vus, e.maxVUs, e.peakVUs = seg.Count(pl.VUs), seg.Count(pl.MaxVUs), seg.Count(pl.PeakVUs)
	if seg.Whole() {
		return
	}
	if pl.Open {
		e.maxVUs = max(e.maxVUs, 1)
		return
	}
	if e.peakVUs == 0 {
		e.notes = append(e.notes, fmt.Sprintf("segment %s has no VU: the test's %d VUs are striped over its segments", seg, pl.PeakVUs))
	}
}

// vuID is the number, in the whole test, of the segment's VU number local.
func (e *engine) vuID(local int) int { return int(e.opts.Segment.Slot(uint64(local))) }

// slot is the number, in the whole test, of the segment's arrival slot h.
func (e *engine) slot(h uint64) uint64 { return e.opts.Segment.Slot(h) }

// segmentSchedule is the segment's share of the open model's arrivals
// (the closed model's ramp of active VUs stays whole: a VU is active when
// the ramp passes its global number).
func (e *engine) segmentSchedule(s Schedule) Schedule {
	if s == nil || e.opts.Segment.Whole() || !e.pl.Open {
		return s
	}
	return segmented{s: s, seg: e.opts.Segment}
}

// waitStart waits until --start-at (or ctx's end), unless no session
// could be set up (the run ends at once). A set-up that ended after it is
// noted: the ops due meanwhile start late (a late wake-up is start lag).
func (e *engine) waitStart(ctx context.Context, sessions []*driver.Session) {
	at := e.opts.StartAt
	if at.IsZero() || ctx.Err() != nil {
		return
	}
	if len(sessions) > 0 && !slices.ContainsFunc(sessions, func(s *driver.Session) bool { return s != nil }) {
		return
	}
	if d := time.Until(at); d > 0 {
		netutil.SleepCtx(ctx, d)
	} else if -d >= time.Millisecond {
		e.mu.Lock()
		e.notes = append(e.notes, fmt.Sprintf("the clock started at --start-at %s, but the set-up ended %v after it: ops due meanwhile were late (or dropped past max_delay)", at.Format(time.RFC3339Nano), (-d).Round(time.Millisecond)))
		e.mu.Unlock()
	}
}

// clockStart is the run's start: --start-at when given, else now.
func (e *engine) clockStart() time.Time {
	if at := e.opts.StartAt; !at.IsZero() {
		return at
	}
	return time.Now()
}

// useSegment makes the plan's run-wide argument counters ({{seq}},
// sequential data rows) take the segment's share of their numbers (nil:
// all of them).
func (pl *Plan) useSegment(seg *Segment) {
	if seg.Whole() {
		seg = nil
	}
	var slots argtmpl.Slotter // nil: the whole test
	if seg != nil {
		slots = seg
	}
	for _, a := range pl.args {
		a.SetSegment(slots)
	}
}
