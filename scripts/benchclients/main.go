//go:build linux || darwin

// Command benchclients measures what three MCP clients cost the machine
// for the same load against the same server: mcpbench itself (`mcpbench
// run`), a small load generator on the official go-sdk's public client API,
// and a raw net/http loop that POSTs tools/call and reads the SSE answer;
// with -clients …,floor also the floor, a bare-socket loop that does only
// the write and the reads a call needs (floorClient).
//
// It starts one `mcpbench serve` (stateful, SSE answers, 2025-11-25), then
// runs each client as a child process, one after another, the order
// rotated every round, for -rounds rounds, and prints per call the child's
// user, system and total CPU (µs), voluntary and involuntary context
// switches (its rusage), heap allocations (runtime/metrics, read by the
// child at its end), and the ratios of the total against the go-sdk client
// and the raw loop of the same round; medians over the rounds. Per-call
// figures divide the whole child process (start, sessions, calls) by the
// calls it completed.
//
// Open model (default): -rate calls per second for -duration, whatever the
// server does. Closed model (-closed N): N workers call back to back for
// -duration (saturation). Every child is bounded by -duration plus a
// grace, then killed; only loopback is used.
//
// Usage (scripts/bench-clients.sh builds both binaries and runs this):
//
//	benchclients -mcpbench /path/to/mcpbench [-rate 2000] [-duration 10s] [-rounds 3] [-closed 0]
//
// The children are this same program with -child sdk|raw|floor.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const protocol = "2025-11-25"

var echoArgs = map[string]any{"text": "hello"}

type options struct {
	mcpbench string
	base     string
	url      string
	rate     float64
	duration time.Duration
	rounds   int
	closed   int
	sessions int
	procs    int
	clients  string
	verbose  bool
	child    string
}

func main() {
	var o options
	flag.StringVar(&o.mcpbench, "mcpbench", "mcpbench", "the mcpbench binary (serve and run)")
	flag.StringVar(&o.base, "base", "", "another mcpbench binary (e.g. built from main) run as client \"base\" in the same rounds: before/after in one run")
	flag.StringVar(&o.url, "url", "", "an MCP endpoint already running (default: start `mcpbench serve` on a free loopback port)")
	flag.Float64Var(&o.rate, "rate", 2000, "open model: tools/call per second")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long each client runs")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; each runs every client once, the order rotated")
	flag.IntVar(&o.closed, "closed", 0, "closed model: this many workers calling back to back (saturation); 0: open model at -rate")
	flag.IntVar(&o.sessions, "sessions", 16, "open model: sessions (one worker each) of the go-sdk and raw clients")
	flag.IntVar(&o.procs, "procs", 1, "GOMAXPROCS of every client (mcpbench: --procs)")
	flag.StringVar(&o.clients, "clients", "mcpbench,sdk,raw,floor", "clients to run, comma separated (mcpbench, sdk, raw, floor)")
	flag.BoolVar(&o.verbose, "v", false, "print every child's figures as it ends")
	flag.StringVar(&o.child, "child", "", "internal: run as the sdk or raw client")
	flag.Parse()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "benchclients:", err)
		os.Exit(2)
	}
	var err error
	if o.child != "" {
		err = runChild(o)
	} else {
		err = orchestrate(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchclients:", err)
		os.Exit(1)
	}
}

func (o options) check() error {
	switch {
	case o.rate <= 0 && o.closed <= 0:
		return errors.New("-rate must be > 0 (or -closed N > 0 for the closed model)")
	case o.duration <= 0 || o.duration > 10*time.Minute:
		return fmt.Errorf("-duration %v: want 0 < d ≤ 10m", o.duration)
	case o.rounds < 1 || o.rounds > 20:
		return fmt.Errorf("-rounds %d: want 1…20", o.rounds)
	case o.closed < 0 || o.closed > 1000:
		return fmt.Errorf("-closed %d: want 0…1000", o.closed)
	case o.sessions < 1 || o.sessions > 1000:
		return fmt.Errorf("-sessions %d: want 1…1000", o.sessions)
	case o.procs < 1:
		return fmt.Errorf("-procs %d: want ≥ 1", o.procs)
	}
	return nil
}

// childReport is what a child prints on stdout as its last line.
type childReport struct {
	Calls  int64  `json:"calls"`
	Errors int64  `json:"errors"`
	Allocs uint64 `json:"allocs"`
	First  string `json:"first_error,omitempty"`
}

// sample is one child's run: its rusage per call.
type sample struct {
	calls, errs        int64
	user, sys, total   float64 // µs per call
	vcsw, ivcsw        float64 // per call
	allocs             float64 // per call; -1 unknown
	ratioSDK, ratioRaw float64 // total vs the same round's; 0 unknown
	ratioFloor         float64
}

func orchestrate(o options) error {
	clients := strings.Split(o.clients, ",")
	if o.base != "" {
		clients = append([]string{"base"}, clients...)
	}
	for _, c := range clients {
		if c != "mcpbench" && c != "base" && c != "sdk" && c != "raw" && c != "floor" {
			return fmt.Errorf("-clients: unknown client %q (mcpbench, sdk, raw, floor)", c)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	url := o.url
	if url == "" {
		stop, u, err := startServer(o.mcpbench)
		if err != nil {
			return err
		}
		defer stop()
		url = u
	}
	load := fmt.Sprintf("open model, %.0f tools/call/s", o.rate)
	if o.closed > 0 {
		load = fmt.Sprintf("closed model, %d workers back to back", o.closed)
	}
	fmt.Printf("server %s (%s, SSE answers); %s for %v; GOMAXPROCS %d per client; %d rounds, order rotated\n",
		url, protocol, load, o.duration, o.procs, o.rounds)
	all := map[string][]sample{}
	for r := range o.rounds {
		round := map[string]sample{}
		for i := range clients {
			c := clients[(i+r)%len(clients)]
			s, err := runOne(o, self, url, c)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r+1, c, err)
			}
			if o.verbose {
				fmt.Printf("  round %d %-8s calls %d errors %d: user %.1f sys %.1f total %.1f µs/call, vcsw %.2f ivcsw %.2f, allocs %.1f\n",
					r+1, c, s.calls, s.errs, s.user, s.sys, s.total, s.vcsw, s.ivcsw, s.allocs)
			}
			round[c] = s
		}
		for c, s := range round {
			if b, ok := round["sdk"]; ok && b.total > 0 {
				s.ratioSDK = s.total / b.total
			}
			if b, ok := round["raw"]; ok && b.total > 0 {
				s.ratioRaw = s.total / b.total
			}
			if b, ok := round["floor"]; ok && b.total > 0 {
				s.ratioFloor = s.total / b.total
			}
			all[c] = append(all[c], s)
		}
	}
	printTable(clients, all, o.rounds)
	return nil
}

func printTable(clients []string, all map[string][]sample, rounds int) {
	fmt.Printf("\nmedians of %d rounds, per call (ratios: the total against the same round's client)\n", rounds)
	fmt.Printf("| client | calls | errors | user µs | sys µs | total µs | vol. cs | invol. cs | allocs | total vs go-sdk | total vs raw | total vs floor |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range clients {
		ss := all[c]
		med := func(f func(sample) float64) float64 {
			v := make([]float64, 0, len(ss))
			for _, s := range ss {
				v = append(v, f(s))
			}
			slices.Sort(v)
			if len(v)%2 == 1 {
				return v[len(v)/2]
			}
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		ratio := func(v float64) string {
			if v <= 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f×", v)
		}
		allocs := "–"
		if a := med(func(s sample) float64 { return s.allocs }); a >= 0 {
			allocs = fmt.Sprintf("%.1f", a)
		}
		name := map[string]string{"mcpbench": "mcpbench run", "base": "mcpbench run (-base)", "sdk": "go-sdk client", "raw": "raw net/http", "floor": "floor (bare socket)"}[c]
		fmt.Printf("| %s | %.0f | %.0f | %.1f | %.1f | %.1f | %.2f | %.2f | %s | %s | %s | %s |\n", name,
			med(func(s sample) float64 { return float64(s.calls) }), med(func(s sample) float64 { return float64(s.errs) }),
			med(func(s sample) float64 { return s.user }), med(func(s sample) float64 { return s.sys }),
			med(func(s sample) float64 { return s.total }), med(func(s sample) float64 { return s.vcsw }),
			med(func(s sample) float64 { return s.ivcsw }), allocs,
			ratio(med(func(s sample) float64 { return s.ratioSDK })), ratio(med(func(s sample) float64 { return s.ratioRaw })),
			ratio(med(func(s sample) float64 { return s.ratioFloor })))
	}
}

// startServer starts `mcpbench serve` on a free loopback port and waits
// until it accepts connections.
func startServer(bin string) (stop func(), url string, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s serve: %w", bin, err)
	}
	stop = func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	for deadline := time.Now().Add(15 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return stop, "http://" + addr + "/mcp", nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, "", fmt.Errorf("mcpbench serve did not listen on %s within 15s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runOne runs one client as a child process and returns its rusage per call.
func runOne(o options, self, url, client string) (sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.duration+60*time.Second)
	defer cancel()
	allocFile, err := os.CreateTemp("", "benchclients-allocs-*")
	if err != nil {
		return sample{}, err
	}
	allocFile.Close()
	defer os.Remove(allocFile.Name())
	var cmd *exec.Cmd
	dur := o.duration.String()
	switch client {
	case "mcpbench", "base":
		args := []string{"run", "--url", url, "--protocol", protocol, "--tool", "echo", "--args", `{"text":"hello"}`,
			"--duration", dur, "--warmup", "0", "--no-results", "--no-progress", "--format", "json",
			"--procs", strconv.Itoa(o.procs)}
		if o.closed > 0 {
			args = append(args, "--vus", strconv.Itoa(o.closed))
		} else {
			args = append(args, "--rate", strconv.FormatFloat(o.rate, 'f', -1, 64))
		}
		bin := o.mcpbench
		if client == "base" {
			bin = o.base
		}
		cmd = exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "MCPBENCH_ALLOCS_FILE="+allocFile.Name())
	default:
		cmd = exec.CommandContext(ctx, self, "-child", client, "-url", url, "-duration", dur,
			"-rate", strconv.FormatFloat(o.rate, 'f', -1, 64), "-closed", strconv.Itoa(o.closed),
			"-sessions", strconv.Itoa(o.sessions))
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(o.procs))
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%v: %s", err, lastLines(stderr.String(), 5))
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		return sample{}, errors.New("no rusage from the child")
	}
	var rep childReport
	switch client {
	case "mcpbench", "base":
		var sum struct {
			All struct {
				Count  int64 `json:"count"`
				Errors int64 `json:"errors"`
			} `json:"all"`
		}
		if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
			return sample{}, fmt.Errorf("mcpbench run's JSON summary: %v", err)
		}
		rep.Calls, rep.Errors = sum.All.Count, sum.All.Errors
		if b, err := os.ReadFile(allocFile.Name()); err == nil && len(bytes.TrimSpace(b)) > 0 {
			rep.Allocs, _ = strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
		}
	default:
		line := lastLines(out.String(), 1)
		if err := json.Unmarshal([]byte(line), &rep); err != nil {
			return sample{}, fmt.Errorf("child report %q: %v", line, err)
		}
	}
	if rep.Calls == 0 {
		return sample{}, fmt.Errorf("no call completed (%d errors; %s) %s", rep.Errors, rep.First, lastLines(stderr.String(), 3))
	}
	n := float64(rep.Calls)
	us := func(t syscall.Timeval) float64 { return float64(t.Sec)*1e6 + float64(t.Usec) }
	s := sample{calls: rep.Calls, errs: rep.Errors, user: us(ru.Utime) / n, sys: us(ru.Stime) / n,
		vcsw: float64(ru.Nvcsw) / n, ivcsw: float64(ru.Nivcsw) / n, allocs: -1}
	s.total = s.user + s.sys
	if rep.Allocs > 0 {
		s.allocs = float64(rep.Allocs) / n
	}
	return s, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// runChild runs the sdk or raw client: it opens its sessions, runs the
// load, and prints its childReport.
func runChild(o options) error {
	workers := o.sessions
	if o.closed > 0 {
		workers = o.closed
	}
	ctx := context.Background()
	var call func(ctx context.Context, w int) error
	var closeAll func()
	switch o.child {
	case "sdk":
		c, cl, err := sdkClient(ctx, o.url, workers)
		if err != nil {
			return err
		}
		call, closeAll = c, cl
	case "raw":
		c, err := rawClient(ctx, o.url, workers)
		if err != nil {
			return err
		}
		call, closeAll = c, func() {}
	case "floor":
		c, cl, err := floorClient(ctx, o.url, workers)
		if err != nil {
			return err
		}
		call, closeAll = c, cl
	default:
		return fmt.Errorf("-child %q: want sdk, raw or floor", o.child)
	}
	var rep childReport
	var calls, errs atomic.Int64
	var firstErr atomic.Value
	do := func(w int) {
		if err := call(ctx, w); err != nil {
			errs.Add(1)
			firstErr.CompareAndSwap(nil, err.Error())
			return
		}
		calls.Add(1)
	}
	end := time.Now().Add(o.duration)
	var wg sync.WaitGroup
	if o.closed > 0 {
		for w := range workers {
			wg.Go(func() {
				for time.Now().Before(end) {
					do(w)
				}
			})
		}
	} else {
		// The pacer: arrival i is due at start + i/rate; every arrival due
		// goes to the pool's queue (a full queue drops it: counted as an
		// error, as an open model must not wait).
		jobs := make(chan struct{}, 4096)
		for w := range workers {
			wg.Go(func() {
				for range jobs {
					do(w)
				}
			})
		}
		start := time.Now()
		interval := time.Duration(float64(time.Second) / o.rate)
		for i := int64(0); ; i++ {
			due := start.Add(time.Duration(i) * interval)
			if !due.Before(end) {
				break
			}
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
			select {
			case jobs <- struct{}{}:
			default:
				errs.Add(1)
			}
		}
		close(jobs)
	}
	wg.Wait()
	closeAll()
	rep.Calls, rep.Errors = calls.Load(), errs.Load()
	if f, ok := firstErr.Load().(string); ok {
		rep.First = f
	}
	rep.Allocs = heapAllocs()
	b, _ := json.Marshal(rep)
	fmt.Println(string(b))
	return nil
}

// heapAllocs is the process's heap allocations so far (objects).
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// sdkClient opens n sessions with the go-sdk's client (Streamable HTTP, no
// standalone GET stream, as mcpbench runs without --get-stream); worker w
// calls on session w.
func sdkClient(ctx context.Context, url string, n int) (func(context.Context, int) error, func(), error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "benchclients-sdk", Version: "1"}, nil)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxIdleConns: n}}
	sessions := make([]*mcp.ClientSession, n)
	for i := range n {
		t := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}
		cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			return nil, nil, fmt.Errorf("go-sdk connect: %w", err)
		}
		sessions[i] = cs
	}
	call := func(ctx context.Context, w int) error {
		res, err := sessions[w].CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: echoArgs})
		if err == nil && res.IsError {
			err = errors.New("tool error")
		}
		return err
	}
	closeAll := func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}
	return call, closeAll, nil
}

// rawClient initializes n sessions with plain POSTs; worker w POSTs
// tools/call on session w and reads the answer (SSE or JSON) to its end,
// checking that it carries a result.
func rawClient(ctx context.Context, url string, n int) (func(context.Context, int) error, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxIdleConns: n}}
	type sess struct {
		id   string
		next int64
		buf  []byte
		body bytes.Buffer
	}
	post := func(ctx context.Context, sid string, body []byte, buf []byte) (*http.Response, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, buf, err
		}
		req.Header["Content-Type"] = []string{"application/json"}
		req.Header["Accept"] = []string{"application/json, text/event-stream"}
		req.Header["Mcp-Protocol-Version"] = []string{protocol}
		if sid != "" {
			req.Header["Mcp-Session-Id"] = []string{sid}
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, buf, err
		}
		defer resp.Body.Close()
		buf = buf[:0]
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			m, err := resp.Body.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			if err == io.EOF {
				break
			}
			if err != nil {
				return resp, buf, err
			}
		}
		return resp, buf, nil
	}
	ss := make([]*sess, n)
	for i := range n {
		init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocol +
			`","capabilities":{},"clientInfo":{"name":"benchclients-raw","version":"1"}}}`
		resp, _, err := post(ctx, "", []byte(init), nil)
		if err != nil {
			return nil, fmt.Errorf("raw initialize: %w", err)
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			return nil, fmt.Errorf("raw initialize: status %d, session id %q", resp.StatusCode, sid)
		}
		if _, _, err := post(ctx, sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil); err != nil {
			return nil, fmt.Errorf("raw notifications/initialized: %w", err)
		}
		ss[i] = &sess{id: sid, next: 1, buf: make([]byte, 0, 4096)}
	}
	result := []byte(`"result"`)
	return func(ctx context.Context, w int) error {
		s := ss[w]
		s.next++
		s.body.Reset()
		s.body.WriteString(`{"jsonrpc":"2.0","id":`)
		s.body.WriteString(strconv.FormatInt(s.next, 10))
		s.body.WriteString(`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
		resp, buf, err := post(ctx, s.id, s.body.Bytes(), s.buf)
		s.buf = buf
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || !bytes.Contains(buf, result) {
			return fmt.Errorf("raw tools/call: status %d, no result in %q", resp.StatusCode, buf)
		}
		return nil
	}, nil
}

// floorClient is the least a Go client can do per call, to show the floor
// under every other client's cost: it initializes n sessions with net/http,
// then worker w keeps one TCP connection and per call writes a POST built
// by appending to one buffer and reads until the chunked answer's last
// chunk, checking only that "result" came: no HTTP parsing, no SSE
// decoding, no liveness check, no timers, no latency recording. Its reads
// and writes go through Go's netpoller like every Go client's. It works
// only against a server that answers every POST with chunked SSE or an
// empty 202, as `mcpbench serve` does.
func floorClient(ctx context.Context, url string, n int) (func(context.Context, int) error, func(), error) {
	u, err := neturl.Parse(url)
	if err != nil {
		return nil, nil, err
	}
	cs := make([]*floorConn, n)
	hc := &http.Client{}
	for i := range n {
		init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + protocol +
			`","capabilities":{},"clientInfo":{"name":"benchclients-floor","version":"1"}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(init))
		req.Header["Content-Type"] = []string{"application/json"}
		req.Header["Accept"] = []string{"application/json, text/event-stream"}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, nil, fmt.Errorf("floor initialize: %w", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			return nil, nil, fmt.Errorf("floor initialize: status %d, session id %q", resp.StatusCode, sid)
		}
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			return nil, nil, err
		}
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			return nil, nil, err
		}
		fc := &floorConn{c: c, rc: rc, host: u.Host, path: u.RequestURI(), sid: sid, buf: make([]byte, 4096)}
		fc.readF, fc.writeF = fc.readFD, fc.writeFD
		cs[i] = fc
		if err := fc.do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, "\r\n\r\n", false); err != nil {
			return nil, nil, fmt.Errorf("floor notifications/initialized: %w", err)
		}
		// One call whose head is checked: the loop below reads until the
		// last chunk, which an answer of another shape never sends.
		if err := fc.call(true); err != nil {
			return nil, nil, err
		}
	}
	call := func(ctx context.Context, w int) error { return cs[w].call(false) }
	closeAll := func() {
		for _, c := range cs {
			c.c.Close()
		}
	}
	return call, closeAll, nil
}

var floorResult = []byte(`"result"`)

// call makes one tools/call echo; checkHead checks that the answer is a
// chunked event stream (its head, once complete).
func (c *floorConn) call(checkHead bool) error {
	c.next++
	c.body = append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	c.body = strconv.AppendInt(c.body, c.next, 10)
	c.body = append(c.body, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`...)
	return c.do(string(c.body), floorResult, "\r\n0\r\n\r\n", checkHead)
}

// floorConn is one floorClient worker's connection.
type floorConn struct {
	c               net.Conn
	rc              syscall.RawConn
	readF, writeF   func(fd uintptr) bool
	rn, wn          int
	rerr, werr      syscall.Errno
	host, path, sid string
	next            int64
	body, req, buf  []byte
}

// readFD and writeFD are raw read(2) and write(2) inside the RawConn, as
// mcpbench's own connections make them (httpclient/rawio_linux.go): the
// netpoller waits, the calls skip the scheduler's syscall bookkeeping.
func (c *floorConn) readFD(fd uintptr) bool {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.buf[c.rn])), uintptr(len(c.buf)-c.rn))
	if e == syscall.EAGAIN {
		return false
	}
	c.rerr = e
	if e == 0 {
		c.rn += int(n)
	}
	return true
}

func (c *floorConn) writeFD(fd uintptr) bool {
	for c.wn < len(c.req) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.req[c.wn])), uintptr(len(c.req)-c.wn))
		if e == syscall.EAGAIN {
			return false
		}
		if c.werr = e; e != 0 {
			return true
		}
		c.wn += int(n)
	}
	return true
}

// do POSTs body and reads until the answer ends with end; want, if not
// nil, must be in the answer. checkHead: the answer must be a 200 with a
// chunked text/event-stream body (checked once its head is complete).
func (c *floorConn) do(body string, want []byte, end string, checkHead bool) error {
	c.req = append(c.req[:0], "POST "...)
	c.req = append(c.req, c.path...)
	c.req = append(c.req, " HTTP/1.1\r\nHost: "...)
	c.req = append(c.req, c.host...)
	c.req = append(c.req, "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: "...)
	c.req = append(c.req, protocol...)
	c.req = append(c.req, "\r\nMcp-Session-Id: "...)
	c.req = append(c.req, c.sid...)
	c.req = append(c.req, "\r\nContent-Length: "...)
	c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, body...)
	c.wn, c.werr = 0, 0
	if err := c.rc.Write(c.writeF); err != nil || c.werr != 0 {
		return fmt.Errorf("floor: write: %v %v", err, c.werr)
	}
	c.rn = 0
	for !bytes.HasSuffix(c.buf[:c.rn], []byte(end)) {
		if c.rn == len(c.buf) {
			return fmt.Errorf("floor: answer over %d bytes", len(c.buf))
		}
		n := c.rn
		c.rerr = 0
		if err := c.rc.Read(c.readF); err != nil || c.rerr != 0 || c.rn == n {
			return fmt.Errorf("floor: read: %v %v after %q", err, c.rerr, c.buf[:c.rn])
		}
		if i := bytes.Index(c.buf[:c.rn], []byte("\r\n\r\n")); checkHead && i >= 0 {
			head := strings.ToLower(string(c.buf[:i]))
			if !strings.HasPrefix(head, "http/1.1 200 ") || !strings.Contains(head, "\r\ntransfer-encoding: chunked") ||
				!strings.Contains(head, "\r\ncontent-type: text/event-stream") {
				return fmt.Errorf("floor: the server must answer tools/call with a chunked event stream (mcpbench serve's default mode); it answered %q", c.buf[:i])
			}
			checkHead = false
		}
	}
	n := c.rn
	if want != nil && !bytes.Contains(c.buf[:n], want) {
		return fmt.Errorf("floor: no %s in %q", want, c.buf[:n])
	}
	return nil
}
