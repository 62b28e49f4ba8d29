package results

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/outcome"
)

// Histogram range in microseconds: a recorded value is clamped to
// [HistMin, HistMax].
const (
	HistMin     = 1
	HistMax     = int64(time.Hour / time.Microsecond)
	histSigFigs = 3
)

// NewHistogram returns a histogram with the package's range (µs).
func NewHistogram() *hdr.Histogram { return hdr.New(HistMin, HistMax, histSigFigs) }

// OpStats is what was recorded for one op over some span.
type OpStats struct {
	Response *Hist // response time, µs (end − intended start)
	Service  *Hist // service time, µs (end − actual start)
	TTFB     *Hist // time to first byte, µs
	Resume   *Hist // time to resume a broken stream, µs (nil until one)
	Wait     *Hist // reconnect wait before a resume, µs (nil until one)
	// DropLB holds each dropped op's response time lower bound, µs: from
	// its intended start to when a VU found it too late to send (nil until
	// one). Had it been sent then, its response time would be at least
	// that.
	DropLB *Hist

	Count        int64 // completed ops (errors included)
	Errors       int64 // ops with a class other than ok
	Classes      [outcome.NumClasses]int64
	Status       StatusCounts // by HTTP status (0: no response)
	BytesIn      int64
	BytesOut     int64
	Events       int64
	Progress     int64
	Resumes      int64 // resume attempts
	ResumesOK    int64 // attempts the server accepted
	EarlyResume  int64 // attempts made before the retry hint had passed
	Reinits      int64
	Reissues     int64
	ReissuedOK   int64         // ops that completed after a re-issue
	Wasted       time.Duration // time on broken attempts that were re-issued
	InputRounds  int64         // input_required retries
	Verdicts     [outcome.NumVerdicts]int64
	Streams      int64 // streams the ledger judged
	Faulty       int64 // streams with at least one verdict
	Dropped      int64 // ops the schedule could not start (no free VU, queue full)
	Interrupted  int64 // ops cut short by the end of the run (not in latency)
	LateStarts   int64 // completed ops sent late enough to change their response time (LateStartFraction)
	Throttled    int64 // ops answered 429/503 with a Retry-After the VU then waited
	ThrottleWait time.Duration
	// Examples holds the first error message seen per class: one example
	// each, so the report can say what went wrong without aggregating by
	// free text.
	Examples [outcome.NumClasses]string
	MCP      MCPTally // list pages, cancelled calls, notifications (mcp.go)
	// Checks are the op's checks (checks.go; nil without): by index for
	// one op, by expression in the "all" row.
	Checks []CheckTally

	// Stream links (SEP-1335): resume attempts sent to a stream's
	// rel="stream" URL, judged streams resumed there, and links refused
	// (another origin).
	ResumesLink, StreamsLink, LinksRefused int64
	// RetryCapped counts reconnect waits cut to the driver's retry cap
	// (driver.Config.MaxRetryWait), ops cut by the run's end included.
	RetryCapped outcome.RetryCap
}

// NewOpStats returns empty stats with their response, service and TTFB
// histograms.
func NewOpStats() *OpStats {
	return &OpStats{Response: NewHist(), Service: NewHist(), TTFB: NewHist()}
}

// ResumeHists creates the resume and wait histograms when o has none.
func (o *OpStats) ResumeHists() {
	if o.Resume == nil {
		o.Resume, o.Wait = NewHist(), NewHist()
	}
}

// Add merges b into o.
func (o *OpStats) Add(b *OpStats) {
	o.Response.Merge(b.Response)
	o.Service.Merge(b.Service)
	o.TTFB.Merge(b.TTFB)
	if b.Resume != nil {
		o.ResumeHists()
		o.Resume.Merge(b.Resume)
		o.Wait.Merge(b.Wait)
	}
	if b.DropLB != nil {
		if o.DropLB == nil {
			o.DropLB = NewHist()
		}
		o.DropLB.Merge(b.DropLB)
	}
	o.Count += b.Count
	o.Errors += b.Errors
	for i := range o.Classes {
		o.Classes[i] += b.Classes[i]
	}
	for code, n := range b.Status.All {
		o.Status.Add(code, n)
	}
	for i := range o.Verdicts {
		o.Verdicts[i] += b.Verdicts[i]
	}
	o.BytesIn += b.BytesIn
	o.BytesOut += b.BytesOut
	o.Events += b.Events
	o.Progress += b.Progress
	o.Resumes += b.Resumes
	o.ResumesOK += b.ResumesOK
	o.EarlyResume += b.EarlyResume
	o.ResumesLink += b.ResumesLink
	o.StreamsLink += b.StreamsLink
	o.LinksRefused += b.LinksRefused
	o.RetryCapped.Add(b.RetryCapped)
	o.Reinits += b.Reinits
	o.Reissues += b.Reissues
	o.ReissuedOK += b.ReissuedOK
	o.Wasted += b.Wasted
	o.InputRounds += b.InputRounds
	o.Streams += b.Streams
	o.Faulty += b.Faulty
	o.Dropped += b.Dropped
	o.Interrupted += b.Interrupted
	o.LateStarts += b.LateStarts
	o.Throttled += b.Throttled
	o.ThrottleWait += b.ThrottleWait
	o.MCP.add(&b.MCP)
	o.Checks = addChecks(o.Checks, b.Checks)
	for i, e := range b.Examples {
		if o.Examples[i] == "" {
			o.Examples[i] = e
		}
	}
}

// Reset zeroes o, keeping its histograms.
func (o *OpStats) Reset() {
	r, s, t, rs, w, d, ex, ck, st := o.Response, o.Service, o.TTFB, o.Resume, o.Wait, o.DropLB, o.Examples, resetChecks(o.Checks), o.Status.c[:0]
	r.Reset()
	s.Reset()
	t.Reset()
	if rs != nil {
		rs.Reset()
		w.Reset()
	}
	if d != nil {
		d.Reset()
	}
	*o = OpStats{Response: r, Service: s, TTFB: t, Resume: rs, Wait: w, DropLB: d, Examples: ex, Checks: ck, Status: StatusCounts{st}}
}

// Interval is one interval's aggregate. Its stats are owned by the
// recorder and valid until the next Tick (metrics.Recorder.Tick).
type Interval struct {
	Start, End time.Time
	Ops        []*OpStats // index = op
	All        *OpStats   // every op merged
	// Moves give the counts of results that came in during this interval
	// but were intended in an earlier one back to that one (see metrics.Recorder.Tick);
	// nil when none.
	Moves []CountMove
}
