package results

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
)

// Merging the results of a test's execution segments (mcpbench merge,
// run --processes): the segments' results directories become the results
// directory of the whole test.
//
//   - Histograms merge exactly: HdrHistograms of one range and precision
//     add bucket by bucket, so the merged percentiles are those of one
//     histogram of every sample (never averaged percentiles). The
//     summary's latencies come from each segment's summary.hlog (every
//     latency the summary gives), the intervals' from histograms.hlog.
//   - Intervals are aligned by wall-clock time: the merged run's clock
//     starts at the earliest segment's start, and a segment's interval
//     ending in (start + (k−1)·iv, start + k·iv] is added into merged
//     interval k (segments started with one --start-at line up exactly).
//   - Counters and verdicts are summed; the measured window is the union
//     of the segments' windows, and rates are counts over it.
//   - Gauges (VUs, sessions, streams, the generator's cores and memory)
//     are levels, not counts: a merged interval's gauge is the sum, over
//     the segments running then, of each one's latest level (its last row
//     in the interval or before it). A segment whose rows end in an
//     earlier interval is carried while it still runs — its last row ends
//     at or after the interval's start, less the slack — and contributes
//     nothing once it has ended; two rows of one segment in one interval
//     count once (the later).
//   - Each segment's own generator cost (a process of its own) is kept in
//     the summary's segments.
//
// Thresholds are not checked here (metrics does not judge): the caller
// checks them against the merged summary (verdict.CheckThresholds, with
// the Merged as the quantile source).

// Merged is the results of a test's segments combined: what the results
// directory of the whole test holds. Build it with MergeResults; Write
// writes it.
type Merged struct {
	Run       *RunInfo
	Summary   *Summary
	Offenders OffendersFile
	// Totals are the merged summary.hlog histograms (by tag).
	Totals map[string]*hdr.Histogram

	ops       []string
	segs      []*Results
	origin    time.Time
	iv        time.Duration
	intervals []*mergedInterval
	series    map[string]*hdr.Histogram // histograms.hlog over the run, by tag
	levels    [][]segLevel              // per segment, its gauges by merged interval (ascending k)
	lastEnd   []time.Time               // per segment, the end of its last row
}

// segLevel is a segment's gauges in merged interval k: those of its last
// row there.
type segLevel struct {
	k                      int
	vus, sessions, streams int64
	cores, rssMB           float64
}

// mergedInterval is one merged interval: the rows and histograms of the
// segments' intervals that ended in it.
type mergedInterval struct {
	k          int
	end        time.Time // the latest end of its rows (the grid's end at most)
	phase      Phase
	rec        IntervalRec
	classes    [outcome.NumClasses]int64
	target     bool
	arrivals   float64          // the schedule's arrivals in the segments' rows (target rate × length)
	secs       float64          // the longest of the rows (s): the rates' span
	response   []*hdr.Histogram // per op
	service    []*hdr.Histogram
	resume     []*hdr.Histogram
	opCount    []int64
	opErrors   []int64
	opResumes  []int64
	opFaulty   []int64
	opChecks   []int64 // failed checks
	allCount   int64
	allErrors  int64
	allResumes int64
	allFaulty  int64
	allChecks  int64
}

// ErrNotSegments is returned when the directories cannot be merged into
// one test: different op lists, or one segment given twice.
var ErrNotSegments = errors.New("not segments of one test")

// MergeResults reads the results directories dirs (segments of one test)
// and merges them. Errors: a directory that cannot be read, ErrNotSegments.
// A segment without summary.json (it crashed) is merged from its interval
// files and named in the summary's notes.
func MergeResults(dirs []string) (*Merged, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no results directory given")
	}
	m := &Merged{series: map[string]*hdr.Histogram{}}
	for _, d := range dirs {
		r, err := ReadResults(d)
		if err != nil {
			return nil, err
		}
		if r.Summary == nil {
			r.Summary = r.Rebuild()
		}
		m.segs = append(m.segs, r)
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	m.grid()
	m.levels, m.lastEnd = make([][]segLevel, len(m.segs)), make([]time.Time, len(m.segs))
	for i, r := range m.segs {
		m.addRows(i, r)
		m.addSeries(r)
	}
	m.gauges()
	m.mergeTotals()
	m.summarize()
	m.runInfo(dirs)
	m.offenders()
	return m, nil
}

// check makes sure the directories are segments of one test: the same
// ops, no segment twice. It sets m.ops.
func (m *Merged) check() error {
	seen := map[string]string{}
	for _, r := range m.segs {
		ops := r.Ops
		if r.Run != nil && len(r.Run.Ops) > 0 {
			ops = r.Run.Ops
		}
		if m.ops == nil {
			m.ops = ops
		} else if !slices.Equal(m.ops, ops) {
			return fmt.Errorf("%w: %s ran ops [%s], %s ran [%s]", ErrNotSegments, m.segs[0].Dir, strings.Join(m.ops, ", "), r.Dir, strings.Join(ops, ", "))
		}
		if sg := segmentOf(r); sg != nil {
			key := sg.Sequence + " " + sg.Segment
			if prev, ok := seen[key]; ok {
				return fmt.Errorf("%w: %s and %s both ran segment %s: merging them would count it twice", ErrNotSegments, prev, r.Dir, sg.Segment)
			}
			seen[key] = r.Dir
		}
	}
	return nil
}

// segmentOf is the segment a results directory ran (nil: the whole test
// or unknown).
func segmentOf(r *Results) *SegmentInfo {
	if r.Run != nil && r.Run.Segment != nil {
		return r.Run.Segment
	}
	if r.Summary != nil {
		return r.Summary.Segment
	}
	return nil
}

// startOf is when a segment's clock started.
func startOf(r *Results) time.Time {
	if r.Run != nil && !r.Run.Started.IsZero() {
		return r.Run.Started
	}
	return r.Summary.Started
}

// grid sets the merged clock: the earliest start, and the interval (the
// commonest length of the segments' rows, a run's last row aside: it
// ends when the run does).
func (m *Merged) grid() {
	lengths := map[time.Duration]int{}
	for i, r := range m.segs {
		if s := startOf(r); i == 0 || s.Before(m.origin) {
			m.origin = s
		}
		for j, iv := range r.Intervals {
			if d := time.Duration(math.Round(iv.Interval*1000)) * time.Millisecond; d > 0 && (j < len(r.Intervals)-1 || len(r.Intervals) == 1) {
				lengths[d]++
			}
		}
	}
	best := 0
	for d, n := range lengths {
		if n > best || n == best && d > m.iv {
			m.iv, best = d, n
		}
	}
	if m.iv <= 0 {
		m.iv = time.Second
	}
}

// slot is the merged interval a row or histogram ending at end goes to:
// k ≥ 1, the interval (origin + (k−1)·iv, origin + k·iv]; a few ms of
// slack absorb the log's rounding.
func (m *Merged) slot(end time.Time) int {
	return max(1, int(math.Ceil(float64(end.Sub(m.origin)-m.slack())/float64(m.iv))))
}

// slack is how far past a grid boundary a row may end and still count in
// the interval before it (the log's rounding).
func (m *Merged) slack() time.Duration { return min(5*time.Millisecond, m.iv/10) }

// at returns merged interval k, creating it.
func (m *Merged) at(k int) *mergedInterval {
	i := sort.Search(len(m.intervals), func(i int) bool { return m.intervals[i].k >= k })
	if i < len(m.intervals) && m.intervals[i].k == k {
		return m.intervals[i]
	}
	n := len(m.ops)
	mi := &mergedInterval{k: k, response: make([]*hdr.Histogram, n), service: make([]*hdr.Histogram, n), resume: make([]*hdr.Histogram, n),
		opCount: make([]int64, n), opErrors: make([]int64, n), opResumes: make([]int64, n), opFaulty: make([]int64, n), opChecks: make([]int64, n)}
	m.intervals = slices.Insert(m.intervals, i, mi)
	return mi
}

// phaseRank orders phases for a merged interval: measure wins.
func phaseRank(p Phase) int {
	switch p {
	case PhaseMeasure:
		return 3
	case PhaseStopping:
		return 2
	case PhaseWarmup:
		return 1
	}
	return 0
}

// addRows adds segment i's (r's) intervals.csv rows: their counters into
// the merged intervals, their gauges into the segment's levels (gauges
// sums them).
func (m *Merged) addRows(i int, r *Results) {
	base := startOf(r)
	for _, row := range r.Intervals {
		end := base.Add(time.Duration(math.Round(row.T*1000)) * time.Millisecond)
		k := m.slot(end)
		mi := m.at(k)
		if end.After(mi.end) {
			mi.end = end
		}
		if phaseRank(row.Phase) > phaseRank(mi.phase) {
			mi.phase = row.Phase
		}
		x := &mi.rec
		mi.arrivals += math.Round(row.TargetRate * row.Interval) // the schedule's arrivals in the row
		mi.secs = max(mi.secs, row.Interval)
		x.Dropped += row.Dropped
		x.Reconnects += row.Reconnects
		if !end.Before(m.lastEnd[i]) { // rows are in time order: the latest row's gauges are the level
			m.lastEnd[i] = end
			lv := segLevel{k: k, vus: row.VUs, sessions: row.Sessions, streams: row.Streams, cores: row.Self.Cores, rssMB: row.Self.RSSMB}
			if n := len(m.levels[i]); n > 0 && m.levels[i][n-1].k == k {
				m.levels[i][n-1] = lv
			} else {
				m.levels[i] = append(m.levels[i], lv)
			}
		}
		if row.Target != nil && !mi.target { // the same process, sampled by each segment: the first sample
			mi.target, x.Target = true, row.Target
		}
		mi.allCount += row.All.Count
		mi.allErrors += row.All.Errors
		mi.allResumes += row.All.Resumes
		mi.allFaulty += row.All.Faulty
		mi.allChecks += row.All.ChecksFailed
		for c := outcome.ClassOK + 1; c < outcome.NumClasses; c++ {
			mi.classes[c] += row.ErrorsByClass[c.String()]
		}
		for i, name := range m.ops {
			o := row.Ops[name]
			mi.opCount[i] += o.Count
			mi.opErrors[i] += o.Errors
			mi.opResumes[i] += o.Resumes
			mi.opFaulty[i] += o.Faulty
			mi.opChecks[i] += o.ChecksFailed
		}
	}
}

// gauges sets each merged interval's gauges: the sum, over the segments
// running in it, of each one's latest level (see the package comment on
// merging). A segment runs in interval k from its first row's interval
// until its last row's end falls before k's start, less the slack.
func (m *Merged) gauges() {
	for _, mi := range m.intervals {
		start := m.origin.Add(time.Duration(mi.k-1)*m.iv - m.slack())
		x := &mi.rec
		x.VUs, x.Sessions, x.Streams, x.Self.Cores, x.Self.RSSMB = 0, 0, 0, 0, 0
		for i, lv := range m.levels {
			j := sort.Search(len(lv), func(j int) bool { return lv[j].k > mi.k }) - 1
			if j < 0 || lv[j].k < mi.k && m.lastEnd[i].Before(start) {
				continue // not started yet, or ended before the interval
			}
			l := lv[j]
			x.VUs += l.vus
			x.Sessions += l.sessions
			x.Streams += l.streams
			x.Self.Cores += l.cores
			x.Self.RSSMB += l.rssMB
		}
	}
}

// addSeries adds segment r's interval histograms (histograms.hlog) to the
// merged intervals and to the run's totals.
func (m *Merged) addSeries(r *Results) {
	index := map[string]int{}
	for i, n := range m.ops {
		index[HlogTag(n)] = i
	}
	for tag, series := range r.Series {
		name, kind := splitTag(tag)
		op, ok := index[name]
		if !ok {
			continue
		}
		for _, h := range series {
			mi := m.at(m.slot(time.UnixMilli(h.EndTimeMs())))
			var dst *[]*hdr.Histogram
			switch kind {
			case "response":
				dst = &mi.response
			case "service":
				dst = &mi.service
			case "resume":
				dst = &mi.resume
			default:
				continue
			}
			mergeInto(&(*dst)[op], h)
			t := m.series[tag]
			mergeInto(&t, h)
			m.series[tag] = t
		}
	}
}

// mergeInto adds h to *dst (created on first use).
func mergeInto(dst **hdr.Histogram, h *hdr.Histogram) {
	if h == nil {
		return
	}
	if *dst == nil {
		*dst = NewHistogram()
	}
	(*dst).Merge(h)
}

// mergeTotals merges the segments' summary.hlog histograms; a segment
// without one gives what histograms.hlog has (response, service and
// resume times), and is named in the notes by summarize.
func (m *Merged) mergeTotals() {
	m.Totals = map[string]*hdr.Histogram{}
	for _, r := range m.segs {
		totals := r.Totals
		if totals == nil {
			totals = map[string]*hdr.Histogram{}
			for tag, h := range r.Histograms {
				totals[TagOp+tag] = h
			}
		}
		for tag, h := range totals {
			t := m.Totals[tag]
			mergeInto(&t, h)
			m.Totals[tag] = t
		}
	}
}

// Quantile implements the quantile source of thresholds and compare from
// the merged histograms.hlog: op is an op name or "all"; kind response,
// service, resume or (from summary.hlog) ttfb.
func (m *Merged) Quantile(op, kind string, q float64) (float64, bool) {
	h := NewHistogram()
	for _, n := range m.ops {
		if op != "all" && n != op {
			continue
		}
		if kind == "ttfb" {
			if x := m.Totals[TagOp+HlogTag(n)+".ttfb"]; x != nil {
				h.Merge(x)
			}
			continue
		}
		if x := m.series[HlogTag(n)+"."+kind]; x != nil {
			h.Merge(x)
		}
	}
	if h.TotalCount() == 0 {
		return 0, false
	}
	return textfmt.Round3(float64(h.ValueAtQuantile(q)) / 1000), true
}

// interval makes a merged interval's aggregate and row: counts summed,
// percentiles from the merged histograms.
func (m *Merged) interval(mi *mergedInterval) (Interval, Row) {
	gridEnd := m.origin.Add(time.Duration(mi.k) * m.iv)
	start, end := gridEnd.Add(-m.iv), mi.end
	if end.IsZero() || end.After(gridEnd) || !end.After(start) {
		end = gridEnd
	}
	iv := Interval{Start: start, End: end, All: NewOpStats()}
	row := Row{Start: start, End: end, Reconnects: mi.rec.Reconnects,
		VUs: mi.rec.VUs, Sessions: mi.rec.Sessions, Streams: mi.rec.Streams, Dropped: mi.rec.Dropped,
		Self: ProcRow{Cores: textfmt.Round3(mi.rec.Self.Cores), RSSMB: textfmt.Round3(mi.rec.Self.RSSMB)}, Target: mi.rec.Target}
	for i := range m.ops {
		o := &OpStats{Response: HistOf(mi.response[i]), Service: HistOf(mi.service[i]), TTFB: NewHist(), Resume: histOrNil(mi.resume[i]),
			Count: mi.opCount[i], Errors: mi.opErrors[i], Resumes: mi.opResumes[i], Faulty: mi.opFaulty[i]}
		iv.Ops = append(iv.Ops, o)
		iv.All.Response.Merge(o.Response)
		iv.All.Service.Merge(o.Service)
		l := LatencyOf(o.Response)
		row.Ops = append(row.Ops, RowOp{Count: o.Count, Errors: o.Errors, Resumes: o.Resumes, Faulty: o.Faulty, ChecksFailed: mi.opChecks[i], P50: l.P50, P90: l.P90, P99: l.P99, Max: l.Max, Timed: o.Response.TotalCount()})
	}
	l := LatencyOf(iv.All.Response)
	row.All = RowOp{Count: mi.allCount, Errors: mi.allErrors, Resumes: mi.allResumes, Dropped: mi.rec.Dropped, Faulty: mi.allFaulty, ChecksFailed: mi.allChecks, Classes: mi.classes,
		P50: l.P50, P90: l.P90, P99: l.P99, Max: l.Max, Timed: iv.All.Response.TotalCount()}
	iv.All.Count, iv.All.Errors, iv.All.Faulty = mi.allCount, mi.allErrors, mi.allFaulty
	// Rates over the longest of its rows: the span of the merged interval
	// when the segments are aligned, and no shorter than a segment's own
	// interval when they are not.
	if secs := mi.secs; secs > 0 {
		row.TargetRate, row.Rate = textfmt.Round3(mi.arrivals/secs), textfmt.Round3(float64(mi.allCount)/secs)
	}
	return iv, row
}

// histOrNil is h as a Hist, nil for nil.
func histOrNil(h *hdr.Histogram) *Hist {
	if h == nil {
		return nil
	}
	return HistOf(h)
}

// runInfo is the merged run.json: the first segment's description, the
// earliest start, no segment, and the directories merged.
func (m *Merged) runInfo(dirs []string) {
	var info RunInfo
	for _, r := range m.segs {
		if r.Run != nil {
			info = *r.Run
			break
		}
	}
	if info.Tool == "" {
		info.Tool = "mcpbench"
	}
	info.Started, info.Ops, info.Segment = m.origin, m.ops, nil
	info.Merged = slices.Clone(dirs)
	m.Run = &info
}

// offenders concatenates the segments' offenders (the first 100) and sums
// their counts.
func (m *Merged) offenders() {
	m.Offenders.First = []Offender{}
	for _, r := range m.segs {
		if r.Offenders == nil {
			continue
		}
		m.Offenders.Faulty += r.Offenders.Faulty
		for _, o := range r.Offenders.First {
			if len(m.Offenders.First) < 100 {
				m.Offenders.First = append(m.Offenders.First, o)
			}
		}
		m.Offenders.CheckFailures += r.Offenders.CheckFailures
		for _, o := range r.Offenders.FirstChecks {
			if len(m.Offenders.FirstChecks) < 100 {
				m.Offenders.FirstChecks = append(m.Offenders.FirstChecks, o)
			}
		}
	}
}
