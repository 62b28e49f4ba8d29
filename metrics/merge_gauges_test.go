package metrics

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
)

// gaugeRow is one intervals.csv row of a synthetic segment: its end (since
// the segment's start), one op completed in it, and its gauges.
type gaugeRow struct {
	end                    time.Duration
	vus, sessions, streams int64
	cores, rss             float64
}

// writeGaugeSeg writes segment i of n, started at start, with rows, as a
// run writes them (measured phase), and returns its directory.
func writeGaugeSeg(t *testing.T, dir string, i, n int, start time.Time, rows []gaugeRow) string {
	t.Helper()
	d := filepath.Join(dir, string(rune('a'+i)))
	rec := NewRecorder(segOps, 1)
	rec.Begin(start, start.Add(rows[0].end))
	w, err := results.NewResultsDir(d)
	if err != nil {
		t.Fatal(err)
	}
	sg := seg(i, n, "")
	info := &results.RunInfo{Tool: "mcpbench", Target: "http://x/mcp", Profile: "p", Started: start, Ops: segOps, Segment: sg}
	w.Start(info)
	for j, g := range rows {
		end := start.Add(g.end)
		at := end.Add(-2 * time.Millisecond)
		rec.Shard(0).Record(&driver.Result{Op: 0, Intended: at, Start: at, FirstByte: at, End: at.Add(time.Millisecond), Class: driver.ClassOK, Status: 200})
		var next time.Time
		if j+1 < len(rows) {
			next = start.Add(rows[j+1].end)
		}
		iv := rec.Tick(end, next)
		row := results.RowOf(iv)
		row.VUs, row.Sessions, row.Streams, row.Self.Cores, row.Self.RSSMB = g.vus, g.sessions, g.streams, g.cores, g.rss
		w.Interval(&results.IntervalRecord{Interval: iv, Row: row, Phase: results.PhaseMeasure})
	}
	secs := rows[len(rows)-1].end.Seconds()
	ops, all := rec.Summarize(secs)
	w.End(&results.RunEnd{Info: info, Summary: &results.Summary{Started: start, Ops: ops, All: all, Segment: sg, DurationS: secs}, Histograms: rec.Histograms()})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	return d
}

// mergedGauges is a merged row's time (ms since the merged start), ops
// and gauges.
type mergedGauges struct {
	MS                     int64
	Count                  int64
	VUs, Sessions, Streams int64
	Cores, RSS             float64
}

// mergeGauges merges dirs, writes the merged directory and returns its
// rows as intervals.csv holds them, and the last row a sink got from
// Replay (what a sweep step's collector keeps as its last measured row).
func mergeGauges(t *testing.T, dirs ...string) ([]mergedGauges, mergedGauges) {
	t.Helper()
	m, err := results.MergeResults(dirs)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "merged")
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	res, err := results.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	var rows []mergedGauges
	for _, iv := range res.Intervals {
		rows = append(rows, mergedGauges{MS: int64(iv.T*1000 + 0.5), Count: iv.All.Count, VUs: iv.VUs, Sessions: iv.Sessions, Streams: iv.Streams, Cores: iv.Self.Cores, RSS: iv.Self.RSSMB})
	}
	var rs recordSink
	m.Replay(&rs)
	var last mergedGauges
	if n := len(rs.recs); n > 0 {
		r := rs.recs[n-1]
		last = mergedGauges{MS: r.Elapsed.Milliseconds(), Count: r.Row.All.Count, VUs: r.Row.VUs, Sessions: r.Row.Sessions, Streams: r.Row.Streams, Cores: r.Row.Self.Cores, RSS: r.Row.Self.RSSMB}
	}
	return rows, last
}

// Two segments started together; b's last row ends 12 ms past the 2 s
// boundary (past the slack), a's on it. The merged row of b's late end
// holds both segments' levels (a's carried: it ran up to that interval's
// start), not b's alone, and the row before holds each one's latest level
// there: the whole generator's memory at the end is the sum of the
// segments' last rows.
func TestMergeGaugesLateLastRow(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	a := writeGaugeSeg(t, dir, 0, 2, start, []gaugeRow{
		{end: time.Second, vus: 1, sessions: 10, streams: 100, cores: 0.1, rss: 10},
		{end: 2 * time.Second, vus: 2, sessions: 20, streams: 200, cores: 0.2, rss: 11},
	})
	b := writeGaugeSeg(t, dir, 1, 2, start, []gaugeRow{
		{end: time.Second, vus: 3, sessions: 30, streams: 300, cores: 0.3, rss: 20},
		{end: 1980 * time.Millisecond, vus: 4, sessions: 40, streams: 400, cores: 0.4, rss: 21},
		{end: 2012 * time.Millisecond, vus: 5, sessions: 50, streams: 500, cores: 0.5, rss: 22},
	})
	rows, last := mergeGauges(t, a, b)
	want := []mergedGauges{
		{MS: 1000, Count: 2, VUs: 1 + 3, Sessions: 10 + 30, Streams: 100 + 300, Cores: 0.4, RSS: 10 + 20},
		{MS: 2000, Count: 2, VUs: 2 + 4, Sessions: 20 + 40, Streams: 200 + 400, Cores: 0.6, RSS: 11 + 21},
		{MS: 2012, Count: 1, VUs: 2 + 5, Sessions: 20 + 50, Streams: 200 + 500, Cores: 0.7, RSS: 11 + 22},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("merged rows (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want[len(want)-1], last); d != "" {
		t.Errorf("the last row replayed to sinks (-want +got):\n%s", d)
	}
}

// Two rows of one segment in one merged interval (the second within the
// slack of the boundary) count once in its gauges — the later one is the
// segment's level there — while their ops both count.
func TestMergeGaugesTwoRowsOfASegmentInOneInterval(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	a := writeGaugeSeg(t, dir, 0, 2, start, []gaugeRow{
		{end: time.Second, vus: 1, sessions: 10, streams: 100, cores: 0.1, rss: 10},
		{end: 2 * time.Second, vus: 2, sessions: 20, streams: 200, cores: 0.2, rss: 11},
		{end: 2003 * time.Millisecond, vus: 3, sessions: 30, streams: 300, cores: 0.3, rss: 12},
	})
	b := writeGaugeSeg(t, dir, 1, 2, start, []gaugeRow{
		{end: time.Second, vus: 4, sessions: 40, streams: 400, cores: 0.4, rss: 20},
		{end: 2 * time.Second, vus: 5, sessions: 50, streams: 500, cores: 0.5, rss: 21},
	})
	rows, _ := mergeGauges(t, a, b)
	want := []mergedGauges{
		{MS: 1000, Count: 2, VUs: 1 + 4, Sessions: 10 + 40, Streams: 100 + 400, Cores: 0.5, RSS: 10 + 20},
		{MS: 2000, Count: 3, VUs: 3 + 5, Sessions: 30 + 50, Streams: 300 + 500, Cores: 0.8, RSS: 12 + 21},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("merged rows (-want +got):\n%s", d)
	}
}

// A segment is carried into an interval where it has no row only while
// it still runs: a, whose only row ends at 1 s, is carried into (1 s, 2 s]
// (it ran up to its start) but contributes nothing to (2 s, 3 s]; c,
// started 1 s later, contributes nothing before its first row's interval.
func TestMergeGaugesEndedSegmentContributesNothing(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	a := writeGaugeSeg(t, dir, 0, 3, start, []gaugeRow{
		{end: time.Second, vus: 1, sessions: 10, streams: 100, cores: 0.1, rss: 10},
	})
	b := writeGaugeSeg(t, dir, 1, 3, start, []gaugeRow{
		{end: time.Second, vus: 2, sessions: 20, streams: 200, cores: 0.2, rss: 20},
		{end: 2 * time.Second, vus: 3, sessions: 30, streams: 300, cores: 0.3, rss: 21},
		{end: 3 * time.Second, vus: 4, sessions: 40, streams: 400, cores: 0.4, rss: 22},
	})
	c := writeGaugeSeg(t, dir, 2, 3, start.Add(time.Second), []gaugeRow{
		{end: time.Second, vus: 5, sessions: 50, streams: 500, cores: 0.5, rss: 30},
		{end: 2 * time.Second, vus: 6, sessions: 60, streams: 600, cores: 0.6, rss: 31},
	})
	rows, _ := mergeGauges(t, a, b, c)
	want := []mergedGauges{
		{MS: 1000, Count: 2, VUs: 1 + 2, Sessions: 10 + 20, Streams: 100 + 200, Cores: 0.3, RSS: 10 + 20},
		{MS: 2000, Count: 2, VUs: 1 + 3 + 5, Sessions: 10 + 30 + 50, Streams: 100 + 300 + 500, Cores: 0.9, RSS: 10 + 21 + 30},
		{MS: 3000, Count: 2, VUs: 4 + 6, Sessions: 40 + 60, Streams: 400 + 600, Cores: 1, RSS: 22 + 31},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("merged rows (-want +got):\n%s", d)
	}
}
