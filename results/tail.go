package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Tail follows a results directory that another process is writing (run
// --processes shows its children's progress from their directories): each
// Poll reads the lines appended to intervals.csv and histograms.hlog since
// the last, complete lines only. Not safe for concurrent use.
type Tail struct {
	dir     string
	started time.Time // run.json's start (zero until it is written)
	csv     tailFile
	hlog    tailFile
	col     map[string]int
	header  []byte // histograms.hlog's header lines, to decode later lines
	rows    []TailRow
	hists   map[int64]*hdr.Histogram // response times of every op, by interval end (ms since the epoch)
}

// TailRow is one interval of a followed directory: its intervals.csv row
// (the run-level columns) and its end.
type TailRow struct {
	End                    time.Time
	T, Interval            float64 // end since the start, length (s)
	Phase                  Phase
	TargetRate, Rate       float64
	VUs, Sessions, Streams int64
	Dropped, Reconnects    int64
	Count, Errors          int64
}

// tailFile reads a growing file from an offset, complete lines only. A
// file replaced at its path (intervals.csv, restated by intended start at
// the end of the run) is not read again: its lines were read as written.
type tailFile struct {
	path string
	off  int64
	seen os.FileInfo // the file first read (nil: none yet)
}

// next returns the complete lines appended since the last call.
func (f *tailFile) next() ([]byte, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil {
		if f.seen != nil && !os.SameFile(f.seen, fi) {
			return nil, nil
		}
		f.seen = fi
	}
	if _, err := fh.Seek(f.off, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(fh)
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(data, '\n')
	if i < 0 {
		return nil, nil
	}
	f.off += int64(i + 1)
	return data[:i+1], nil
}

// NewTail follows the results directory dir (which need not exist yet).
func NewTail(dir string) *Tail {
	return &Tail{dir: dir, csv: tailFile{path: filepath.Join(dir, FileIntervals)}, hlog: tailFile{path: filepath.Join(dir, FileHistogram)},
		hists: map[int64]*hdr.Histogram{}}
}

// Poll reads what was appended since the last Poll. Missing files are not
// an error (the run has not started yet).
func (t *Tail) Poll() error {
	if t.started.IsZero() {
		var info *RunInfo
		if err := readJSON(filepath.Join(t.dir, FileRun), &info); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		t.started = info.Started
	}
	if err := t.readHlog(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := t.readCSV(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Rows returns the intervals read so far. The last one's histograms may
// still be being written: Response is sure only for rows before the last,
// or for the last once the run has ended.
func (t *Tail) Rows() []TailRow { return t.rows }

// TakeResponse returns the response-time histogram of every op in the
// interval ending at end (nil when none was logged) and forgets it, with
// any older one: a long run's histograms are not kept.
func (t *Tail) TakeResponse(end time.Time) *hdr.Histogram {
	ms := end.UnixMilli()
	var out *hdr.Histogram
	for k, h := range t.hists {
		if k <= ms+2 { // the log keeps times to the ms
			if k >= ms-2 {
				out = h
			}
			delete(t.hists, k)
		}
	}
	return out
}

func (t *Tail) readCSV() error {
	data, err := t.csv.next()
	if err != nil || len(data) == 0 {
		return err
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if t.col == nil {
			t.col = map[string]int{}
			for i, h := range rec {
				t.col[h] = i
			}
			continue
		}
		t.rows = append(t.rows, t.row(rec))
	}
}

// row parses one intervals.csv record.
func (t *Tail) row(rec []string) TailRow {
	get := func(name string) string {
		if i, ok := t.col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	fl := func(name string) float64 { v, _ := strconv.ParseFloat(get(name), 64); return v }
	in := func(name string) int64 { v, _ := strconv.ParseInt(get(name), 10, 64); return v }
	r := TailRow{T: fl("t_s"), Interval: fl("interval_s"), Phase: Phase(get("phase")), TargetRate: fl("target_rate"), Rate: fl("rate"),
		VUs: in("vus"), Sessions: in("sessions"), Streams: in("get_streams"), Dropped: in("dropped"), Reconnects: in("reconnects"),
		Count: in("all.count"), Errors: in("all.errors")}
	r.End = t.started.Add(time.Duration(math.Round(r.T*1000)) * time.Millisecond)
	return r
}

// readHlog decodes the appended histograms.hlog lines: the header is kept
// (it gives the base time), the response-time histograms merged by
// interval end.
func (t *Tail) readHlog() error {
	data, err := t.hlog.next()
	if err != nil || len(data) == 0 {
		return err
	}
	var lines bytes.Buffer
	for line := range bytes.Lines(data) {
		switch {
		case line[0] == '#' || line[0] == '"':
			t.header = append(t.header, line...)
		case bytes.HasPrefix(line, []byte("Tag=")) && bytes.Contains(line[:bytes.IndexByte(line, ',')+1], []byte(".response,")):
			lines.Write(line)
		}
	}
	lr := hdr.NewHistogramLogReader(io.MultiReader(bytes.NewReader(t.header), &lines))
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			if errors.Is(err, io.EOF) || strings.Contains(err.Error(), "EOF") {
				return nil
			}
			return err
		}
		if h == nil {
			return nil
		}
		end := h.EndTimeMs()
		if x := t.hists[end]; x != nil {
			x.Merge(h)
		} else {
			t.hists[end] = h
		}
	}
}
