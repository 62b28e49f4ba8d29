package results

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// A Hist answers as the dense histogram of the same values, bit for bit:
// quantiles, min, max, mean, standard deviation, the populated bars and
// the encoding, for values across the whole range, after merges and a
// reset.
func TestHistMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draws := map[string]func() int64{
		"uniform-ms":  func() int64 { return 1 + rng.Int64N(10_000) },
		"lognormal":   func() int64 { return int64(200 * (1 + rng.ExpFloat64()*rng.ExpFloat64()*50)) },
		"whole-range": func() int64 { return 1 + rng.Int64N(HistMax) },
		"one-value":   func() int64 { return 777 },
	}
	for name, draw := range draws {
		h, d := NewHist(), NewHistogram()
		part, dpart := NewHist(), NewHistogram()
		for i := range 20_000 {
			v := draw()
			if i%3 == 0 {
				part.RecordValue(v)
				dpart.RecordValue(v)
				continue
			}
			h.RecordValue(v)
			d.RecordValue(v)
		}
		h.Merge(part)
		d.Merge(dpart)
		histEqual(t, name, h, d)
		h.Reset()
		d.Reset()
		h.RecordValue(HistMax)
		d.RecordValue(HistMax)
		histEqual(t, name+" after reset", h, d)
	}
	histEqual(t, "empty", NewHist(), NewHistogram())
	var none *Hist
	if none.TotalCount() != 0 || none.Max() != 0 || none.ValueAtQuantile(99) != 0 || LatencyOf(none) != (Latency{}) || LatencyOf((*hdr.Histogram)(nil)) != (Latency{}) {
		t.Fatal("a nil Hist must read as empty")
	}
}

func histEqual(t *testing.T, name string, h *Hist, d *hdr.Histogram) {
	t.Helper()
	if h.TotalCount() != d.TotalCount() {
		t.Fatalf("%s: count %d, dense %d", name, h.TotalCount(), d.TotalCount())
	}
	for _, q := range []float64{0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100} {
		if a, b := h.ValueAtQuantile(q), d.ValueAtQuantile(q); a != b {
			t.Fatalf("%s: q%v %d, dense %d", name, q, a, b)
		}
	}
	if d.TotalCount() > 0 && (h.Max() != d.Max() || h.Min() != d.Min()) {
		t.Fatalf("%s: min/max %d/%d, dense %d/%d", name, h.Min(), h.Max(), d.Min(), d.Max())
	}
	if h.Mean() != d.Mean() || h.StdDev() != d.StdDev() {
		t.Fatalf("%s: mean/sd %v/%v, dense %v/%v", name, h.Mean(), h.StdDev(), d.Mean(), d.StdDev())
	}
	if LatencyOf(h) != LatencyOf(d) {
		t.Fatalf("%s: latency %+v, dense %+v", name, LatencyOf(h), LatencyOf(d))
	}
	var bars []hdr.Bar
	for _, b := range d.Distribution() {
		if b.Count > 0 {
			bars = append(bars, b)
		}
	}
	got := h.Distribution()
	if len(got) != len(bars) {
		t.Fatalf("%s: %d bars, dense %d", name, len(got), len(bars))
	}
	for i := range bars {
		if got[i] != bars[i] {
			t.Fatalf("%s: bar %d %+v, dense %+v", name, i, got[i], bars[i])
		}
	}
	a, err := h.Dense().Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: encodings differ", name)
	}
}

// The interval lines hlogEncoder writes are the library's for the same
// histograms, byte for byte: empty, one value, values across the range,
// the top of the range.
func TestHlogEncoderMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var enc hlogEncoder
	const base = 1_700_000_000_123
	for i, n := range []int{0, 1, 10, 1000, 50_000} {
		h := NewHist()
		for range n {
			switch rng.IntN(3) {
			case 0:
				h.RecordValue(1 + rng.Int64N(5000))
			case 1:
				h.RecordValue(int64(1000 * (1 + rng.ExpFloat64()*20)))
			default:
				h.RecordValue(1 + rng.Int64N(HistMax))
			}
		}
		if i == 2 {
			h.RecordValue(HistMax)
		}
		var want, got bytes.Buffer
		lw := hdr.NewHistogramLogWriter(&want)
		lw.SetBaseTime(base)
		d := h.Dense()
		d.SetTag("op:tools/call:x.response")
		d.SetStartTimeMs(base + 1500)
		d.SetEndTimeMs(base + 2501)
		if err := lw.OutputIntervalHistogram(d); err != nil {
			t.Fatal(err)
		}
		if err := enc.write(&got, base, "op:tools/call:x.response", base+1500, base+2501, h); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("%d values:\n got %s\nwant %s", n, got.String(), want.String())
		}
	}
	if err := enc.write(io.Discard, 0, "a,b", 0, 0, NewHist()); err == nil {
		t.Fatal("a tag with a comma must be refused")
	}
}
