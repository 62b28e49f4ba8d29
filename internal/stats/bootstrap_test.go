package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
)

// histOf makes a Hist of an HdrHistogram's buckets (highest equivalent
// values), as the sweep does with interval histograms.
func histOf(h *hdr.Histogram) Hist {
	var out Hist
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out.Values = append(out.Values, float64(b.To))
			out.Counts = append(out.Counts, b.Count)
		}
	}
	return out
}

// The pooled quantile is HdrHistogram's quantile of the merged blocks.
func TestQuantileMatchesHdr(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	merged := hdr.New(1, 3_600_000_000, 3)
	var blocks []Hist
	for range 12 {
		h := hdr.New(1, 3_600_000_000, 3)
		for range 700 {
			v := int64(500 + rng.ExpFloat64()*3000)
			h.RecordValue(v)
			merged.RecordValue(v)
		}
		blocks = append(blocks, histOf(h))
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		est, ci, ok := QuantileCI(blocks, q, 0.95, 1)
		want := float64(merged.ValueAtQuantile(100 * q))
		if !ok || est != want || ci.Lo > est || ci.Hi < est {
			t.Errorf("q %v: est %v ci %+v ok %v, want %v inside", q, est, ci, ok, want)
		}
	}
}

// The interval covers the true p99 in about 95 % of runs when the
// intervals are independent: between 88 and 99 of 100.
func TestQuantileCICoverage(t *testing.T) {
	const trials = 100
	truth := 1000 * -math.Log(0.01) // p99 of an exponential with mean 1000
	covered := 0
	for s := range trials {
		rng := rand.New(rand.NewPCG(uint64(s), 99))
		var blocks []Hist
		for range 15 {
			h := hdr.New(1, 3_600_000_000, 3)
			for range 400 {
				h.RecordValue(int64(rng.ExpFloat64() * 1000))
			}
			blocks = append(blocks, histOf(h))
		}
		_, ci, ok := QuantileCI(blocks, 0.99, 0.95, uint64(s))
		if !ok {
			t.Fatal("no interval from 15 blocks")
		}
		if ci.Lo <= truth && truth <= ci.Hi {
			covered++
		}
	}
	if covered < 88 || covered > 99 {
		t.Fatalf("95 %% interval covered the true p99 in %d of %d trials", covered, trials)
	}
}

// Too few blocks: the estimate, no interval.
func TestQuantileCIFewBlocks(t *testing.T) {
	b := Hist{Values: []float64{1, 2, 3}, Counts: []int64{50, 40, 10}}
	est, _, ok := QuantileCI([]Hist{b, b}, 0.5, 0.95, 1)
	if ok || est != 1 {
		t.Fatalf("est %v ok %v", est, ok)
	}
	if _, _, ok := QuantileCI(nil, 0.5, 0.95, 1); ok {
		t.Fatal("an interval from nothing")
	}
}

func TestRatioCI(t *testing.T) {
	num := []float64{1, 0, 2, 1, 0, 3, 1, 0, 0, 2}
	den := []float64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	est, ci, ok := RatioCI(num, den, 0.95, 3)
	if !ok || est != 0.01 || ci.Lo > est || ci.Hi < est || ci.Lo < 0 || ci.Hi > 0.03 {
		t.Fatalf("est %v ci %+v ok %v", est, ci, ok)
	}
	// No errors: a zero-width interval at 0.
	est, ci, ok = RatioCI(make([]float64, 10), den, 0.95, 3)
	if !ok || est != 0 || ci != (CI{}) {
		t.Fatalf("est %v ci %+v ok %v", est, ci, ok)
	}
}

// Many blocks are pooled to MaxBlocks, keeping every observation.
func TestPoolBlocks(t *testing.T) {
	var blocks []Hist
	for i := range 100 {
		blocks = append(blocks, Hist{Values: []float64{float64(i)}, Counts: []int64{1}})
	}
	p := poolBlocks(blocks, MaxBlocks)
	var n int64
	for _, b := range p {
		n += b.Total()
	}
	if len(p) != MaxBlocks || n != 100 {
		t.Fatalf("%d blocks, %d observations", len(p), n)
	}
}

func TestIsotonic(t *testing.T) {
	for _, c := range []struct{ y, w, want []float64 }{
		{[]float64{1, 2, 3}, nil, []float64{1, 2, 3}},
		{[]float64{89, 100, 77, 300}, nil, []float64{266.0 / 3, 266.0 / 3, 266.0 / 3, 300}},
		{[]float64{5, 3, 3, 3, 10}, nil, []float64{3.5, 3.5, 3.5, 3.5, 10}},
		{[]float64{4, 2}, []float64{1, 3}, []float64{2.5, 2.5}},
	} {
		if d := cmp.Diff(c.want, Isotonic(c.y, c.w)); d != "" {
			t.Errorf("Isotonic(%v, %v) (-want +got):\n%s", c.y, c.w, d)
		}
	}
}
