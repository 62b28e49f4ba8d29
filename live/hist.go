package live

import (
	"math"
	"time"

	"github.com/mcpbench/mcpbench/results"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Bounds of the classic buckets of the duration histograms, seconds:
// from half a millisecond to a minute.
var bounds = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// nativeSchema is the resolution of the native buckets: 2^(2^-3), about
// 9 % wide, coarser than the HdrHistograms they come from (0.1 %).
const nativeSchema = 3

// cumHist is a duration histogram accumulated over a run from the
// interval HdrHistograms (µs): classic bucket counts, native bucket
// counts and the sum. Not safe for concurrent use (the sink's lock
// guards it).
type cumHist struct {
	count   uint64
	sum     float64 // seconds
	classic []uint64
	native  map[int]int64
}

func newCumHist() *cumHist {
	return &cumHist{classic: make([]uint64, len(bounds)), native: map[int]int64{}}
}

// add adds an interval's histogram: each bucket at its highest
// equivalent value, the sum from the histogram's mean.
func (c *cumHist) add(h *results.Hist) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	n := h.TotalCount()
	c.count += uint64(n)
	c.sum += h.Mean() * float64(n) / 1e6
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := float64(b.To) / 1e6
		for i, ub := range bounds {
			if v <= ub {
				c.classic[i] += uint64(b.Count)
				break
			}
		}
		c.native[nativeIndex(v)] += b.Count
	}
}

// nativeIndex is the native bucket of v > 0 at nativeSchema: bucket i
// holds (2^((i−1)/8), 2^(i/8)].
func nativeIndex(v float64) int {
	return int(math.Ceil(math.Log2(v) * (1 << nativeSchema)))
}

// metric returns the histogram as one Prometheus metric carrying both
// the classic buckets (cumulative, as the text format shows them) and the
// native ones (scraped by a Prometheus with native histograms on).
func (c *cumHist) metric(desc *prometheus.Desc, start time.Time, labels ...string) (prometheus.Metric, error) {
	buckets := make(map[float64]uint64, len(bounds))
	var cum uint64
	for i, ub := range bounds {
		cum += c.classic[i]
		buckets[ub] = cum
	}
	classic, err := prometheus.NewConstHistogramWithCreatedTimestamp(desc, c.count, c.sum, buckets, start, labels...)
	if err != nil {
		return nil, err
	}
	native, err := prometheus.NewConstNativeHistogram(desc, c.count, c.sum, c.native, nil, 0, nativeSchema, 0, start, labels...)
	if err != nil {
		return nil, err
	}
	return bothHist{classic, native}, nil
}

// bothHist writes a classic histogram with the native buckets of
// another added, as client_golang's own histograms do when both are
// configured.
type bothHist struct{ classic, native prometheus.Metric }

func (b bothHist) Desc() *prometheus.Desc { return b.classic.Desc() }

func (b bothHist) Write(m *dto.Metric) error {
	if err := b.classic.Write(m); err != nil {
		return err
	}
	var n dto.Metric
	if err := b.native.Write(&n); err != nil {
		return err
	}
	h, nh := m.Histogram, n.Histogram
	h.Schema, h.ZeroThreshold, h.ZeroCount = nh.Schema, nh.ZeroThreshold, nh.ZeroCount
	h.PositiveSpan, h.PositiveDelta = nh.PositiveSpan, nh.PositiveDelta
	return nil
}
