package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The histograms behind summary.json, for exact merges of segments
// (merge.go): summary.hlog holds one histogram per latency the summary
// gives, over the measured window, tagged:
//
//	op:<op>.response, .service, .ttfb, .dropped (the dropped ops' lower
//	  bound), .resume (time to resume), .wait (reconnect delay)
//	sessions.initialize
//	generator.start_lag
//	get.resume.time, get.resume.wait, get.reopen.time, get.reopen.wait
//	scenario:<scenario>.iteration
//	endpoint:<i>.response (the i-th endpoint, 0-based)
//	net.tls.handshake, net.oauth.fetch (over the whole run, as the
//	  summary's net block; NetHistograms)
//
// <op> and <scenario> are written as HlogTag makes them. Values are µs.

// FileSummaryHistograms is the results directory's summary.hlog.
const FileSummaryHistograms = "summary.hlog"

// Tag prefixes and kinds of summary.hlog.
const (
	TagOp       = "op:"
	TagScenario = "scenario:"
	TagInit     = "sessions.initialize"
	TagLag      = "generator.start_lag"
	TagGET      = "get."
	TagEndpoint = "endpoint:"
)

// TotalsTag is summary.hlog's tag of op's histogram of kind (response,
// service, ttfb, dropped, resume, wait).
func TotalsTag(op, kind string) string { return TagOp + HlogTag(op) + "." + kind }

// summary.hlog's tags of the GET streams' time to resume and to re-open.
const (
	TotalsGETResume = TagGET + "resume.time"
	TotalsGETReopen = TagGET + "reopen.time"
)

// HistsOf returns sparse copies of dense histograms by tag (as
// RunEnd.Histograms holds them).
func HistsOf(hs map[string]*hdr.Histogram) map[string]*Hist {
	out := make(map[string]*Hist, len(hs))
	for t, h := range hs {
		out[t] = HistOf(h)
	}
	return out
}

// writeHistograms writes hs as lines of an interval log of base time
// baseMs to w, one histogram per tag in tag order, each spanning
// [startMs, endMs] (the lines the library's log writer writes: hlogEncoder).
func writeHistograms(w io.Writer, baseMs int64, hs map[string]*Hist, startMs, endMs int64) error {
	tags := make([]string, 0, len(hs))
	for t := range hs {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	var enc hlogEncoder
	for _, t := range tags {
		if err := enc.write(w, baseMs, t, startMs, endMs, hs[t]); err != nil {
			return err
		}
	}
	return nil
}

// splitTag splits "op:name.kind" into "op:name" and "kind".
func splitTag(tag string) (string, string) {
	i := strings.LastIndexByte(tag, '.')
	if i < 0 {
		return tag, ""
	}
	return tag[:i], tag[i+1:]
}

// writeSummaryHistograms writes summary.hlog: end's histograms over the
// measured window (w.mu held).
func (w *ResultsDir) writeSummaryHistograms(end *RunEnd) error {
	from, to := w.start, w.start
	if s := end.Summary; s != nil && !s.Started.IsZero() {
		from = s.Started.Add(time.Duration(s.WarmupS * float64(time.Second)))
		to = from.Add(time.Duration(s.DurationS * float64(time.Second)))
	}
	var b bytes.Buffer
	lw := hdr.NewHistogramLogWriter(&b)
	lw.OutputComment("mcpbench: the histograms behind summary.json (values in microseconds), for exact merges of segments")
	lw.OutputLogFormatVersion()
	outputTimes(lw, from)
	lw.OutputLegend()
	if err := writeHistograms(&b, lw.BaseTime(), end.Histograms, from.UnixMilli(), to.UnixMilli()); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(w.dir, FileSummaryHistograms), b.Bytes())
}

// readSummaryHistograms reads a summary.hlog: histograms by tag.
func readSummaryHistograms(path string) (map[string]*hdr.Histogram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]*hdr.Histogram{}
	lr := hdr.NewHistogramLogReader(f)
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			if errors.Is(err, io.EOF) || strings.Contains(err.Error(), "EOF") {
				return out, nil // a cut last line: keep what came before
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h == nil {
			return out, nil
		}
		if x, ok := out[h.Tag()]; ok {
			x.Merge(h)
		} else {
			out[h.Tag()] = h
		}
	}
}

// writeFileAtomic writes data to path through a temporary file renamed
// into place (as WriteJSON does).
func writeFileAtomic(path string, data []byte) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// outputTimes writes an interval log's StartTime and BaseTime lines and
// sets its base time to t. The lines carry milliseconds ("%.3f" seconds,
// as the format and its reader have them): the library's own writers
// drop them, which shifted every interval read back by the start's
// fraction of a second.
func outputTimes(lw *hdr.HistogramLogWriter, t time.Time) {
	ms := t.UnixMilli()
	secs := fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
	lw.OutputComment("[StartTime: " + secs + " (seconds since epoch), " + time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) + "]")
	lw.OutputComment("[BaseTime: " + secs + " (seconds since epoch)]")
	lw.SetBaseTime(ms)
}
