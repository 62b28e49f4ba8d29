package argtmpl

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"
)

// Data files feed argument templates ({{.column}}): a CSV file with a
// header row (every value a string) or a JSONL file (one JSON object per
// line; a value keeps its JSON type). An op draws one row per request —
// one per iteration, since a VU's iteration is one op — and every
// {{.column}} of that request reads the same row.

// Orders in which the rows of a data file are drawn.
const (
	// OrderSequential takes row 1, 2, … n, 1, 2, … across the whole run:
	// one cursor per data file that every VU advances, so over k × n
	// requests each row is used exactly k times.
	OrderSequential = "sequential"
	// OrderRandom draws a row uniformly from the VU's seeded random
	// stream (reproducible with the profile's seed).
	OrderRandom = "random"
)

// MaxDataBytes bounds a data file (it is held in memory for the run).
const MaxDataBytes = 256 << 20

// DataSpec names a data file for argument templates. In YAML it is the
// file alone (data: cities.csv) or a mapping (data: {file: cities.csv,
// order: random}). A relative path is read from the profile file's
// directory (from the working directory for a built-in profile or a
// profile built in code).
type DataSpec struct {
	// File is a .csv (header row first) or .jsonl/.ndjson file.
	File string `yaml:"file"`
	// Order is sequential (the default) or random.
	Order string `yaml:"order"`
}

// UnmarshalYAML reads a scalar (the file) or a mapping of file and order;
// unknown keys are reported with their line.
func (d *DataSpec) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		d.File = n.Value
		return nil
	case yaml.MappingNode:
		var errs []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case k.Value != "file" && k.Value != "order":
				errs = append(errs, fmt.Sprintf("line %d: unknown field %q", k.Line, k.Value))
			case v.Kind != yaml.ScalarNode:
				errs = append(errs, fmt.Sprintf("line %d: %s: want a string", v.Line, k.Value))
			case k.Value == "file":
				d.File = v.Value
			default:
				d.Order = v.Value
			}
		}
		if len(errs) > 0 {
			return &yaml.TypeError{Errors: errs}
		}
		return nil
	}
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: data: want a file name or {file: ..., order: sequential|random}", n.Line)}}
}

// dataCell is one value of a row, ready to render.
type dataCell struct {
	inner []byte // the value's text JSON-escaped, without quotes (inside a string)
	whole []byte // the value as JSON: a string for CSV, the value as written for JSONL
}

// Data is a loaded data file: its rows and the run's cursor.
type Data struct {
	file    string // as written, for messages
	random  bool
	columns []string         // CSV: the header; JSONL: every key seen, sorted
	rows    [][]dataCell     // rows[i][column index]; nil cell: the JSONL row lacks the key
	cursor  atomic.Uint64    // sequential order: rows taken so far
	seg     Slotter          // the run's execution segment; nil: the whole test
	anyOnce sync.Once        // the rows as maps, built for full templates only
	anyRows []map[string]any // the rows as text/template's data
}

// column returns the index of column name, or -1.
func (d *Data) column(name string) int { return slices.Index(d.columns, name) }

// pick returns the index of the row of one request: the run's next row
// (sequential) or a draw from rng (random).
func (d *Data) pick(rng *rngState) int {
	n := uint64(len(d.rows))
	if d.random {
		return int(uintN(rng, n))
	}
	return int(slot(d.seg, d.cursor.Add(1)-1) % n) // a segment's share of the rows' turns
}

// rowData returns row i as a map (column → string, or the decoded JSON
// value for JSONL), the data of a full text/template.
func (d *Data) rowData(i int) map[string]any {
	d.anyOnce.Do(func() {
		d.anyRows = make([]map[string]any, len(d.rows))
		for r, row := range d.rows {
			m := make(map[string]any, len(row))
			for c, cell := range row {
				if cell.whole == nil {
					continue
				}
				var v any
				dec := json.NewDecoder(bytes.NewReader(cell.whole))
				dec.UseNumber()    // numbers print as written
				_ = dec.Decode(&v) // valid JSON: made at load
				m[d.columns[c]] = v
			}
			d.anyRows[r] = m
		}
	})
	return d.anyRows[i]
}

// LoadData reads the data file of spec, relative to dir.
func LoadData(spec *DataSpec, dir string) (*Data, error) {
	switch spec.Order {
	case "", OrderSequential, OrderRandom:
	default:
		return nil, fmt.Errorf("order: %q, want sequential or random", spec.Order)
	}
	if spec.File == "" {
		return nil, errors.New("file: empty, want a .csv or .jsonl file")
	}
	path := spec.File
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxDataBytes {
		return nil, fmt.Errorf("file: %s: %d bytes, larger than %d MiB", spec.File, fi.Size(), MaxDataBytes>>20)
	}
	d := &Data{file: spec.File, random: spec.Order == OrderRandom}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv":
		err = d.readCSV(f)
	case ".jsonl", ".ndjson":
		err = d.readJSONL(f)
	default:
		return nil, fmt.Errorf("file: %s: want a .csv, .jsonl or .ndjson file", spec.File)
	}
	if err != nil {
		return nil, fmt.Errorf("file: %s: %w", spec.File, err)
	}
	if len(d.rows) == 0 {
		return nil, fmt.Errorf("file: %s: no rows", spec.File)
	}
	return d, nil
}

func (d *Data) readCSV(r io.Reader) error {
	cr := csv.NewReader(r) // every row must have the header's number of fields
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty: want a header row and rows")
		}
		return csvError(err)
	}
	for i, h := range head {
		h = strings.TrimPrefix(h, "\ufeff") // a BOM before the first column
		if h == "" || slices.Contains(head[:i], h) {
			return fmt.Errorf("header: column %d: %q is empty or repeated", i+1, h)
		}
		head[i] = h
	}
	d.columns = head
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return csvError(err)
		}
		row := make([]dataCell, len(rec))
		for i, v := range rec {
			inner := appendEscaped(nil, []byte(v))
			row[i] = dataCell{inner: inner, whole: slices.Concat([]byte{'"'}, inner, []byte{'"'})}
		}
		d.rows = append(d.rows, row)
	}
}

// csvError words a CSV error; a file cut at MaxDataBytes reads as one.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

func (d *Data) readJSONL(r io.Reader) error {
	br := bufio.NewReader(r)
	var objs []map[string]json.RawMessage
	keys := map[string]bool{}
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(b); len(t) > 0 {
			var m map[string]json.RawMessage
			if jerr := json.Unmarshal(t, &m); jerr != nil || m == nil {
				return fmt.Errorf("line %d: want one JSON object per line", line)
			}
			for k := range m {
				keys[k] = true
			}
			objs = append(objs, m)
		}
		if err != nil {
			break
		}
	}
	d.columns = slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	for _, m := range objs {
		row := make([]dataCell, len(d.columns))
		for c, k := range d.columns {
			raw, ok := m[k]
			if !ok {
				continue
			}
			row[c] = jsonCell(raw)
		}
		d.rows = append(d.rows, row)
	}
	return nil
}

// jsonCell is a JSONL value: compact JSON as a whole, and its text
// (a string's content; any other value's JSON) inside a string.
func jsonCell(raw json.RawMessage) dataCell {
	var c bytes.Buffer
	_ = json.Compact(&c, raw) // valid: Unmarshal accepted it
	whole := c.Bytes()
	if whole[0] == '"' {
		var s string
		_ = json.Unmarshal(whole, &s)
		// Re-escaped the way templates escape, so inner and whole agree.
		inner := appendEscaped(nil, []byte(s))
		return dataCell{inner: inner, whole: slices.Concat([]byte{'"'}, inner, []byte{'"'})}
	}
	return dataCell{inner: appendEscaped(nil, whole), whole: whole}
}
