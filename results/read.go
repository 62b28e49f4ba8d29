package results

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
)

// Results is a results directory read back from its files alone.
type Results struct {
	Dir       string
	Run       *RunInfo      // nil if run.json is missing
	Summary   *Summary      // nil if the run did not finish (no summary.json)
	Intervals []IntervalRec // intervals.csv, in order
	Ops       []string      // op names, in the run's order
	// Histograms maps "<op>.<kind>" (kind: response, service, resume) to the
	// histogram merged over the whole run, from histograms.hlog (µs).
	Histograms map[string]*hdr.Histogram
	// Series maps the same tags to the per-interval histograms, with their
	// start and end times set (ms since the epoch).
	Series    map[string][]*hdr.Histogram
	Offenders *OffendersFile
	// Totals are summary.hlog's histograms (see metrics.Recorder.Histograms for
	// the tags); nil when the directory has none.
	Totals map[string]*hdr.Histogram
}

// IntervalRec is one line of intervals.csv.
type IntervalRec struct {
	T, Interval   float64 // end of the interval since the start, its length (s)
	Phase         Phase
	TargetRate    float64
	Rate          float64
	VUs           int64
	Sessions      int64
	Streams       int64
	Dropped       int64
	Reconnects    int64
	All           IntervalOpRec
	ErrorsByClass map[string]int64
	Ops           map[string]IntervalOpRec
	Self          ProcRow
	Target        *ProcRow // nil when the target was not sampled
}

// IntervalOpRec is one op's columns of an interval (latencies in ms).
type IntervalOpRec struct {
	Count, Errors, Resumes int64
	Faulty                 int64 // streams the replay ledger found faulty (0 in files written before the column)
	ChecksFailed           int64 // failed checks (0 in files written before the column)
	// P50…Max are the response times of the interval's ops by intended
	// start that completed (as Count); 0 where none did (an empty cell).
	// A file a run did not finish (no End) has them by completion for the
	// ops that completed after their interval had closed.
	P50, P90, P99, Max float64
}

// ReadResults reads a results directory. Missing files leave their fields
// empty; an error is returned only when nothing usable is there or a file
// is corrupt.
func ReadResults(dir string) (*Results, error) {
	r := &Results{Dir: dir, Histograms: map[string]*hdr.Histogram{}, Series: map[string][]*hdr.Histogram{}}
	found := false
	if err := readJSON(filepath.Join(dir, FileRun), &r.Run); err == nil {
		found = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := readJSON(filepath.Join(dir, FileSummary), &r.Summary); err == nil {
		found = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := readJSON(filepath.Join(dir, FileOffenders), &r.Offenders); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := r.readIntervals(filepath.Join(dir, FileIntervals)); err == nil {
		found = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := r.readHlog(filepath.Join(dir, FileHistogram)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if t, err := readSummaryHistograms(filepath.Join(dir, FileSummaryHistograms)); err == nil {
		r.Totals = t
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: not a results directory (no %s, %s or %s)", dir, FileSummary, FileRun, FileIntervals)
	}
	return r, nil
}

func readJSON[T any](path string, v **T) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var t T
	if err := json.Unmarshal(data, &t); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	*v = &t
	return nil
}

func (r *Results) readIntervals(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
		if name, ok := strings.CutPrefix(h, "op:"); ok && strings.HasSuffix(name, ".count") {
			r.Ops = append(r.Ops, strings.TrimSuffix(name, ".count"))
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			// A line cut by a crash ends the file: keep what came before.
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) != len(head) {
			return nil // a partial last line
		}
		get := func(name string) string {
			if i, ok := col[name]; ok {
				return rec[i]
			}
			return ""
		}
		fl := func(name string) float64 { v, _ := strconv.ParseFloat(get(name), 64); return v }
		in := func(name string) int64 { v, _ := strconv.ParseInt(get(name), 10, 64); return v }
		op := func(prefix string) IntervalOpRec {
			return IntervalOpRec{Count: in(prefix + ".count"), Errors: in(prefix + ".errors"), Resumes: in(prefix + ".resumes"),
				Faulty: in(prefix + ".faulty"), ChecksFailed: in(prefix + ".checks_failed"), P50: fl(prefix + ".p50_ms"), P90: fl(prefix + ".p90_ms"), P99: fl(prefix + ".p99_ms"), Max: fl(prefix + ".max_ms")}
		}
		ir := IntervalRec{T: fl("t_s"), Interval: fl("interval_s"), Phase: Phase(get("phase")), TargetRate: fl("target_rate"), Rate: fl("rate"),
			VUs: in("vus"), Sessions: in("sessions"), Streams: in("get_streams"), Dropped: in("dropped"), Reconnects: in("reconnects"),
			All: op("all"), ErrorsByClass: map[string]int64{}, Ops: map[string]IntervalOpRec{}}
		ir.Self = ProcRow{Cores: fl("self_cores"), RSSMB: fl("self_rss_mb")}
		if get("target_cores") != "" {
			ir.Target = &ProcRow{Cores: fl("target_cores"), RSSMB: fl("target_rss_mb"), FDs: int(in("target_fds")), Threads: int(in("target_threads"))}
		}
		for c := outcome.ClassOK + 1; c < outcome.NumClasses; c++ {
			if n := in("errors_" + c.String()); n > 0 {
				ir.ErrorsByClass[c.String()] = n
			}
		}
		for _, name := range r.Ops {
			ir.Ops[name] = op("op:" + name)
		}
		r.Intervals = append(r.Intervals, ir)
	}
}

func (r *Results) readHlog(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	lr := hdr.NewHistogramLogReader(f)
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			if errors.Is(err, io.EOF) || strings.Contains(err.Error(), "EOF") {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if h == nil {
			return nil
		}
		tag := h.Tag()
		r.Series[tag] = append(r.Series[tag], h)
		m, ok := r.Histograms[tag]
		if !ok {
			m = NewHistogram()
			r.Histograms[tag] = m
		}
		m.Merge(h)
	}
}

// Rebuild makes a summary from intervals.csv and histograms.hlog, for a
// run that ended without writing summary.json (a crash or a kill): counts
// and rates from the intervals, percentiles from the merged histograms.
// It is marked interrupted.
func (r *Results) Rebuild() *Summary {
	s := &Summary{Interrupted: true, StopReason: "no summary.json: rebuilt from intervals.csv and histograms.hlog", Model: "closed"}
	if r.Run != nil {
		s.Tool = r.Run.Tool + " " + r.Run.Version
		s.Target, s.Embedded, s.Protocol, s.Profile, s.Started = r.Run.Target, r.Run.Embedded, r.Run.ProtocolNegotiated, r.Run.Profile, r.Run.Started
	}
	var secs float64
	per := map[string]*OpSummary{}
	all := OpSummary{Name: "all", ErrorsByClass: map[string]int64{}}
	for _, iv := range r.Intervals {
		if iv.Phase != PhaseMeasure && iv.Phase != PhaseStopping {
			continue
		}
		if iv.Phase == PhaseMeasure {
			secs += iv.Interval
		}
		if iv.TargetRate > 0 {
			s.Model, s.TargetRate = "open", iv.TargetRate
		}
		s.Dropped += iv.Dropped
		all.Count += iv.All.Count
		all.Errors += iv.All.Errors
		for k, v := range iv.ErrorsByClass {
			all.ErrorsByClass[k] += v
		}
		for _, name := range r.Ops {
			o := per[name]
			if o == nil {
				o = &OpSummary{Name: name}
				per[name] = o
			}
			rec := iv.Ops[name]
			o.Count += rec.Count
			o.Errors += rec.Errors
		}
	}
	s.DurationS = textfmt.Round3(secs)
	merged := map[string]*hdr.Histogram{"response": NewHistogram(), "service": NewHistogram()}
	for _, name := range r.Ops {
		o := per[name]
		if o == nil || o.Count == 0 {
			continue
		}
		tag := HlogTag(name)
		o.Response = LatencyOf(r.Histograms[tag+".response"])
		o.Service = LatencyOf(r.Histograms[tag+".service"])
		for kind, h := range merged {
			if x := r.Histograms[tag+"."+kind]; x != nil {
				h.Merge(x)
			}
		}
		if secs > 0 {
			o.Rate = textfmt.Round3(float64(o.Count) / secs)
		}
		if o.Count > 0 {
			o.ErrorRate = float64(o.Errors) / float64(o.Count)
		}
		s.Ops = append(s.Ops, *o)
	}
	all.Response, all.Service = LatencyOf(merged["response"]), LatencyOf(merged["service"])
	if secs > 0 {
		all.Rate = textfmt.Round3(float64(all.Count) / secs)
	}
	if all.Count > 0 {
		all.ErrorRate = float64(all.Errors) / float64(all.Count)
	}
	s.All, s.Rate = all, all.Rate
	return s
}

// Elapsed returns the run's length as the intervals record it.
func (r *Results) Elapsed() time.Duration {
	if len(r.Intervals) == 0 {
		return 0
	}
	return time.Duration(r.Intervals[len(r.Intervals)-1].T * float64(time.Second))
}

// Quantile implements QuantileSource from histograms.hlog (response,
// service and resume times; ttfb is not in the log): op is an op name or
// "all".
func (r *Results) Quantile(op, kind string, q float64) (float64, bool) {
	h := NewHistogram()
	for tag, x := range r.Histograms {
		name, k, ok := strings.Cut(tag, ".")
		if i := strings.LastIndexByte(tag, '.'); i >= 0 {
			name, k, ok = tag[:i], tag[i+1:], true
		}
		if !ok || k != kind || (op != "all" && name != HlogTag(op)) {
			continue
		}
		h.Merge(x)
	}
	if h.TotalCount() == 0 {
		return 0, false
	}
	return textfmt.Round3(float64(h.ValueAtQuantile(q)) / 1000), true
}
