package metrics

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
	"github.com/mcpbench/mcpbench/driver"
)

// Files of a results directory.
const (
	FileRun       = "run.json"        // what ran (written first)
	FileSummary   = "summary.json"    // the outcome (written last, atomically)
	FileIntervals = "intervals.csv"   // one row per interval (as the run goes)
	FileHistogram = "histograms.hlog" // HdrHistogram interval log (as the run goes)
	FileOffenders = "offenders.json"  // the first faulty streams
)

// ResultsWriter writes a run's results directory as the run goes: run.json
// first, then one line of intervals.csv and one interval of
// histograms.hlog per interval (flushed and synced each time, so a crash
// or Ctrl-C loses at most the interval in progress), and summary.json
// (atomically) and offenders.json at the end. Safe for concurrent use.
type ResultsWriter struct {
	dir   string
	names []string
	start time.Time

	mu   sync.Mutex
	csvf *os.File
	cw   *csv.Writer
	hf   *os.File
	hb   *bufio.Writer
	lw   *hdr.HistogramLogWriter
	err  error
}

// NewResultsWriter creates dir and writes run.json and the headers of the
// interval files. names are the op names (index = op); start is the run's
// start, the time base of both interval files.
func NewResultsWriter(dir string, names []string, start time.Time, info *RunInfo) (*ResultsWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := WriteJSON(filepath.Join(dir, FileRun), info); err != nil {
		return nil, err
	}
	w := &ResultsWriter{dir: dir, names: names, start: start}
	var err error
	if w.csvf, err = os.Create(filepath.Join(dir, FileIntervals)); err != nil {
		return nil, err
	}
	w.cw = csv.NewWriter(w.csvf)
	w.cw.Write(CSVHeader(names))
	w.cw.Flush()
	if w.hf, err = os.Create(filepath.Join(dir, FileHistogram)); err != nil {
		w.csvf.Close()
		return nil, err
	}
	w.hb = bufio.NewWriter(w.hf)
	w.lw = hdr.NewHistogramLogWriter(w.hb)
	w.lw.OutputComment("mcpbench interval histograms; values in microseconds (the max column reads as seconds); tags <op>.response, <op>.service and <op>.resume (time to resume)")
	w.lw.OutputLogFormatVersion()
	w.lw.OutputStartTime(start.UnixMilli())
	w.lw.OutputBaseTime(start.UnixMilli())
	w.lw.SetBaseTime(start.UnixMilli())
	w.lw.OutputLegend()
	w.hb.Flush()
	return w, nil
}

// Dir returns the directory.
func (w *ResultsWriter) Dir() string { return w.dir }

// CSVHeader returns the columns of intervals.csv: time and gauges, the
// totals of every op, errors by class, then per op.
func CSVHeader(names []string) []string {
	h := []string{"t_s", "interval_s", "phase", "target_rate", "rate", "vus", "sessions", "get_streams", "dropped", "reconnects",
		"self_cores", "self_rss_mb", "target_cores", "target_rss_mb", "target_fds", "target_threads"}
	h = append(h, opColumns("all")...)
	for c := driver.ClassOK + 1; c < driver.NumClasses; c++ {
		h = append(h, "errors_"+c.String())
	}
	for _, n := range names {
		h = append(h, opColumns("op:"+n)...)
	}
	return h
}

func opColumns(prefix string) []string {
	var out []string
	for _, c := range []string{"count", "errors", "p50_ms", "p90_ms", "p99_ms", "max_ms", "resumes"} {
		out = append(out, prefix+"."+c)
	}
	return out
}

func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
func i64(v int64) string  { return strconv.FormatInt(v, 10) }

func opCells(o RowOp) []string {
	return []string{i64(o.Count), i64(o.Errors), f3(o.P50), f3(o.P90), f3(o.P99), f3(o.Max), i64(o.Resumes)}
}

// Interval appends one interval (its row and its histograms). phase is
// "warm-up", "measure" or "stopping".
func (w *ResultsWriter) Interval(iv Interval, row Row, phase string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	rec := []string{f3(row.End.Sub(w.start).Seconds()), f3(row.End.Sub(row.Start).Seconds()), phase,
		f3(row.TargetRate), f3(row.Rate), i64(row.VUs), i64(row.Sessions), i64(row.Streams), i64(row.Dropped), i64(row.Reconnects),
		f3(row.Self.Cores), f3(row.Self.RSSMB)}
	if t := row.Target; t != nil {
		rec = append(rec, f3(t.Cores), f3(t.RSSMB), strconv.Itoa(t.FDs), strconv.Itoa(t.Threads))
	} else {
		rec = append(rec, "", "", "", "")
	}
	rec = append(rec, opCells(row.All)...)
	for c := driver.ClassOK + 1; c < driver.NumClasses; c++ {
		rec = append(rec, i64(row.All.Classes[c]))
	}
	for _, o := range row.Ops {
		rec = append(rec, opCells(o)...)
	}
	w.cw.Write(rec)
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		w.err = err
		return err
	}
	for i, o := range iv.Ops {
		if o.Count == 0 {
			continue
		}
		hists := []struct {
			kind string
			h    *hdr.Histogram
		}{{"response", o.Response}, {"service", o.Service}}
		if o.Resume != nil && o.Resume.TotalCount() > 0 {
			hists = append(hists, struct {
				kind string
				h    *hdr.Histogram
			}{"resume", o.Resume})
		}
		for _, h := range hists {
			h.h.SetTag(HlogTag(w.names[i]) + "." + h.kind)
			h.h.SetStartTimeMs(iv.Start.UnixMilli())
			h.h.SetEndTimeMs(iv.End.UnixMilli())
			if err := w.lw.OutputIntervalHistogram(h.h); err != nil {
				w.err = err
				return err
			}
		}
	}
	if err := w.hb.Flush(); err != nil {
		w.err = err
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

// Close writes offenders.json and summary.json (atomically) and closes the
// interval files.
func (w *ResultsWriter) Close(sum *Summary, offenders []Offender, faulty int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	if e := WriteJSON(filepath.Join(w.dir, FileOffenders), OffendersFile{Faulty: faulty, First: offenders}); err == nil {
		err = e
	}
	if e := WriteJSON(filepath.Join(w.dir, FileSummary), sum); err == nil {
		err = e
	}
	w.cw.Flush()
	if e := w.csvf.Close(); err == nil {
		err = e
	}
	w.hb.Flush()
	if e := w.hf.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("results %s: %w", w.dir, err)
	}
	return nil
}
