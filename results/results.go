package results

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/outcome"
)

// Files of a results directory.
const (
	FileRun        = "run.json"        // what ran (written first)
	FileSummary    = "summary.json"    // the outcome (written last, atomically)
	FileIntervals  = "intervals.csv"   // one row per interval (as the run goes)
	FileHistogram  = "histograms.hlog" // HdrHistogram interval log (as the run goes)
	FileOffenders  = "offenders.json"  // the first faulty streams
	FileCheckpoint = "checkpoint.json" // a long run's summary so far (soak)
)

// ResultsDir is a run's results directory, written as the run goes: a
// Sink. Start writes run.json and the headers of the interval files; each
// Interval appends one line of intervals.csv and one interval of
// histograms.hlog (flushed and synced each time, so a crash or Ctrl-C
// loses at most the interval in progress); Checkpoint writes
// checkpoint.json (a long run's summary so far); End writes
// offenders.json and summary.json (atomically) and closes the files. It
// is the only writer of a run's directory. Safe for concurrent use; Err
// reports the first write error.
type ResultsDir struct {
	dir string

	mu      sync.Mutex
	names   []string
	start   time.Time
	started bool
	csvf    *os.File
	cw      *csv.Writer
	hf      *os.File
	hb      *bufio.Writer
	lw      *hdr.HistogramLogWriter
	enc     hlogEncoder // writes the interval histograms (the library's lines, a compressor reused)
	err     error
	// rowAt maps each row's interval end (Unix ns) to its line (0: the
	// first after the header); moves are the counts to give back to the
	// interval of their ops' intended start at End (restate.go).
	rowAt map[int64]int
	moves []CountMove
	// bases are, per row (line) and op, the response histogram the row
	// was written from (nil: none recorded), for the percentiles restated
	// at End; kept up to restateBaseBytes in all, then not (unrestated
	// counts the rows whose percentiles could then not be restated).
	bases      [][]*Hist
	baseBytes  int
	unrestated int
}

// restateBaseBytes bounds the histograms a ResultsDir keeps to restate
// intervals.csv's percentiles by intended start (a sparse histogram is a
// few KB: an hour of 1 s rows of 10 ops is ~100 MB at worst, mostly far
// less).
const restateBaseBytes = 64 << 20

var _ Sink = (*ResultsDir)(nil)
var _ Checkpointer = (*ResultsDir)(nil)

// NewResultsDir creates dir (and its parents) for a run's results.
func NewResultsDir(dir string) (*ResultsDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &ResultsDir{dir: dir}, nil
}

// Dir returns the directory.
func (w *ResultsDir) Dir() string { return w.dir }

// Err returns the first error writing the directory (nil: none).
func (w *ResultsDir) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return fmt.Errorf("results %s: %w", w.dir, w.err)
	}
	return nil
}

func (w *ResultsDir) fail(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

// Start implements Sink: run.json, and the headers of intervals.csv (op
// columns from info.Ops) and histograms.hlog (time base info.Started).
func (w *ResultsDir) Start(info *RunInfo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.begin(info)
}

// begin opens the files (w.mu held).
func (w *ResultsDir) begin(info *RunInfo) {
	if w.started {
		return
	}
	w.started = true
	w.names, w.start = info.Ops, info.Started
	w.fail(WriteJSON(filepath.Join(w.dir, FileRun), info))
	var err error
	if w.csvf, err = os.Create(filepath.Join(w.dir, FileIntervals)); err != nil {
		w.fail(err)
		return
	}
	w.cw = csv.NewWriter(w.csvf)
	w.cw.Write(CSVHeader(w.names))
	w.cw.Flush()
	if w.hf, err = os.Create(filepath.Join(w.dir, FileHistogram)); err != nil {
		w.fail(err)
		return
	}
	w.hb = bufio.NewWriter(w.hf)
	w.lw = hdr.NewHistogramLogWriter(w.hb)
	w.lw.OutputComment("mcpbench interval histograms; values in microseconds (the max column reads as seconds); tags <op>.response, <op>.service and <op>.resume (time to resume)")
	w.lw.OutputLogFormatVersion()
	outputTimes(w.lw, w.start)
	w.lw.OutputLegend()
	w.fail(w.hb.Flush())
}

// CSVHeader returns the columns of intervals.csv: time and gauges, the
// totals of every op, errors by class, then per op.
func CSVHeader(names []string) []string {
	h := []string{"t_s", "interval_s", "phase", "target_rate", "rate", "vus", "sessions", "get_streams", "dropped", "reconnects",
		"self_cores", "self_rss_mb", "target_cores", "target_rss_mb", "target_fds", "target_threads"}
	h = append(h, opColumns("all")...)
	for c := outcome.ClassOK + 1; c < outcome.NumClasses; c++ {
		h = append(h, "errors_"+c.String())
	}
	for _, n := range names {
		h = append(h, opColumns("op:"+n)...)
	}
	return h
}

func opColumns(prefix string) []string {
	var out []string
	for _, c := range []string{"count", "errors", "p50_ms", "p90_ms", "p99_ms", "max_ms", "resumes", "faulty", "checks_failed"} {
		out = append(out, prefix+"."+c)
	}
	return out
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
func i64(v int64) string  { return strconv.FormatInt(v, 10) }

// opCells are an op's columns; its percentiles are empty when no op
// completed in the interval (RowOp.Timed 0): there is none, not 0.
func opCells(o RowOp) []string {
	p50, p90, p99, mx := f3(o.P50), f3(o.P90), f3(o.P99), f3(o.Max)
	if o.Timed == 0 {
		p50, p90, p99, mx = "", "", "", ""
	}
	return []string{i64(o.Count), i64(o.Errors), p50, p90, p99, mx, i64(o.Resumes), i64(o.Faulty), i64(o.ChecksFailed)}
}

// Interval implements Sink: one row of intervals.csv and the interval's
// histograms in histograms.hlog. The row is written as the interval
// closes; the counts of its ops that come in later (rec.Interval.Moves)
// are given back to it at End (restate.go).
func (w *ResultsDir) Interval(r *IntervalRecord) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.cw == nil {
		return
	}
	w.fail(w.interval(r.Interval, r.Row, string(r.Phase)))
}

func (w *ResultsDir) interval(iv Interval, row Row, phase string) error {
	rec := []string{f3(row.End.Sub(w.start).Seconds()), f3(row.End.Sub(row.Start).Seconds()), phase,
		f3(row.TargetRate), f3(row.Rate), i64(row.VUs), i64(row.Sessions), i64(row.Streams), i64(row.Dropped), i64(row.Reconnects),
		f3(row.Self.Cores), f3(row.Self.RSSMB)}
	if t := row.Target; t != nil {
		rec = append(rec, f3(t.Cores), f3(t.RSSMB), strconv.Itoa(t.FDs), strconv.Itoa(t.Threads))
	} else {
		rec = append(rec, "", "", "", "")
	}
	rec = append(rec, opCells(row.All)...)
	for c := outcome.ClassOK + 1; c < outcome.NumClasses; c++ {
		rec = append(rec, i64(row.All.Classes[c]))
	}
	for _, o := range row.Ops {
		rec = append(rec, opCells(o)...)
	}
	w.cw.Write(rec)
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		return err
	}
	if w.rowAt == nil {
		w.rowAt = map[int64]int{}
	}
	w.rowAt[row.End.UnixNano()] = len(w.rowAt)
	w.moves = append(w.moves, iv.Moves...)
	var base []*Hist
	if w.baseBytes < restateBaseBytes {
		base = make([]*Hist, len(iv.Ops))
		for i, o := range iv.Ops {
			if o.Response.TotalCount() > 0 {
				base[i] = o.Response.Clone()
				w.baseBytes += base[i].Bytes()
			}
		}
	}
	w.bases = append(w.bases, base)
	for i, o := range iv.Ops {
		if o.Count == 0 && o.Response.TotalCount() == 0 {
			continue // (an interval may hold completions of ops counted in the next)
		}
		hists := []struct {
			kind string
			h    *Hist
		}{{"response", o.Response}, {"service", o.Service}}
		if o.Resume != nil && o.Resume.TotalCount() > 0 {
			hists = append(hists, struct {
				kind string
				h    *Hist
			}{"resume", o.Resume})
		}
		for _, h := range hists {
			if err := w.enc.write(w.hb, w.lw.BaseTime(), HlogTag(w.names[i])+"."+h.kind, iv.Start.UnixMilli(), iv.End.UnixMilli(), h.h); err != nil {
				return err
			}
		}
	}
	if err := w.hb.Flush(); err != nil {
		return err
	}
	w.csvf.Sync()
	w.hf.Sync()
	return nil
}

// HlogTag makes an op name usable as an hlog tag (no spaces or commas):
// histograms.hlog tags are HlogTag(op) + ".response", ".service", ".resume".
func HlogTag(name string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == ',' || r == '\t' || r == '\r' || r == '\n' {
			return '_'
		}
		return r
	}, name)
}

// Checkpoint implements Checkpointer: checkpoint.json, the summary of
// the measured window so far.
func (w *ResultsDir) Checkpoint(sum *Summary) {
	err := WriteJSON(filepath.Join(w.dir, FileCheckpoint), sum)
	w.mu.Lock()
	w.fail(err)
	w.mu.Unlock()
}

// Measured implements MeasuredSink: summary.json as the run's ops ended, before its
// sessions are closed (End rewrites it with the closes counted), and
// flushes intervals.csv and histograms.hlog: a process stopped at once
// during the closes keeps them whole.
func (w *ResultsDir) Measured(sum *Summary) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		return
	}
	if w.cw != nil {
		w.cw.Flush()
	}
	if w.hb != nil {
		w.fail(w.hb.Flush())
	}
	w.fail(WriteJSON(filepath.Join(w.dir, FileSummary), sum))
}

// End implements Sink: offenders.json and summary.json (atomically), and
// the interval files closed. A run that never started writes its run.json
// here.
func (w *ResultsDir) End(end *RunEnd) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started && end.Info != nil {
		info := *end.Info
		if info.Started.IsZero() {
			info.Started = time.Now()
		}
		w.begin(&info)
	}
	w.fail(WriteJSON(filepath.Join(w.dir, FileOffenders), end.Offenders))
	if len(end.Histograms) > 0 {
		w.fail(w.writeSummaryHistograms(end))
	}
	w.fail(WriteJSON(filepath.Join(w.dir, FileSummary), end.Summary))
	if w.cw != nil {
		w.cw.Flush()
		w.fail(w.csvf.Close())
		w.fail(w.restate())
	}
	if w.hb != nil {
		w.fail(w.hb.Flush())
		w.fail(w.hf.Close())
	}
}
