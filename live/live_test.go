package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func weight(n int) *int { return &n }

// planted counts what the faulty fake did.
type planted struct{ rpcErrors, status500, duplicated, ok atomic.Int64 }

// faultyFake answers tools/call in turn: every 3rd with a JSON-RPC error,
// else every 5th with HTTP 500, else every 4th over SSE with a progress
// notification sent twice (a duplicate the replay ledger must catch),
// else a plain result, each after 5 ms. It counts each.
func faultyFake(p *planted) *mcptest.Server {
	var n atomic.Int64
	fake := mcptest.New()
	fake.Handle(mcptest.K("POST", mcptest.Any, "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
		time.Sleep(5 * time.Millisecond) // synctest's clock: 200 calls/s per VU
		k := n.Add(1)
		switch {
		case k%3 == 0:
			p.rpcErrors.Add(1)
			w.JSON(200, mcptest.ErrorResponse(r.ID, -32603, "planted"))
		case k%5 == 0:
			p.status500.Add(1)
			w.JSON(500, map[string]any{"error": "planted"})
		case k%4 == 0:
			p.duplicated.Add(1)
			tok := r.ProgressToken()
			w.Events(mcptest.Event{ID: "1", Data: mcptest.Progress(tok, 1, 2)}, mcptest.Event{ID: "2", Data: mcptest.Progress(tok, 1, 2)},
				mcptest.Event{ID: "3", Data: mcptest.Response(r.ID, map[string]any{"content": []any{}})})
		default:
			p.ok.Add(1)
			w.Result(r, map[string]any{"content": []any{}})
		}
	})
	return fake
}

// gather returns the sum of a metric's samples whose labels include
// those given (name=value pairs).
func gather(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.Metric {
			for i := 0; i+1 < len(labels); i += 2 {
				if labelValue(m, labels[i]) != labels[i+1] {
					continue metric
				}
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// jsonlTotals adds up the interval lines' counts: ops, errors by class,
// and faulty streams of the "all" column.
func jsonlTotals(t *testing.T, b []byte) (count, faulty int64, byClass map[string]int64, types []string, inFlight []float64) {
	t.Helper()
	byClass = map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var head struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		types = append(types, head.Type)
		if head.Type != "interval" {
			continue
		}
		var l IntervalLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		count += l.All.Count
		faulty += l.All.Faulty
		if l.Phase == results.PhaseMeasure {
			inFlight = append(inFlight, l.InFlight)
		}
		for c, n := range l.ErrorsByClass {
			byClass[c] += n
		}
	}
	return count, faulty, byClass, types, inFlight
}

// A server that fails calls in planted ways: Prometheus and the JSON
// lines count exactly what the server did and what the summary says —
// JSON-RPC errors, HTTP 500s, duplicated progress — and every op.
func TestLiveCountsPlantedFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl planted
		hc, stop := mcptest.ServePipe(faultyFake(&pl))
		defer stop()
		p := &profile.Profile{Name: "faults", URL: "http://fake/mcp", VUs: 2, Duration: profile.Duration(4 * time.Second),
			Ops: []profile.OpSpec{{Method: "tools/call", Tool: "echo", Progress: true, Weight: weight(1)}}}
		plan, err := workload.Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		prom := NewPrometheus()
		reg := prometheus.NewRegistry()
		reg.MustRegister(prom)
		var buf bytes.Buffer
		js := NewJSONL(&buf)
		sum, err := workload.Run(t.Context(), plan, workload.Options{Sinks: []results.Sink{prom, js}})
		if err != nil {
			t.Fatal(err)
		}
		js.Close()
		op := plan.Names[0]
		total := pl.rpcErrors.Load() + pl.status500.Load() + pl.duplicated.Load() + pl.ok.Load()
		if total < 100 || sum.All.Count != total || sum.All.ErrorsByClass["jsonrpc-error"] != pl.rpcErrors.Load() ||
			sum.All.ErrorsByClass["http-status"] != pl.status500.Load() || sum.All.Ledger.Verdicts["duplicated"] != pl.duplicated.Load() {
			t.Fatalf("summary %d ops, errors %v, verdicts %v; planted %d ops: %d JSON-RPC errors, %d HTTP 500, %d duplicated",
				sum.All.Count, sum.All.ErrorsByClass, sum.All.Ledger.Verdicts, total, pl.rpcErrors.Load(), pl.status500.Load(), pl.duplicated.Load())
		}
		checks := []struct {
			name string
			got  float64
			want int64
		}{
			{"ops_total", gather(t, reg, "mcpbench_ops_total", "op", op), total},
			{"op_errors_total jsonrpc-error", gather(t, reg, "mcpbench_op_errors_total", "class", "jsonrpc-error"), pl.rpcErrors.Load()},
			{"op_errors_total http-status", gather(t, reg, "mcpbench_op_errors_total", "class", "http-status"), pl.status500.Load()},
			{"op_errors_total", gather(t, reg, "mcpbench_op_errors_total"), pl.rpcErrors.Load() + pl.status500.Load()},
			{"ledger_verdicts_total duplicated", gather(t, reg, "mcpbench_ledger_verdicts_total", "verdict", "duplicated"), pl.duplicated.Load()},
			{"ledger_faulty_streams_total", gather(t, reg, "mcpbench_ledger_faulty_streams_total"), pl.duplicated.Load()},
			{"ledger_streams_total", gather(t, reg, "mcpbench_ledger_streams_total", "op", op), sum.All.Ledger.Streams},
			{"op_duration_seconds count", gather(t, reg, "mcpbench_op_duration_seconds", "op", op), total},
			{"run_phase done", gather(t, reg, "mcpbench_run_phase", "phase", "done"), 1},
		}
		for _, c := range checks {
			if c.got != float64(c.want) {
				t.Errorf("%s = %v, want %d", c.name, c.got, c.want)
			}
		}
		count, faulty, byClass, types, inFlight := jsonlTotals(t, buf.Bytes())
		// 2 VUs, each call 5 ms, back to back: 2 in flight all the time.
		for _, f := range inFlight {
			if f < 1.95 || f > 2.05 {
				t.Errorf("in flight %v in a measured interval, want 2 (%v)", f, inFlight)
			}
		}
		if count != total || faulty != pl.duplicated.Load() || byClass["jsonrpc-error"] != pl.rpcErrors.Load() || byClass["http-status"] != pl.status500.Load() {
			t.Errorf("JSON lines: %d ops, %d faulty, errors %v", count, faulty, byClass)
		}
		if types[0] != "start" || types[len(types)-1] != "end" || js.Dropped() != 0 || js.Err() != nil {
			t.Errorf("JSON lines %v, dropped %d, err %v", types, js.Dropped(), js.Err())
		}
	})
}

// Against the reference server (official Go SDK) over loopback, with a
// GET stream per session carrying numbered notifications: every op
// counted, every stream judged, nothing faulty, no error, in Prometheus
// as in the summary.
func TestLiveReferenceServerClean(t *testing.T) {
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{TickInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p := &profile.Profile{Name: "clean", URL: srv.URL(), VUs: 4, Duration: profile.Duration(2 * time.Second), GETStream: true,
		Ops: []profile.OpSpec{
			{Method: "tools/call", Tool: "echo", Arguments: map[string]any{"text": "hi"}, Weight: weight(3)},
			{Method: "tools/call", Tool: "progress", Arguments: map[string]any{"count": 3, "interval_ms": 1}, Progress: true, Weight: weight(1)},
		}}
	plan, err := workload.Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	prom := NewPrometheus()
	reg := prometheus.NewRegistry()
	reg.MustRegister(prom)
	var buf bytes.Buffer
	js := NewJSONL(&buf)
	sum, err := workload.Run(t.Context(), plan, workload.Options{Sinks: []results.Sink{prom, js}})
	if err != nil {
		t.Fatal(err)
	}
	js.Close()
	if sum.All.Count < 50 || sum.All.Errors != 0 {
		t.Fatalf("summary: %d ops, %d errors", sum.All.Count, sum.All.Errors)
	}
	for _, o := range sum.Ops {
		if got := gather(t, reg, "mcpbench_ops_total", "op", o.Name); got != float64(o.Count) {
			t.Errorf("%s: ops_total %v, summary %d", o.Name, got, o.Count)
		}
		if got := gather(t, reg, "mcpbench_op_duration_seconds", "op", o.Name); got != float64(o.Count) {
			t.Errorf("%s: duration histogram count %v, summary %d", o.Name, got, o.Count)
		}
	}
	for _, name := range []string{"mcpbench_op_errors_total", "mcpbench_ledger_faulty_streams_total", "mcpbench_ledger_verdicts_total", "mcpbench_ops_dropped_total"} {
		if got := gather(t, reg, name); got != 0 {
			t.Errorf("%s = %v, want 0", name, got)
		}
	}
	if g := sum.GETStreams; g == nil || g.Ledger == nil || gather(t, reg, "mcpbench_ledger_streams_total", "op", GETStreamsOp) != float64(g.Ledger.Streams) {
		t.Errorf("GET streams judged: %v, summary %+v", gather(t, reg, "mcpbench_ledger_streams_total", "op", GETStreamsOp), g)
	}
	if count, faulty, byClass, _, _ := jsonlTotals(t, buf.Bytes()); count != sum.All.Count || faulty != 0 || len(byClass) != 0 {
		t.Errorf("JSON lines: %d ops (summary %d), %d faulty, errors %v", count, sum.All.Count, faulty, byClass)
	}
}

// A JSON-lines destination that never reads does not hold the run up:
// every call returns, the lines that do not fit are dropped and counted,
// and End gives up after its bound.
func TestJSONLNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		js := NewJSONL(pw)
		defer func() {
			pr.Close() // the writer goroutine ends
			<-js.done
		}()
		rec := &results.IntervalRecord{Names: []string{"a"}, Row: results.Row{Start: time.Now(), End: time.Now().Add(time.Second), Ops: []results.RowOp{{Count: 1}}}}
		js.Start(&results.RunInfo{Ops: []string{"a"}})
		for range 1000 {
			js.Interval(rec)
		}
		js.End(&results.RunEnd{Summary: &results.Summary{}})
		js.Close()
		js.Interval(rec) // after Close: ignored, no panic
		// The writer took a line or a few (one bufio buffer) before it
		// blocked; the queue holds JSONLQueue; the rest are dropped.
		if d := js.Dropped(); d < 1000-JSONLQueue-64 {
			t.Fatalf("dropped %d lines, want at least %d", d, 1000-JSONLQueue-64)
		}
	})
}

// The native buckets of the duration histograms are the HdrHistogram's
// values at schema 3, and the classic ones cumulative.
func TestCumHist(t *testing.T) {
	h := results.NewHist()
	for _, us := range []int64{300, 900, 1000, 4000, 70_000_000} {
		h.RecordValue(us)
	}
	c := newCumHist()
	c.add(h)
	m, err := c.metric(descs.duration, time.Time{}, "op")
	if err != nil {
		t.Fatal(err)
	}
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	hist := d.Histogram
	var cum []uint64
	for _, b := range hist.Bucket {
		cum = append(cum, b.GetCumulativeCount())
	}
	// ≤0.5 ms: 1; ≤1 ms: 3 (1000 µs is 1000 within 3 digits); ≤5 ms: 4; 70 s is past the last bound.
	if hist.GetSampleCount() != 5 || cum[0] != 1 || cum[1] != 3 || cum[3] != 4 || cum[len(cum)-1] != 4 || hist.GetSchema() != nativeSchema {
		t.Fatalf("count %d, cumulative %v, schema %d", hist.GetSampleCount(), cum, hist.GetSchema())
	}
	var native, cnt int64 // counts are delta-encoded
	for _, dl := range hist.PositiveDelta {
		cnt += dl
		native += cnt
	}
	if native != 5 || nativeIndex(1) != 0 || nativeIndex(2) != 8 || nativeIndex(1.05) != 1 {
		t.Fatalf("native buckets hold %d, indexes %d %d %d", native, nativeIndex(1), nativeIndex(2), nativeIndex(1.05))
	}
}

// The server serves /metrics, and Close with a linger waits for a scrape
// after the run's end.
func TestServerLinger(t *testing.T) {
	s, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Sink.Start(&results.RunInfo{Profile: "p", Target: "http://u:secret@127.0.0.1:1/mcp?token=abc", Ops: []string{"a"}})
	s.Ended()
	var wg sync.WaitGroup
	var body string
	var getErr error
	wg.Go(func() { body, getErr = httpGet("http://" + s.Addr() + "/metrics") })
	if !s.Close(t.Context(), time.Minute) {
		t.Fatal("Close returned before the scrape")
	}
	wg.Wait()
	if getErr != nil {
		t.Fatal(getErr)
	}
	if !strings.Contains(body, `mcpbench_ops_total{op="a"} 0`) || strings.Contains(body, "secret") || strings.Contains(body, "abc") {
		t.Fatalf("/metrics:\n%s", body)
	}
}

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
