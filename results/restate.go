package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mcpbench/mcpbench/outcome"
)

// restate rewrites intervals.csv (closed) with every count by its op's
// intended start: the counts of ops that completed, failed or were
// dropped after the interval of their intended start had closed were
// written in the row of the interval they came in (the live row); the
// moves give them back (metrics.Recorder.Tick), with their response times, so
// that the row's percentiles are those of its ops by intended start too
// (restateLatency). The completed rate is the row's
// count over its span again. The file is replaced atomically; nothing to
// do without moves. Errors: the file cannot be read or written.
func (w *ResultsDir) restate() error {
	if len(w.moves) == 0 || w.err != nil {
		return nil
	}
	path := filepath.Join(w.dir, FileIntervals)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil || len(recs) == 0 {
		return fmt.Errorf("%s: restating by intended start: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	add := func(line int, name string, d int64) {
		i, ok := col[name]
		if !ok || line+1 >= len(recs) || i >= len(recs[line+1]) || d == 0 {
			return
		}
		cell := &recs[line+1][i]
		v, _ := strconv.ParseInt(*cell, 10, 64)
		*cell = strconv.FormatInt(v+d, 10)
	}
	touched := map[int]bool{}
	for _, m := range w.moves {
		from, ok1 := w.rowAt[m.From.UnixNano()]
		to, ok2 := w.rowAt[m.To.UnixNano()]
		if !ok1 || !ok2 || from == to || m.Op < 0 || m.Op >= len(w.names) {
			continue
		}
		for _, l := range []struct {
			line int
			sign int64
		}{{from, 1}, {to, -1}} {
			touched[l.line] = true
			op := "op:" + w.names[m.Op]
			add(l.line, "all.count", l.sign*m.Count)
			add(l.line, "all.errors", l.sign*m.Errors)
			add(l.line, op+".count", l.sign*m.Count)
			add(l.line, op+".errors", l.sign*m.Errors)
			add(l.line, "dropped", l.sign*m.Dropped)
			for c := outcome.ClassOK + 1; c < outcome.NumClasses; c++ {
				add(l.line, "errors_"+c.String(), l.sign*m.Classes[c])
			}
		}
	}
	w.restateLatency(recs, col)
	ci, si, ri := col["all.count"], col["interval_s"], col["rate"]
	for line := range touched {
		rec := recs[line+1]
		n, _ := strconv.ParseInt(rec[ci], 10, 64)
		if secs, _ := strconv.ParseFloat(rec[si], 64); secs > 0 {
			rec[ri] = f3(float64(n) / secs)
		}
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	if err := cw.WriteAll(recs); err != nil {
		return err
	}
	return writeFileAtomic(path, b.Bytes())
}

// restateLatency rewrites the percentile cells (per op and "all") of the
// rows the moves' response times leave or join: each op's histogram as
// the row was written (w.bases) less the response times moved out of it,
// plus those moved into it. A row without a completed op then has empty
// cells. A row whose histograms were not kept (over restateBaseBytes)
// keeps its cells (emptied where its count is now 0) and counts in
// w.unrestated.
func (w *ResultsDir) restateLatency(recs [][]string, col map[string]int) {
	type key struct{ line, op int }
	in, out := map[key]*Hist{}, map[key]*Hist{}
	lines := map[int]bool{}
	for _, m := range w.moves {
		if m.Resp.TotalCount() == 0 || m.Op < 0 || m.Op >= len(w.names) {
			continue
		}
		from, ok1 := w.rowAt[m.From.UnixNano()]
		to, ok2 := w.rowAt[m.To.UnixNano()]
		if !ok1 || !ok2 || from == to {
			continue
		}
		for _, x := range []struct {
			set  map[key]*Hist
			line int
		}{{in, from}, {out, to}} {
			k := key{x.line, m.Op}
			if x.set[k] == nil {
				x.set[k] = NewHist()
			}
			x.set[k].Merge(m.Resp)
			lines[x.line] = true
		}
	}
	set := func(line int, prefix string, h *Hist) {
		l := LatencyOf(h)
		cells := []string{f3(l.P50), f3(l.P90), f3(l.P99), f3(l.Max)}
		if h.TotalCount() == 0 {
			cells = []string{"", "", "", ""}
		}
		for j, c := range []string{"p50_ms", "p90_ms", "p99_ms", "max_ms"} {
			if i, ok := col[prefix+"."+c]; ok && line+1 < len(recs) && i < len(recs[line+1]) {
				recs[line+1][i] = cells[j]
			}
		}
	}
	for line := range lines {
		if line >= len(w.bases) || w.bases[line] == nil {
			w.unrestated++
			// Still, a row left without a completed op has none.
			for _, prefix := range append([]string{"all"}, w.opPrefixes()...) {
				if i, ok := col[prefix+".count"]; ok && line+1 < len(recs) && i < len(recs[line+1]) && recs[line+1][i] == "0" {
					set(line, prefix, nil)
				}
			}
			continue
		}
		all := NewHist()
		for op, b := range w.bases[line] {
			h := b
			k := key{line, op}
			if out[k] != nil || in[k] != nil {
				h = b.Without(out[k])
				h.Merge(in[k])
				set(line, "op:"+w.names[op], h)
			}
			all.Merge(h)
		}
		set(line, "all", all)
	}
}

// opPrefixes are the column prefixes of the ops ("op:" + name).
func (w *ResultsDir) opPrefixes() []string {
	out := make([]string, len(w.names))
	for i, n := range w.names {
		out[i] = "op:" + n
	}
	return out
}

// Unrestated is the number of intervals.csv rows whose percentiles End
// could not restate by intended start because their histograms were past
// the memory bound (restateBaseBytes): they keep the percentiles they were
// written with (emptied where no op of the row completed). Read it after
// End.
func (w *ResultsDir) Unrestated() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unrestated
}
