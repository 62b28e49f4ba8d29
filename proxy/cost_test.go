package proxy_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/proxy"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// The cost measurements are runs, not checks: MCPBENCH_PROXY_COST=1 runs
// them (each prints its figures with t.Log; run with -v).
func costOnly(t *testing.T) {
	if os.Getenv("MCPBENCH_PROXY_COST") == "" {
		t.Skip("a measurement: set MCPBENCH_PROXY_COST=1 (and -v) to run it")
	}
}

// serveProxy mounts a transparent proxy (logging to w) in front of
// upstream; h2c serves HTTP/2 without TLS on both sides.
func serveProxy(t *testing.T, upstream string, w io.Writer, h2c bool) string {
	t.Helper()
	up, _ := url.Parse(upstream)
	px, err := proxy.New(proxy.Config{Upstream: up, Log: w, UpstreamH2C: h2c})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: px, Protocols: new(http.Protocols), HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 1000}}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	go hs.Serve(ln)
	t.Cleanup(func() { px.Close(); hs.Close() })
	return "http://" + ln.Addr().String() + up.Path
}

func rateRun(t *testing.T, target string, rate float64) *results.Summary {
	p := &profile.Profile{Name: "cost", Rate: rate, MaxVUs: 256, VUs: 32, Duration: profile.Duration(3 * time.Second), Protocol: driver.Protocol20251125,
		GracefulStop: profile.Duration(5 * time.Second), URL: target,
		Ops: []profile.OpSpec{{Method: "tools/call", Tool: "progress", Arguments: map[string]any{"count": 1}, Progress: true, Weight: weightOf(1), Expect: profile.Expect{Progress: 1}}}}
	pl, err := workload.Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := workload.Run(context.Background(), pl, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Latency the proxy adds per event at 2000 calls/s (and at 500, which a
// small shared machine sustains): mcpbench against the reference server
// directly and through the proxy (logging every line to a file),
// alternated; each call's answer is 3 SSE events (priming, progress,
// response). MCPBENCH_PROXY_COST_RATES overrides the rates ("500 2000").
func TestCostLatencyPerEvent(t *testing.T) {
	costOnly(t)
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f, err := os.Create(t.TempDir() + "/log.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	via := serveProxy(t, srv.URL(), f, false)
	const events = 3
	rates := []float64{500, 2000}
	if s := os.Getenv("MCPBENCH_PROXY_COST_RATES"); s != "" {
		rates = rates[:0]
		for _, f := range strings.Fields(s) {
			r, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			rates = append(rates, r)
		}
	}
	for round := range 2 * len(rates) {
		rate := rates[round%len(rates)]
		d, x := rateRun(t, srv.URL(), rate), rateRun(t, via, rate)
		t.Logf("%.0f/s round %d: direct %.0f calls/s p50 %.3f ms mean %.3f p99 %.3f | via proxy %.0f calls/s p50 %.3f ms mean %.3f p99 %.3f | added per event: p50 %.1f µs, mean %.1f µs (errors %d/%d, dropped %d/%d)",
			rate, round/len(rates), d.All.Rate, d.All.Response.P50, d.All.Response.Mean, d.All.Response.P99, x.All.Rate, x.All.Response.P50, x.All.Response.Mean, x.All.Response.P99,
			1000*(x.All.Response.P50-d.All.Response.P50)/events, 1000*(x.All.Response.Mean-d.All.Response.Mean)/events, d.All.Errors, x.All.Errors, d.Dropped, x.Dropped)
	}
}

// holdUpstream answers every GET with an SSE stream of one priming event
// and holds it open until the client leaves.
func holdUpstream(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 0\ndata: \n\n")
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}), Protocols: new(http.Protocols), HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 1000}}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// openStreams opens n GET streams to target over h2c, reads each one's
// first event, and returns a func that closes them.
func openStreams(t *testing.T, target string, n int) func() {
	tr := &http.Transport{Protocols: new(http.Protocols), HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 1000}}
	tr.Protocols.SetUnencryptedHTTP2(true)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 256)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			req, _ := http.NewRequestWithContext(ctx, "GET", target, nil)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				errs <- err
				return
			}
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					errs <- err
					return
				}
				if line == "\n" {
					break
				}
			}
			go func() { io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("opening streams: %v", err)
	}
	return func() { cancel(); tr.CloseIdleConnections() }
}

func memNow() (heap, stack uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.StackInuse, runtime.NumGoroutine()
}

// Memory with 10,000 open GET streams: held open by a trivial upstream,
// opened directly (control) and through the proxy, over h2c (so that the
// sockets fit the open-file limit: over HTTP/1.1 each stream through the
// proxy is 4 sockets in this one process). The proxy's cost is the
// difference.
func TestCostMemoryOpenStreams(t *testing.T) {
	costOnly(t)
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur < rl.Max {
		rl.Cur = rl.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	const n = 10000
	up := holdUpstream(t)
	via := serveProxy(t, up, io.Discard, true)
	h0, s0, g0 := memNow()
	stop := openStreams(t, up, n)
	h1, s1, g1 := memNow()
	stop()
	t.Logf("direct: %d streams: heap +%.1f MiB, stacks +%.1f MiB, goroutines +%d", n, mib(h1, h0), mib(s1, s0), g1-g0)
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > g0+50 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // polling the goroutine count down, bounded by the deadline
	}
	h2, s2, g2 := memNow()
	stop = openStreams(t, via, n)
	h3, s3, g3 := memNow()
	defer stop()
	dh, ds := mib(h3, h2)-mib(h1, h0), mib(s3, s2)-mib(s1, s0)
	t.Logf("via proxy: %d streams: heap +%.1f MiB, stacks +%.1f MiB, goroutines +%d", n, mib(h3, h2), mib(s3, s2), g3-g2)
	t.Logf("the proxy's share: heap %.1f MiB + stacks %.1f MiB = %.1f KiB per stream; %d goroutines per stream",
		dh, ds, 1024*(dh+ds)/n, ((g3-g2)-(g1-g0))/n)
}

func mib(a, b uint64) float64 { return (float64(a) - float64(b)) / (1 << 20) }

// sseUpstream answers every POST with 3 SSE events at once (priming,
// progress, response): a server that costs next to nothing, so that the
// proxy's hop is most of what a call through it adds.
func sseUpstream(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: \n\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n"+
			"id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n")
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// hopRun sends calls at rate for d (open loop: each call at its intended
// time, timed from it) and returns the p50 and p99 of the time to the
// last event, in µs.
func hopRun(t *testing.T, target string, rate float64, d time.Duration) (p50, p99 float64, late int, cpuPerCall float64) {
	cpu0 := cpuTime()
	defer func() { cpuPerCall = float64((cpuTime() - cpu0).Microseconds()) / (rate * d.Seconds()) }()
	tr := &http.Transport{MaxIdleConnsPerHost: 512}
	defer tr.CloseIdleConnections()
	n := int(rate * d.Seconds())
	lat := make([]float64, n)
	var wg sync.WaitGroup
	start := time.Now()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`
	for i := range n {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		time.Sleep(time.Until(due)) // pacing the open loop (not waiting for a result)
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", target, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				lat[i] = -1
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat[i] = float64(time.Since(due).Microseconds())
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	for _, v := range lat {
		if v < 0 {
			late++
		}
	}
	return lat[n/2], lat[n*99/100], late, 0
}

// cpuTime is the process's CPU time, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The proxy's hop at 2000 calls/s against a server that costs next to
// nothing: time from each call's intended start to its last event, and
// the process's CPU time per call, directly and through the proxy
// (logging to a file), alternated. CPU time holds on a loaded machine,
// where latency does not.
func TestCostHopPerEvent(t *testing.T) {
	costOnly(t)
	up := sseUpstream(t)
	f, err := os.Create(t.TempDir() + "/log.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	via := serveProxy(t, up, f, false)
	for round := range 3 {
		d50, d99, de, dc := hopRun(t, up, 2000, 3*time.Second)
		x50, x99, xe, xc := hopRun(t, via, 2000, 3*time.Second)
		t.Logf("round %d at 2000 calls/s: direct p50 %.0f µs p99 %.0f µs, CPU %.1f µs/call | via proxy p50 %.0f µs p99 %.0f µs, CPU %.1f µs/call | added per event (3 a call): p50 %.1f µs, p99 %.1f µs, CPU %.1f µs (failed %d/%d)",
			round, d50, d99, dc, x50, x99, xc, (x50-d50)/3, (x99-d99)/3, (xc-dc)/3, de, xe)
	}
}

// One call at a time, directly and through the proxy (logging to a
// file): the hop's latency and CPU per call without queueing.
func BenchmarkHop(b *testing.B) {
	t := &testing.T{}
	up := sseUpstream(t)
	f, err := os.CreateTemp(b.TempDir(), "log")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	via := serveProxy(t, up, f, false)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`
	for _, c := range []struct{ name, url string }{{"direct", up}, {"via-proxy", via}} {
		b.Run(c.name, func(b *testing.B) {
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			cpu0 := cpuTime()
			for b.Loop() {
				req, _ := http.NewRequest("POST", c.url, strings.NewReader(body))
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
		})
	}
}
