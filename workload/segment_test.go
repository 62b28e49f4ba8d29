package workload

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/argtmpl"
	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
)

// Every global number is owned by exactly one segment of a sequence, a
// segment's numbers increase, and the segments' counts add up to any
// bound: no double counting, no gaps.
func TestSegmentsPartitionEveryNumber(t *testing.T) {
	sequences := map[string][]string{
		"":                            {"0/1"},
		"0,1/2,1":                     {"0/2", "1/2"},
		"0,1/3,2/3,1":                 {"0/3", "1/3", "2/3"},
		"0,1/4,1/2,1":                 {"0/3", "1/3", "2/3"},
		"0,1/3,1/2,1":                 {"0/3", "1/3", "2/3"},
		"0,0.3,1":                     {"0/2", "1/2"},
		"0,10%,35%,90%,1":             {"0/4", "1/4", "2/4", "3/4"},
		"0,1/7,2/7,3/7,4/7,5/7,6/7,1": {"0/7", "1/7", "2/7", "3/7", "4/7", "5/7", "6/7"},
	}
	for seq, specs := range sequences {
		var segs []*Segment
		for _, sp := range specs {
			s, err := ParseSegment(sp, seq)
			if err != nil {
				t.Fatalf("ParseSegment(%q, %q): %v", sp, seq, err)
			}
			segs = append(segs, s)
		}
		const n = 1000
		owner := make([]int, n)
		for i := range owner {
			owner[i] = -1
		}
		for k, s := range segs {
			prev := -1
			for j := uint64(0); ; j++ {
				g := int(s.Slot(j))
				if g <= prev {
					t.Fatalf("%s in %q: slot %d = %d after %d: not increasing", s, seq, j, g, prev)
				}
				prev = g
				if g >= n {
					break
				}
				if owner[g] >= 0 {
					t.Fatalf("%q: number %d owned by segments %d and %d", seq, g, owner[g], k)
				}
				owner[g] = k
			}
		}
		for g, k := range owner {
			if k < 0 {
				t.Fatalf("%q: number %d owned by no segment", seq, g)
			}
		}
		for _, bound := range []int{0, 1, 2, 3, 7, 10, 99, 100, 101, 997} {
			sum := 0
			for k, s := range segs {
				c := s.Count(bound)
				sum += c
				want := 0
				for _, o := range owner[:bound] {
					if o == k {
						want++
					}
				}
				if c != want {
					t.Fatalf("%q: segment %d Count(%d) = %d, owns %d", seq, k, bound, c, want)
				}
			}
			if sum != bound {
				t.Fatalf("%q: counts of %d add up to %d", seq, bound, sum)
			}
		}
		// Over many blocks each segment owns its share.
		for k, s := range segs {
			if got, want := float64(s.Count(100000))/100000, s.Share(); got < want-0.001 || got > want+0.001 {
				t.Errorf("%q: segment %d owns %.4f of the numbers, its share is %.4f", seq, k, got, want)
			}
		}
	}
}

func TestParseSegment(t *testing.T) {
	for _, tt := range []struct{ seg, seq, want, err string }{
		{seg: "", want: "0:1"},
		{seg: "0/1", want: "0:1"},
		{seg: "2/4", want: "1/2:3/4"},
		{seg: "1/4:1/2", want: "1/4:1/2"},
		{seg: "25%:0.5", want: "1/4:1/2"},
		{seg: "1/3", seq: "0,1/4,1/2,3/4,1", err: "has 4 segments, not 3"},
		{seg: "1/4", seq: "0,1/4,1/2,3/4,1", want: "1/4:1/2"},
		{seg: "1/4:3/4", seq: "0,1/4,1/2,3/4,1", err: "not a segment of the sequence"},
		{seg: "4/4", err: "0 ≤ INDEX < COUNT"},
		{seg: "-1/4", err: "0 ≤ INDEX < COUNT"},
		{seg: "x", err: "INDEX/COUNT"},
		{seg: "1/2:1/4", err: "0 ≤ from < to ≤ 1"},
		{seg: "0:1.5", err: "0 ≤ from < to ≤ 1"},
		{seg: "0/2", seq: "0,1/2", err: "start at 0 and end at 1"},
		{seg: "0/2", seq: "0,1/2,1/3,1", err: "points must increase"},
		{seq: "0,1", err: "segment_sequence needs segment"},
		{seg: "0/2", seq: "0,1/1048583,1", err: "too fine"},
	} {
		s, err := ParseSegment(tt.seg, tt.seq)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSegment(%q, %q) error %v, want one saying %q", tt.seg, tt.seq, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSegment(%q, %q): %v", tt.seg, tt.seq, err)
			continue
		}
		if got := s.String(); got != tt.want {
			t.Errorf("ParseSegment(%q, %q) = %s, want %s", tt.seg, tt.seq, got, tt.want)
		}
	}
}

// segmentFake answers tools/call a, b and c after a delay that depends on
// the tool and on the time since epoch (so each op's latency depends on
// when it is due): the truth the response-time histogram must hold.
type segmentFake struct {
	*mcptest.Server
	epoch  time.Time
	warmup time.Duration // calls before epoch + warmup are not measured
	mu     sync.Mutex
	truth  map[string]*hdr.Histogram // per tool, µs
}

func newSegmentFake(epoch time.Time) *segmentFake {
	f := &segmentFake{Server: mcptest.New(), epoch: epoch, warmup: segmentProfile().Warmup.D(), truth: map[string]*hdr.Histogram{}}
	base := map[string]time.Duration{"a": 2 * time.Millisecond, "b": 5 * time.Millisecond, "c": 11 * time.Millisecond}
	f.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		var p struct{ Name string }
		json.Unmarshal(r.Params, &p)
		since := time.Since(f.epoch)
		d := base[p.Name] + time.Duration(since.Milliseconds()%7)*time.Millisecond
		time.Sleep(d)
		if since < f.warmup {
			w.Result(r, map[string]any{"content": []any{}})
			return
		}
		f.mu.Lock()
		h := f.truth[p.Name]
		if h == nil {
			h = results.NewHistogram()
			f.truth[p.Name] = h
		}
		h.RecordValue(d.Microseconds())
		f.mu.Unlock()
		w.Result(r, map[string]any{"content": []any{}})
	})
	return f
}

func segmentProfile() *profile.Profile {
	return &profile.Profile{
		Name: "segments", URL: "http://fake/mcp", Rate: 300, VUs: 20, Duration: profile.Duration(3 * time.Second), Warmup: profile.Duration(500 * time.Millisecond),
		Ops: []profile.OpSpec{{Method: "tools/call", Tool: "a", Weight: weight(5)}, {Method: "tools/call", Tool: "b", Weight: weight(3)}, {Method: "tools/call", Tool: "c", Weight: weight(2)}},
	}
}

// runSegments runs the n segments of profile mk() concurrently, each
// writing its results directory under dir, all started at startAt.
func runSegments(t *testing.T, mk func() *profile.Profile, fake *segmentFake, n int, startAt time.Time, dir string) ([]*results.Summary, []string) {
	t.Helper()
	hc, stop := mcptest.ServePipe(fake)
	defer stop()
	sums, dirs := make([]*results.Summary, n), make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		seg, err := SegmentOf(i, n)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := Compile(mk(), hc)
		if err != nil {
			t.Fatal(err)
		}
		dirs[i] = filepath.Join(dir, fmt.Sprintf("segment-%d", i))
		rd, err := results.NewResultsDir(dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sum, err := Run(t.Context(), pl, Options{Segment: seg, StartAt: startAt, Sinks: []results.Sink{rd}})
			if err != nil {
				t.Error(err)
			}
			if err := rd.Err(); err != nil {
				t.Error(err)
			}
			sums[i] = sum
		})
	}
	wg.Wait()
	return sums, dirs
}

// The acceptance test of execution segments: a test split into 1, 2, 3
// and 7 segments (run concurrently, aligned by --start-at) makes the
// unsegmented run's schedule — the same op counts per op and per
// interval, the same target and achieved rate, and, merged from the
// segments' result files, the same response-time histograms, equal to
// the truth the server recorded.
func TestSegmentsMergeToTheWholeTest(t *testing.T) {
	testenv.Long(t)
	t.Parallel()
	for _, n := range []int{1, 2, 3, 7} {
		t.Run(fmt.Sprintf("%d segments", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				at := time.Now().Add(time.Second)
				fake := newSegmentFake(at)
				whole, wholeDir := runSegments(t, segmentProfile, fake, 1, at, filepath.Join(dir, "whole"))
				wholeTruth := fake.truth
				at2 := time.Now().Add(time.Second)
				fake2 := newSegmentFake(at2)
				parts, dirs := runSegments(t, segmentProfile, fake2, n, at2, filepath.Join(dir, "parts"))
				checkSegments(t, whole[0], wholeDir[0], wholeTruth, parts, dirs, fake2.truth)
			})
		})
	}
}

func checkSegments(t *testing.T, whole *results.Summary, wholeDir string, truth map[string]*hdr.Histogram, parts []*results.Summary, dirs []string, partsTruth map[string]*hdr.Histogram) {
	t.Helper()
	if whole.Dropped != 0 || whole.All.Errors != 0 || whole.All.Count != 300*3 {
		t.Fatalf("whole run: %d ops, %d dropped, %d errors: want 900 clean", whole.All.Count, whole.Dropped, whole.All.Errors)
	}
	var count, dropped int64
	var target float64
	for _, p := range parts {
		count, dropped, target = count+p.All.Count, dropped+p.Dropped, target+p.TargetRate
	}
	if count != whole.All.Count || dropped != 0 {
		t.Fatalf("segments ran %d ops (%d dropped), the whole test %d", count, dropped, whole.All.Count)
	}
	m, err := results.MergeResults(dirs)
	if err != nil {
		t.Fatal(err)
	}
	ms := m.Summary
	type row struct {
		Name              string
		Count, Errors     int64
		Rate              float64
		Response, Service results.Latency
	}
	rows := func(s *results.Summary) []row {
		var out []row
		for _, o := range append(s.Ops, s.All) {
			out = append(out, row{o.Name, o.Count, o.Errors, o.Rate, o.Response, o.Service})
		}
		return out
	}
	if d := cmp.Diff(rows(whole), rows(ms)); d != "" {
		t.Errorf("merged segments differ from the whole test (-whole +merged):\n%s", d)
	}
	if whole.TargetRate != ms.TargetRate || whole.Rate != ms.Rate || whole.DurationS != ms.DurationS {
		t.Errorf("target rate %v rate %v over %v s; merged %v, %v over %v s", whole.TargetRate, whole.Rate, whole.DurationS, ms.TargetRate, ms.Rate, ms.DurationS)
	}
	if len(ms.Segments) != len(parts) {
		t.Errorf("merged summary keeps %d segments, want %d", len(ms.Segments), len(parts))
	}
	// The histograms: merged from the files, equal to the truth (every
	// sample the server saw) and to the whole run's.
	for tool, h := range partsTruth {
		got := m.Totals["op:tools/call:"+tool+".response"]
		if got == nil || !sameDistribution(got, h) || !sameDistribution(got, truth[tool]) {
			t.Errorf("op %s: merged response-time histogram differs from the samples the server recorded", tool)
		}
		for _, q := range []float64{50, 90, 99, 99.9, 100} {
			if g, w := got.ValueAtQuantile(q), h.ValueAtQuantile(q); g != w {
				t.Errorf("op %s: merged p%v %d µs, all samples' %d µs", tool, q, g, w)
			}
		}
	}
	// Interval by interval: the same counts and target rates.
	wr, err := results.ReadResults(wholeDir)
	if err != nil {
		t.Fatal(err)
	}
	mdir := filepath.Join(filepath.Dir(dirs[0]), "merged")
	if err := m.Write(mdir); err != nil {
		t.Fatal(err)
	}
	mr, err := results.ReadResults(mdir)
	if err != nil {
		t.Fatal(err)
	}
	type ivRow struct {
		T                float64
		Count            int64
		TargetRate, Rate float64
		Phase            results.Phase
		P99              float64
	}
	ivs := func(r *results.Results) []ivRow {
		var out []ivRow
		for _, iv := range r.Intervals {
			out = append(out, ivRow{iv.T, iv.All.Count, iv.TargetRate, iv.Rate, iv.Phase, iv.All.P99})
		}
		return out
	}
	if d := cmp.Diff(ivs(wr), ivs(mr)); d != "" {
		t.Errorf("merged intervals differ from the whole test's (-whole +merged):\n%s", d)
	}
}

// sameDistribution compares two histograms value by value.
func sameDistribution(a, b *hdr.Histogram) bool {
	if a == nil || b == nil || a.TotalCount() != b.TotalCount() {
		return false
	}
	var av, bv []hdr.Bar
	for _, x := range a.Distribution() {
		if x.Count > 0 {
			av = append(av, x)
		}
	}
	for _, x := range b.Distribution() {
		if x.Count > 0 {
			bv = append(bv, x)
		}
	}
	return cmp.Equal(av, bv)
}

// The closed model: VUs, their random streams (op choice, session
// lifetimes under churn) and their fault schedules are striped by global
// VU number, so the segments together run exactly the whole test's ops,
// churn and injected faults.
func TestClosedSegmentsAddUp(t *testing.T) {
	testenv.Long(t)
	t.Parallel()
	mk := func() *profile.Profile {
		return &profile.Profile{
			Name: "closed", URL: "http://fake/mcp", VUs: 10, Duration: profile.Duration(2 * time.Second), ThinkTime: profile.Duration(3 * time.Millisecond),
			Churn: profile.Churn{Rate: 4}, Chaos: &chaos.Plan{Faults: []chaos.Fault{{Action: chaos.ActionDelay, Delay: profile.Duration(4 * time.Millisecond), Probability: 0.3}}},
			Ops: []profile.OpSpec{{Method: "tools/call", Tool: "a", Weight: weight(1)}, {Method: "tools/call", Tool: "b", Weight: weight(1)}, {Method: "tools/call", Tool: "c", Weight: weight(2)}},
		}
	}
	for _, n := range []int{2, 3, 7} {
		t.Run(fmt.Sprintf("%d segments", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				at := time.Now().Add(time.Second)
				whole, _ := runSegments(t, mk, newSegmentFake(at), 1, at, filepath.Join(dir, "whole"))
				at2 := time.Now().Add(time.Second)
				parts, _ := runSegments(t, mk, newSegmentFake(at2), n, at2, filepath.Join(dir, "parts"))
				type tally struct {
					Ops                     map[string]int64
					VUs                     int
					Opened, Churned, Delays int64
				}
				of := func(ss ...*results.Summary) tally {
					x := tally{Ops: map[string]int64{}}
					for _, s := range ss {
						for _, o := range s.Ops {
							x.Ops[o.Name] += o.Count
						}
						x.VUs += s.VUs
						x.Opened += s.Sessions.Opened
						x.Churned += s.Sessions.Churned
						x.Delays += s.Chaos.Delays
					}
					return x
				}
				w := of(whole...)
				if w.Churned == 0 || w.Delays == 0 || w.VUs != 10 {
					t.Fatalf("whole test: %+v: want churn, delays and 10 VUs", w)
				}
				if d := cmp.Diff(w, of(parts...)); d != "" {
					t.Errorf("segments differ from the whole test (-whole +segments):\n%s", d)
				}
			})
		})
	}
}

// BenchmarkClaim is the open model's per-op scheduling (vu.go claim):
// the whole test and a segment, whose slots go through Segment.Slot.
func BenchmarkClaim(b *testing.B) {
	for _, spec := range []string{"", "3/7", "1/4:1/2"} {
		name := "whole"
		if spec != "" {
			name = "segment " + spec
		}
		b.Run(name, func(b *testing.B) {
			seg, err := ParseSegment(spec, "")
			if err != nil {
				b.Fatal(err)
			}
			p := segmentProfile()
			p.Duration, p.Rate = profile.Duration(time.Hour), 1e9 // never ends within the benchmark
			pl, err := Compile(p, nil)
			if err != nil {
				b.Fatal(err)
			}
			e := newEngine(pl, Options{Segment: seg})
			e.start = time.Now()
			e.sched = e.segmentSchedule(pl.Schedule)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, stop := e.claim(); stop {
					b.Fatal("the schedule ended")
				}
			}
		})
	}
}

// {{seq}} and a data file read in sequential order are run-wide counters:
// the segments take disjoint shares of them, together exactly the whole
// test's (each request's number, and the row that goes with it).
func TestSegmentsShareArgumentCounters(t *testing.T) {
	csvFile := filepath.Join(t.TempDir(), "users.csv")
	if err := os.WriteFile(csvFile, []byte("name\nann\nbob\ncid\ndee\neve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk := func() *profile.Profile {
		return &profile.Profile{Name: "args", URL: "http://fake/mcp", Rate: 100, VUs: 4, Duration: profile.Duration(2 * time.Second),
			Ops: []profile.OpSpec{{Method: "tools/call", Tool: "echo", Weight: weight(1), Data: &argtmpl.DataSpec{File: csvFile},
				Arguments: map[string]any{"n": "{{seq}}", "user": "{{.name}}"}}}}
	}
	sent := func(n int) []string {
		var mu sync.Mutex
		var got []string
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			var p struct{ Arguments map[string]any }
			json.Unmarshal(r.Params, &p)
			mu.Lock()
			got = append(got, fmt.Sprint(p.Arguments["n"], " ", p.Arguments["user"]))
			mu.Unlock()
			w.Result(r, map[string]any{"content": []any{}})
		})
		synctest.Test(t, func(t *testing.T) {
			runSegments(t, mk, &segmentFake{Server: fake}, n, time.Now().Add(time.Second), t.TempDir())
		})
		slices.Sort(got)
		return got
	}
	whole := sent(1)
	if len(whole) != 200 || whole[0] != "1 ann" || !slices.Contains(whole, "8 cid") {
		t.Fatalf("the whole test sent %d requests: %v…", len(whole), whole[:min(5, len(whole))])
	}
	for _, n := range []int{2, 3} {
		if d := cmp.Diff(whole, sent(n)); d != "" {
			t.Errorf("%d segments: (number, row) pairs differ from the whole test's (-whole +segments):\n%s", n, d)
		}
	}
}

// --start-at: the clock starts at it when the set-up ends before (no
// note), and still at it when the set-up ends after (noted: its ops are
// late, and their lateness is in response time).
func TestStartAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			w.Result(r, map[string]any{"content": []any{}})
		})
		hc, stop := mcptest.ServePipe(fake)
		defer stop()
		for _, ahead := range []time.Duration{3 * time.Second, -200 * time.Millisecond} {
			p := echoProfile()
			p.Rate, p.VUs, p.Duration = 10, 2, profile.Duration(time.Second)
			pl, err := Compile(p, hc)
			if err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(ahead)
			sum, err := Run(t.Context(), pl, Options{StartAt: at})
			if err != nil {
				t.Fatal(err)
			}
			late := strings.Contains(strings.Join(sum.Notes, "\n"), "the set-up ended 200ms after it")
			if !sum.Started.Equal(at) || sum.All.Count != 10 || late != (ahead < 0) {
				t.Errorf("start-at %v from now: started %v (want %v), %d ops, notes %q", ahead, sum.Started, at, sum.All.Count, sum.Notes)
			}
			if ahead < 0 && sum.All.Response.Max < 200 {
				t.Errorf("ops due during the late set-up: response time max %v ms, want ≥ 200", sum.All.Response.Max)
			}
		}
	})
}
