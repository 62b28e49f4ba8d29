package live

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/results"
	"google.golang.org/protobuf/encoding/protowire"
)

// rwSample is one decoded sample: the series as name{l="v",…} with the
// labels sorted, its value and timestamp.
type rwSample struct {
	series string
	value  float64
	ts     int64
}

// decodeWriteRequest decodes a remote-write 1.0 WriteRequest field by
// field (independently of the encoder), failing the test on anything
// malformed or unsorted.
func decodeWriteRequest(t *testing.T, b []byte) []rwSample {
	t.Helper()
	var out []rwSample
	fields := func(b []byte, f func(num protowire.Number, typ protowire.Type, b []byte) int) {
		for len(b) > 0 {
			num, typ, n := protowire.ConsumeTag(b)
			if n < 0 {
				t.Fatalf("bad tag: %v", protowire.ParseError(n))
			}
			b = b[n:]
			m := f(num, typ, b)
			if m < 0 {
				t.Fatalf("field %d: %v", num, protowire.ParseError(m))
			}
			b = b[m:]
		}
	}
	bytesField := func(typ protowire.Type, b []byte) ([]byte, int) {
		if typ != protowire.BytesType {
			t.Fatalf("wire type %d, want bytes", typ)
		}
		return protowire.ConsumeBytes(b)
	}
	fields(b, func(num protowire.Number, typ protowire.Type, b []byte) int {
		if num != 1 {
			t.Fatalf("WriteRequest field %d, want only timeseries (1)", num)
		}
		tsb, n := bytesField(typ, b)
		var names, labels []string
		var samples []rwSample
		fields(tsb, func(num protowire.Number, typ protowire.Type, b []byte) int {
			mb, n := bytesField(typ, b)
			switch num {
			case 1:
				var name, value string
				fields(mb, func(num protowire.Number, typ protowire.Type, b []byte) int {
					s, n := bytesField(typ, b)
					if num == 1 {
						name = string(s)
					} else {
						value = string(s)
					}
					return n
				})
				names = append(names, name)
				labels = append(labels, fmt.Sprintf("%s=%q", name, value))
			case 2:
				var s rwSample
				fields(mb, func(num protowire.Number, typ protowire.Type, b []byte) int {
					switch num {
					case 1:
						v, n := protowire.ConsumeFixed64(b)
						s.value = math.Float64frombits(v)
						return n
					case 2:
						v, n := protowire.ConsumeVarint(b)
						s.ts = int64(v)
						return n
					}
					t.Fatalf("Sample field %d", num)
					return -1
				})
				samples = append(samples, s)
			default:
				t.Fatalf("TimeSeries field %d", num)
			}
			return n
		})
		if !slices.IsSorted(names) {
			t.Errorf("labels not sorted by name: %v", names)
		}
		var metric string
		var rest []string
		for i, l := range labels {
			if names[i] == "__name__" {
				metric = strings.Trim(strings.TrimPrefix(l, "__name__="), `"`)
			} else {
				rest = append(rest, l)
			}
		}
		for _, s := range samples {
			s.series = metric + "{" + strings.Join(rest, ",") + "}"
			out = append(out, s)
		}
		return n
	})
	return out
}

// receiver is an httptest remote-write receiver: it checks the headers,
// decodes each request and answers with status(k) for the k-th request
// (0-based); hang, when set, holds every handler until it is closed.
type receiver struct {
	t      *testing.T
	status func(k int) int
	hang   chan struct{}
	got    chan int // each request's number, as it arrives

	mu       sync.Mutex
	requests int
	accepted [][]rwSample
	auth     []string
}

func newReceiver(t *testing.T, status func(k int) int) (*receiver, *httptest.Server) {
	r := &receiver{t: t, status: status, got: make(chan int, 1000)}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rc.mu.Lock()
	k := rc.requests
	rc.requests++
	rc.auth = append(rc.auth, req.Header.Get("Authorization"))
	rc.mu.Unlock()
	rc.got <- k
	if rc.hang != nil {
		select {
		case <-rc.hang:
		case <-req.Context().Done():
		}
		return
	}
	for h, want := range map[string]string{"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
		"X-Prometheus-Remote-Write-Version": "0.1.0"} {
		if got := req.Header.Get(h); got != want {
			rc.t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	body, _ := io.ReadAll(req.Body)
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		rc.t.Errorf("snappy: %v", err)
	}
	st := http.StatusNoContent
	if rc.status != nil {
		st = rc.status(k)
	}
	if st/100 == 2 {
		s := decodeWriteRequest(rc.t, raw)
		rc.mu.Lock()
		rc.accepted = append(rc.accepted, s)
		rc.mu.Unlock()
	}
	w.WriteHeader(st)
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.requests
}

// fakeInterval is an interval of op "tools/call:echo": count ops, errs
// of them failed with a timeout, response times resp (µs), service
// times half those.
func fakeInterval(count, errs int64, resp ...int64) *results.IntervalRecord {
	st := &results.OpStats{Response: results.NewHist(), Service: results.NewHist(), TTFB: results.NewHist()}
	for _, v := range resp {
		st.Response.RecordValue(v)
		st.Service.RecordValue(v / 2)
	}
	ro := results.RowOp{Count: count, Errors: errs, Dropped: 1}
	ro.Classes[driver.ClassTimeout] = errs
	now := time.Now()
	return &results.IntervalRecord{Names: []string{"tools/call:echo"}, Phase: results.PhaseMeasure, VUs: 4, Sessions: 2,
		Interval: results.Interval{Start: now, End: now.Add(time.Second), Ops: []*results.OpStats{st}, All: st},
		Row:      results.Row{Start: now, End: now.Add(time.Second), Ops: []results.RowOp{ro}, All: ro}}
}

func fastConfig(url string) RemoteWriteConfig {
	return RemoteWriteConfig{URL: url, Labels: map[string]string{"job": "mcpbench", "instance": "test"},
		MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}
}

// A fake run of two intervals: the receiver gets, per push, exactly the
// series the Prometheus endpoint serves (its names and labels, the
// run's labels added), counters cumulative, the duration histograms
// classic (_bucket{le} cumulative, _sum, _count), timestamps rising.
//
// Shared: the snapshots come from a Prometheus sink fed ahead of it (as
// with --prometheus on too), counted once.
func TestRemoteWriteSeries(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) { testRemoteWriteSeries(t, shared) })
	}
}

func testRemoteWriteSeries(t *testing.T, shared bool) {
	rc, srv := newReceiver(t, nil)
	cfg := fastConfig(srv.URL + "/api/v1/write")
	var sinks []results.Sink
	if shared {
		cfg.Source = NewPrometheus()
		sinks = append(sinks, cfg.Source)
	}
	rw, err := NewRemoteWrite(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sinks = append(sinks, rw)
	for _, s := range sinks {
		s.Start(&results.RunInfo{Profile: "p", Target: "http://u:secret@x/mcp", Ops: []string{"tools/call:echo"}, Started: time.Now()})
	}
	ivs := []*results.IntervalRecord{fakeInterval(3, 1, 400, 1000, 2000), fakeInterval(2, 0, 1000, 1000)}
	ivs[1].Row.End = ivs[0].Row.End.Add(time.Second)
	for _, iv := range ivs {
		for _, s := range sinks {
			s.Interval(iv)
		}
	}
	for _, s := range sinks {
		s.End(&results.RunEnd{Summary: &results.Summary{}})
	}
	st := rw.Close(10 * time.Second)
	if st.Sent != 4 || st.Dropped+st.Failed+st.Unsent != 0 {
		t.Fatalf("stats %+v: want 4 sent, nothing lost", st)
	}
	if len(rc.accepted) != 4 {
		t.Fatalf("%d requests accepted, want 4", len(rc.accepted))
	}
	const ls = `instance="test",job="mcpbench",op="tools/call:echo"`
	bucket := func(le string) string { return `instance="test",job="mcpbench",le="` + le + `",op="tools/call:echo"}` }
	want := map[string]float64{
		"mcpbench_ops_total{" + ls + "}":                                                                                5,
		"mcpbench_ops_dropped_total{" + ls + "}":                                                                        2,
		"mcpbench_op_errors_total{class=\"timeout\"," + ls + "}":                                                        1,
		"mcpbench_op_errors_total{class=\"transport\"," + ls + "}":                                                      0,
		"mcpbench_op_duration_seconds_bucket{" + bucket(`0.0005`):                                                       1,
		"mcpbench_op_duration_seconds_bucket{" + bucket(`0.001`):                                                        4,
		"mcpbench_op_duration_seconds_bucket{" + bucket(`0.0025`):                                                       5,
		"mcpbench_op_duration_seconds_bucket{" + bucket(`60`):                                                           5,
		"mcpbench_op_duration_seconds_bucket{" + bucket(`+Inf`):                                                         5,
		"mcpbench_op_duration_seconds_count{" + ls + "}":                                                                5,
		"mcpbench_op_duration_seconds_sum{" + ls + "}":                                                                  0.0054,
		"mcpbench_op_service_duration_seconds_bucket{" + bucket(`0.0005`):                                               4,
		"mcpbench_op_service_duration_seconds_count{" + ls + "}":                                                        5,
		`mcpbench_vus{instance="test",job="mcpbench"}`:                                                                  4,
		`mcpbench_run_phase{instance="test",job="mcpbench",phase="done"}`:                                               1,
		`mcpbench_run_phase{instance="test",job="mcpbench",phase="measure"}`:                                            0,
		`mcpbench_run_info{instance="test",job="mcpbench",profile="p",protocol="-",target="http://u:[redacted]@x/mcp"}`: 1,
	}
	last := map[string]float64{}
	var prevTS int64
	for i, req := range rc.accepted {
		ts := req[0].ts
		if ts <= prevTS {
			t.Errorf("push %d at %d ms, not after the previous (%d)", i, ts, prevTS)
		}
		prevTS = ts
		for _, s := range req {
			if s.ts != ts {
				t.Errorf("push %d: %s at %d, others at %d", i, s.series, s.ts, ts)
			}
			last[s.series] = s.value
		}
		if i == 1 || i == 2 { // an interval's push: stamped with its end, which its counts run to
			if want := ivs[i-1].Row.End.UnixMilli(); ts != want {
				t.Errorf("interval %d pushed at %d ms, want its end %d", i-1, ts, want)
			}
		}
		if i == 0 && last["mcpbench_ops_total{"+ls+"}"] != 0 {
			t.Errorf("the start push has ops_total %v, want 0", last["mcpbench_ops_total{"+ls+"}"])
		}
		if i == 1 && last["mcpbench_ops_total{"+ls+"}"] != 3 {
			t.Errorf("the first interval's push has ops_total %v, want 3", last["mcpbench_ops_total{"+ls+"}"])
		}
	}
	for series, v := range want {
		got, ok := last[series]
		switch {
		case !ok:
			t.Errorf("%s missing; got %d series", series, len(last))
		case math.Abs(got-v) > 1e-12:
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	for series := range last {
		if strings.Contains(series, "secret") {
			t.Errorf("a credential reached the receiver: %s", series)
		}
		if !strings.HasPrefix(series, "mcpbench_") || !strings.Contains(series, `job="mcpbench"`) {
			t.Errorf("series %s: want a mcpbench_ name and the run's labels", series)
		}
	}
}

// 500 twice, then 204: the push is retried and lands once; the token is
// sent on every try.
func TestRemoteWriteRetries5xx(t *testing.T) {
	rc, srv := newReceiver(t, func(k int) int {
		if k < 2 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	cfg := fastConfig(srv.URL)
	cfg.Token = "tok"
	rw, err := NewRemoteWrite(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rw.Interval(fakeInterval(1, 0, 1000))
	st := rw.Close(10 * time.Second)
	if st.Sent != 1 || st.Retries != 2 || st.Failed != 0 || rc.count() != 3 {
		t.Fatalf("stats %+v after %d requests: want 3 requests, 2 retries, 1 sent", st, rc.count())
	}
	for _, a := range rc.auth {
		if a != "Bearer tok" {
			t.Errorf("Authorization %q, want the bearer token", a)
		}
	}
}

// 400 is not retried: one request, the push counted failed with the
// receiver's message; 429 is retried.
func TestRemoteWrite4xx(t *testing.T) {
	for _, c := range []struct {
		status, requests int
		failed           int64
	}{{http.StatusBadRequest, 1, 1}, {http.StatusTooManyRequests, 3, 1}} {
		rc, srv := newReceiver(t, func(int) int { return c.status })
		cfg := fastConfig(srv.URL)
		cfg.MaxRetries = 2
		rw, err := NewRemoteWrite(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rw.Interval(fakeInterval(1, 0, 1000))
		st := rw.Close(10 * time.Second)
		if rc.count() != c.requests || st.Failed != c.failed || st.Sent != 0 || !strings.Contains(st.LastErr, fmt.Sprint("HTTP ", c.status)) {
			t.Errorf("HTTP %d: %d requests, stats %+v; want %d requests, %d failed", c.status, rc.count(), st, c.requests, c.failed)
		}
	}
}

// A receiver that hangs: Interval keeps returning, the queue keeps the
// newest snapshots and counts the oldest dropped, and Close gives up at
// its deadline with the rest counted unsent.
func TestRemoteWriteHangingReceiver(t *testing.T) {
	rc, srv := newReceiver(t, nil)
	rc.hang = make(chan struct{})
	defer close(rc.hang)
	cfg := fastConfig(srv.URL)
	cfg.Queue = 4
	rw, err := NewRemoteWrite(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rw.Interval(fakeInterval(1, 0, 1000))
	select { // the sender holds the first snapshot, in a request that hangs
	case <-rc.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no request within 10 s")
	}
	const n = 50
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			rw.Interval(fakeInterval(1, 0, 1000))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Interval blocked behind a hanging receiver")
	}
	if st := rw.Stats(); st.Dropped != n-int64(cfg.Queue) {
		t.Errorf("dropped %d, want %d (%d queued of %d)", st.Dropped, n-cfg.Queue, cfg.Queue, n)
	}
	start := time.Now()
	st := rw.Close(50 * time.Millisecond)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v with a 50 ms flush deadline", d)
	}
	if st.Unsent != int64(cfg.Queue)+1 || st.Sent != 0 || st.Failed != 0 {
		t.Errorf("stats %+v: want %d unsent (the queue and the one in flight)", st, cfg.Queue+1)
	}
	rw.Interval(fakeInterval(1, 0, 1000)) // after Close: ignored, never blocks
}

// Bad URLs are refused with what to do; credentials in the URL are
// refused without being printed.
func TestRemoteWriteBadURL(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"127.0.0.1:9090/api/v1/write", "http:// or https://"},
		{"ftp://x/api/v1/write", "http:// or https://"},
		{"http:///api/v1/write", "no host"},
		{"http://u:hunter2@x/api/v1/write", EnvRemoteWriteToken},
	} {
		_, err := NewRemoteWrite(RemoteWriteConfig{URL: c.url})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "live.RemoteWriteConfig.URL") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error %v, want one naming live.RemoteWriteConfig.URL and saying %q, no password", c.url, err, c.want)
		}
	}
	env := map[string]string{EnvRemoteWriteToken: "t", EnvRemoteWriteUser: "u"}
	var cfg RemoteWriteConfig
	err := RemoteWriteAuthFromEnv(&cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err == nil || strings.Contains(err.Error(), "=t") {
		t.Errorf("token and user both set: error %v, want one naming both variables", err)
	}
}

// The engine's side of a push (the counters updated, a snapshot taken
// and queued) and the sender's (the WriteRequest encoded and
// compressed), per interval of one op: divided by the ops of an
// interval, what remote write costs each op.
func BenchmarkRemoteWrite(b *testing.B) {
	rec := fakeInterval(2000, 3, 400, 1000, 2000, 5000, 40000, 700000)
	b.Run("Interval", func(b *testing.B) {
		rw, err := NewRemoteWrite(RemoteWriteConfig{URL: "http://127.0.0.1:1/", Queue: 1, MaxRetries: -1})
		if err != nil {
			b.Fatal(err)
		}
		rw.mu.Lock()
		rw.closed = true // queue nothing: measure the snapshot alone
		rw.mu.Unlock()
		b.ReportAllocs()
		for b.Loop() {
			rw.Interval(rec)
		}
		rw.Close(time.Second)
	})
	b.Run("encode+snappy", func(b *testing.B) {
		rw, err := NewRemoteWrite(RemoteWriteConfig{URL: "http://127.0.0.1:1/", Labels: map[string]string{"job": "mcpbench", "instance": "h"}})
		if err != nil {
			b.Fatal(err)
		}
		defer rw.Close(time.Second)
		rw.prom.Interval(rec)
		s := rw.snapshot()
		b.ReportAllocs()
		var n int
		for b.Loop() {
			n = len(snappy.Encode(nil, encodeWriteRequest(nil, s)))
		}
		b.ReportMetric(float64(n), "bytes/push")
		b.ReportMetric(float64(len(s.series)), "series")
	})
}
