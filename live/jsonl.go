package live

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
)

// JSONLQueue is how many lines JSONL holds for its writer; a line that
// finds the queue full is dropped and counted (Dropped), so a slow
// destination never pushes back on the run.
const JSONLQueue = 256

// JSONL is a results.Sink that streams one JSON object per line to a
// writer: per run a start line, one line per interval and an end line (a
// sweep's steps follow one another in one stream). Lines are encoded in
// the caller's goroutine and written by the sink's own; Close waits for
// the queue to drain (up to 5 s). Safe for concurrent use.
type JSONL struct {
	w       io.Writer
	lines   chan []byte
	done    chan struct{}
	dropped atomic.Int64
	err     atomic.Pointer[error]
	closes  closes

	mu     sync.Mutex // guards closed and sends on lines
	closed bool
}

var _ results.Sink = (*JSONL)(nil)

// NewJSONL starts a JSONL sink writing to w (a file; the caller closes
// it after End).
func NewJSONL(w io.Writer) *JSONL {
	j := &JSONL{w: w, lines: make(chan []byte, JSONLQueue), done: make(chan struct{})}
	go j.write()
	return j
}

func (j *JSONL) write() {
	defer close(j.done)
	bw := bufio.NewWriter(j.w)
	for line := range j.lines {
		if _, err := bw.Write(line); err != nil {
			j.err.CompareAndSwap(nil, &err)
			continue
		}
		if len(j.lines) == 0 { // flush when caught up: a reader sees each interval as it ends
			if err := bw.Flush(); err != nil {
				j.err.CompareAndSwap(nil, &err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		j.err.CompareAndSwap(nil, &err)
	}
}

// Dropped returns the lines dropped because the writer fell behind.
func (j *JSONL) Dropped() int64 { return j.dropped.Load() }

// Err returns the first write error (nil: none).
func (j *JSONL) Err() error {
	if p := j.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (j *JSONL) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		j.err.CompareAndSwap(nil, &err)
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return
	}
	select {
	case j.lines <- append(b, '\n'):
	default:
		j.dropped.Add(1)
	}
}

// Line types of the stream.
type (
	startLine struct {
		Type     string    `json:"type"` // "start"
		Started  time.Time `json:"started"`
		Profile  string    `json:"profile"`
		Target   string    `json:"target"`
		Protocol string    `json:"protocol"`
		Ops      []string  `json:"ops"`
	}
	// IntervalLine is one interval, as intervals.csv has it (ops counted
	// by intended start, latencies in ms by completion), with the
	// in-flight estimate.
	IntervalLine struct {
		Type          string            `json:"type"` // "interval"
		End           time.Time         `json:"t"`
		ElapsedS      float64           `json:"elapsed_s"`
		IntervalS     float64           `json:"interval_s"`
		Phase         results.Phase     `json:"phase"`
		TargetRate    float64           `json:"target_rate,omitempty"`
		Rate          float64           `json:"rate"`
		VUs           int64             `json:"vus"`
		Sessions      int64             `json:"sessions"`
		GETStreams    int64             `json:"get_streams"`
		Dropped       int64             `json:"dropped"`
		Reconnects    int64             `json:"reconnects"`
		InFlight      float64           `json:"in_flight"`
		All           OpLine            `json:"all"`
		ErrorsByClass map[string]int64  `json:"errors_by_class,omitempty"`
		Ops           map[string]OpLine `json:"ops"`
		Generator     ProcLine          `json:"generator"`
		Target        *ProcLine         `json:"target_process,omitempty"`
	}
	// OpLine is one op's figures over an interval.
	OpLine struct {
		Count   int64   `json:"count"`
		Errors  int64   `json:"errors"`
		Dropped int64   `json:"dropped,omitempty"`
		Resumes int64   `json:"resumes,omitempty"`
		Faulty  int64   `json:"faulty_streams,omitempty"`
		P50     float64 `json:"p50_ms"`
		P90     float64 `json:"p90_ms"`
		P99     float64 `json:"p99_ms"`
		Max     float64 `json:"max_ms"`
	}
	// ProcLine is a process sample.
	ProcLine struct {
		Cores   float64 `json:"cores"`
		RSSMB   float64 `json:"rss_mb"`
		FDs     int     `json:"fds,omitempty"`
		Threads int     `json:"threads,omitempty"`
	}
	endLine struct {
		Type        string           `json:"type"` // "end"
		Rate        float64          `json:"rate"`
		Count       int64            `json:"count"`
		Errors      int64            `json:"errors"`
		ErrorRate   float64          `json:"error_rate"`
		Dropped     int64            `json:"dropped"`
		Response    results.Latency  `json:"response_time_ms"`
		Interrupted bool             `json:"interrupted"`
		StopReason  string           `json:"stop_reason,omitempty"`
		ByClass     map[string]int64 `json:"errors_by_class,omitempty"`
		LinesLost   int64            `json:"lines_dropped,omitempty"`
	}
)

// Start implements results.Sink.
func (j *JSONL) Start(info *results.RunInfo) {
	j.closes.start(info.Started)
	j.send(startLine{Type: "start", Started: info.Started, Profile: info.Profile, Target: secret.RedactURL(info.Target),
		Protocol: info.ProtocolNegotiated, Ops: info.Ops})
}

// Interval implements results.Sink.
func (j *JSONL) Interval(rec *results.IntervalRecord) {
	j.send(IntervalLineOf(rec, j.closes.span()))
}

// IntervalLineOf makes an interval's line; span is the time since the
// previous interval was closed (its histograms hold the completions in
// it), for the in-flight estimate.
func IntervalLineOf(rec *results.IntervalRecord, span time.Duration) IntervalLine {
	row := &rec.Row
	secs := row.End.Sub(row.Start).Seconds()
	l := IntervalLine{Type: "interval", End: row.End, ElapsedS: rec.Elapsed.Seconds(), IntervalS: secs, Phase: rec.Phase,
		TargetRate: row.TargetRate, Rate: row.Rate, VUs: rec.VUs, Sessions: rec.Sessions, GETStreams: rec.Streams, Dropped: row.Dropped,
		Reconnects: row.Reconnects, All: opLine(row.All), Ops: map[string]OpLine{},
		Generator: ProcLine{Cores: row.Self.Cores, RSSMB: row.Self.RSSMB}}
	for c := outcome.ClassOK + 1; c < outcome.NumClasses; c++ {
		if n := row.All.Classes[c]; n > 0 {
			if l.ErrorsByClass == nil {
				l.ErrorsByClass = map[string]int64{}
			}
			l.ErrorsByClass[c.String()] = n
		}
	}
	for i, name := range rec.Names {
		if i < len(row.Ops) {
			l.Ops[name] = opLine(row.Ops[i])
		}
	}
	if t := row.Target; t != nil {
		l.Target = &ProcLine{Cores: t.Cores, RSSMB: t.RSSMB, FDs: t.FDs, Threads: t.Threads}
	}
	l.InFlight = textfmt.Round3(inFlight(rec.Interval.All, span))
	return l
}

func opLine(o results.RowOp) OpLine {
	return OpLine{Count: o.Count, Errors: o.Errors, Dropped: o.Dropped, Resumes: o.Resumes, Faulty: o.Faulty, P50: o.P50, P90: o.P90, P99: o.P99, Max: o.Max}
}

// End implements results.Sink: the end line.
func (j *JSONL) End(end *results.RunEnd) {
	if s := end.Summary; s != nil {
		j.send(endLine{Type: "end", Rate: s.All.Rate, Count: s.All.Count, Errors: s.All.Errors, ErrorRate: s.All.ErrorRate,
			Dropped: s.Dropped, Response: s.All.Response, Interrupted: s.Interrupted, StopReason: s.StopReason,
			ByClass: s.All.ErrorsByClass, LinesLost: j.dropped.Load()})
	}
}

// Close stops the stream: later lines are ignored, the queued ones
// written (Close waits at most 5 s for a slow writer). It returns the
// first write error. Idempotent.
func (j *JSONL) Close() error {
	j.mu.Lock()
	if !j.closed {
		j.closed = true
		close(j.lines)
	}
	j.mu.Unlock()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-j.done:
	case <-t.C:
	}
	return j.Err()
}

// closes tracks when intervals are closed: the interval histograms hold
// the ops completed between two closes.
type closes struct {
	mu   sync.Mutex
	prev time.Time
}

func (c *closes) start(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prev = t
}

// span returns the time since the previous close (or the start) and
// makes now the previous close.
func (c *closes) span() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	d := now.Sub(c.prev)
	if c.prev.IsZero() {
		d = 0
	}
	c.prev = now
	return d
}

// inFlight is the mean number of ops in flight over span by Little's
// law: the service time of the ops completed in it over its length.
func inFlight(o *results.OpStats, span time.Duration) float64 {
	if o == nil || span <= 0 {
		return 0
	}
	n := o.Service.TotalCount()
	if n == 0 {
		return 0
	}
	return o.Service.Mean() * float64(n) / 1e6 / span.Seconds()
}
