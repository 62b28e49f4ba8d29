package results

import (
	"math/bits"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Hist is a latency histogram in microseconds with NewHistogram's
// geometry (1 µs … 1 h, 3 significant digits) stored sparsely: an
// hdrhistogram-go PackedHistogram, whose storage grows with the buckets
// that hold values (about 5 bytes each, plus ~300 bytes fixed) where a
// dense histogram of that range holds 23,552 counters (188 KB) from the
// start. Every per-op histogram of the recorder is a Hist, so an op costs
// what it records, not 188 KB per histogram per shard (issue 33: a
// 1,000-op profile took 2.4 GB).
//
// Its answers are the dense histogram's, bit for bit (the same bucket of
// each value; quantiles, min, max, mean and the hlog encoding through
// Dense or WriteDense): TestHistMatchesDense.
//
// The read methods accept a nil *Hist (an empty histogram). Not safe for
// concurrent use: the recorder guards each one with its shard's or its
// own lock.
type Hist struct {
	p *hdr.PackedHistogram
}

// NewHist returns an empty Hist.
func NewHist() *Hist { return &Hist{p: hdr.NewPacked(HistMin, HistMax, histSigFigs)} }

// HistOf returns a Hist holding d's values (nil and empty d: an empty
// Hist).
func HistOf(d *hdr.Histogram) *Hist {
	h := NewHist()
	if d != nil {
		h.p.MergeFrom(d)
	}
	return h
}

// RecordValue records v (µs); a value outside the range is an error and
// is not recorded.
func (h *Hist) RecordValue(v int64) error { return h.p.RecordValue(v) }

// TotalCount is the number of values recorded.
func (h *Hist) TotalCount() int64 {
	if h == nil {
		return 0
	}
	return h.p.TotalCount()
}

// ValueAtQuantile is the value at quantile q in [0, 100], as
// hdr.Histogram.ValueAtQuantile gives it (0 when empty).
func (h *Hist) ValueAtQuantile(q float64) int64 {
	if h == nil {
		return 0
	}
	return h.p.ValueAtPercentile(q)
}

// Max is the highest value recorded (its bucket's highest equivalent).
func (h *Hist) Max() int64 {
	if h.TotalCount() == 0 {
		return 0
	}
	return h.p.Max()
}

// Min is the lowest value recorded (its bucket's lowest equivalent).
func (h *Hist) Min() int64 {
	if h.TotalCount() == 0 {
		return 0
	}
	return h.p.Min()
}

// Mean is the mean of the values recorded (0 when empty).
func (h *Hist) Mean() float64 {
	if h == nil {
		return 0
	}
	return h.p.Mean()
}

// StdDev is the standard deviation of the values recorded.
func (h *Hist) StdDev() float64 {
	if h == nil {
		return 0
	}
	return h.p.StdDev()
}

// Merge adds b's values to h (b may be nil).
func (h *Hist) Merge(b *Hist) {
	if b.TotalCount() > 0 {
		h.p.Merge(b.p)
	}
}

// MergeDense adds a dense histogram's values to h (d may be nil).
func (h *Hist) MergeDense(d *hdr.Histogram) {
	if d != nil && d.TotalCount() > 0 {
		h.p.MergeFrom(d)
	}
}

// Clone returns a copy of h.
func (h *Hist) Clone() *Hist {
	if h == nil {
		return NewHist()
	}
	return &Hist{p: h.p.Clone()}
}

// Without returns a new Hist of h's values less b's, bucket by bucket (a
// bucket's count never below 0): h without values b holds that were
// recorded into h. b may be nil.
func (h *Hist) Without(b *Hist) *Hist {
	out := NewHist()
	if h.TotalCount() == 0 {
		return out
	}
	less := map[int64]int64{}
	if b.TotalCount() > 0 {
		for v, n := range b.p.ForEachBucket {
			lo, _ := bucketOf(v)
			less[lo] += n
		}
	}
	for v, n := range h.p.ForEachBucket {
		lo, _ := bucketOf(v)
		if k := n - less[lo]; k > 0 {
			out.p.RecordValues(v, k)
		}
	}
	return out
}

// Reset empties h, keeping its storage for the values to come.
func (h *Hist) Reset() { h.p.Reset() }

// Distribution is h's populated buckets in ascending order, as
// hdr.Histogram.Distribution gives them less its empty buckets: each bar
// from its lowest to its highest equivalent value.
func (h *Hist) Distribution() []hdr.Bar {
	if h.TotalCount() == 0 {
		return nil
	}
	var out []hdr.Bar
	for v, n := range h.p.ForEachBucket {
		lo, hi := bucketOf(v)
		out = append(out, hdr.Bar{From: lo, To: hi, Count: n})
	}
	return out
}

// bucketOf is the lowest and highest value equivalent to v in the
// geometry of NewHistogram (unit magnitude 0, 2048 sub-buckets: 3
// significant digits), as hdrhistogram-go computes them.
func bucketOf(v int64) (lo, hi int64) {
	const subBucketMask, subBucketCount, halfMagnitude = 2047, 2048, 10
	b := bits.Len64(uint64(v|subBucketMask)) - (halfMagnitude + 1)
	sub := v >> b
	size := b
	if sub >= subBucketCount {
		size++
	}
	lo = sub << b
	return lo, lo + int64(1)<<size - 1
}

// Dense returns a dense copy of h (188 KB): for a caller that needs an
// *hdr.Histogram. Prefer WriteDense with a histogram kept for the purpose.
func (h *Hist) Dense() *hdr.Histogram {
	d := NewHistogram()
	h.WriteDense(d)
	return d
}

// WriteDense makes d (from NewHistogram) hold h's values and nothing
// else, its tag and times cleared.
func (h *Hist) WriteDense(d *hdr.Histogram) {
	d.Reset()
	if h.TotalCount() > 0 {
		h.p.MergeInto(d)
	}
}

// Bytes is the memory h holds, approximately.
func (h *Hist) Bytes() int {
	if h == nil {
		return 0
	}
	return h.p.GetMemorySize() + 8
}

// StatusCounts counts ops by HTTP status (0: no response): the codes seen,
// a few bytes each, where an array of every code took 4.8 KB per op and
// shard. The zero value is empty. Not safe for concurrent use (as
// OpStats).
type StatusCounts struct{ c []statusCount }

type statusCount struct {
	code int
	n    int64
}

// Add adds n ops answered code.
func (s *StatusCounts) Add(code int, n int64) {
	for i := range s.c {
		if s.c[i].code == code {
			s.c[i].n += n
			return
		}
	}
	s.c = append(s.c, statusCount{code, n})
}

// Get is the ops answered code.
func (s *StatusCounts) Get(code int) int64 {
	for _, c := range s.c {
		if c.code == code {
			return c.n
		}
	}
	return 0
}

// All yields each code seen with its count, in the order first seen.
func (s *StatusCounts) All(yield func(code int, n int64) bool) {
	for _, c := range s.c {
		if !yield(c.code, c.n) {
			return
		}
	}
}
