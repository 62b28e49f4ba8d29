package live

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/sse"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// startDashboard serves a dashboard on a loopback port, closed with the
// test.
func startDashboard(t *testing.T) *Dashboard {
	t.Helper()
	d, err := ServeDashboard("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(t.Context(), 0) })
	return d
}

// sseEvent is a decoded event, its data checked to be one JSON object.
type sseEvent struct {
	id   string
	typ  string
	data map[string]any
}

// readEvents decodes n events from r with internal/sse's decoder (the
// format a browser's EventSource reads), failing on an event without an
// id or a type, or with data that is not a JSON object.
func readEvents(t *testing.T, r io.Reader, n int) []sseEvent {
	t.Helper()
	dec := sse.NewDecoder(r)
	var out []sseEvent
	for len(out) < n {
		ev, err := dec.Next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		if len(ev.Data) == 0 && len(ev.Type) == 0 {
			continue // the retry field alone
		}
		if !ev.HasID || len(ev.Type) == 0 {
			t.Fatalf("event %q without its own id or type (id %q)", ev.Data, ev.ID)
		}
		var m map[string]any
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			t.Fatalf("event %s %s: data %q is not a JSON object: %v", ev.ID, ev.Type, ev.Data, err)
		}
		out = append(out, sseEvent{id: string(ev.ID), typ: string(ev.Type), data: m})
	}
	return out
}

// getEvents opens the event stream, with a Last-Event-ID when last > 0.
func getEvents(t *testing.T, d *Dashboard, last int) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", d.URL()+"events", nil)
	if last > 0 {
		req.Header.Set("Last-Event-ID", fmt.Sprint(last))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /events: %s, Content-Type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return resp
}

// waitViewers polls until the dashboard has n viewers (at most 10 s).
func waitViewers(t *testing.T, d *Dashboard, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		d.mu.Lock()
		got := len(d.viewers)
		d.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d viewers, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline: the handler registers on its own goroutine
	}
}

// record is an interval record of ops named op0…op(n-1), each name pad
// characters long, with count ops in all.
func record(n, pad int, count int64) *results.IntervalRecord {
	rec := &results.IntervalRecord{Phase: results.PhaseMeasure, VUs: 3, Sessions: 3}
	now := time.Now()
	rec.Row = results.Row{Start: now.Add(-time.Second), End: now, Rate: float64(count), All: results.RowOp{Count: count}}
	for i := range n {
		name := fmt.Sprintf("op%d", i)
		rec.Names = append(rec.Names, name+strings.Repeat("x", max(0, pad-len(name))))
		rec.Row.Ops = append(rec.Row.Ops, results.RowOp{Count: 1, P50: 1.5, P99: 9.5})
	}
	return rec
}

// A viewer gets every event in order, each a valid SSE event with one
// JSON object; one that connects later gets the history first, and one
// reconnecting with Last-Event-ID only what came after it.
func TestDashboardEventsInOrder(t *testing.T) {
	d := startDashboard(t)
	early := getEvents(t, d, 0)
	waitViewers(t, d, 1)

	d.Start(&results.RunInfo{Started: time.Now(), Profile: "p", Target: "http://user:secret@127.0.0.1:1/mcp", Ops: []string{"a"}})
	for i := range 5 {
		d.Interval(record(1, 0, int64(100+i)))
	}
	d.Step(results.SweepStep{N: 1, By: "rate", Value: 100, Pass: true})
	want := []string{"start", "interval", "interval", "interval", "interval", "interval", "step"}

	check := func(name string, evs []sseEvent, from int) {
		t.Helper()
		for i, ev := range evs {
			if ev.id != fmt.Sprint(from+i) || ev.typ != want[from-1+i] {
				t.Fatalf("%s: event %d is %s %s, want %d %s", name, i, ev.id, ev.typ, from+i, want[from-1+i])
			}
			if ev.typ == "interval" && ev.data["rate"] != float64(100+from-2+i) {
				t.Errorf("%s: interval %s has rate %v, want %d", name, ev.id, ev.data["rate"], 100+from-2+i)
			}
		}
	}
	evs := readEvents(t, early.Body, len(want))
	check("connected first", evs, 1)
	if target := evs[0].data["target"].(string); strings.Contains(target, "secret") {
		t.Errorf("the start event shows the target's password: %s", target)
	}
	check("connected later", readEvents(t, getEvents(t, d, 0).Body, len(want)), 1)
	check("reconnected after event 4", readEvents(t, getEvents(t, d, 4).Body, 3), 5)
}

// A viewer that never reads does not hold up Interval: every call
// returns while its connection is full, its queue stays bounded (the
// oldest events dropped), and when it reads at last it gets the newest
// event after a gap in the ids.
func TestDashboardSlowViewerNeverBlocksInterval(t *testing.T) {
	d := startDashboard(t)
	conn, err := net.Dial("tcp", d.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := http.NewRequest("GET", d.URL()+"events", nil)
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	waitViewers(t, d, 1)

	// 400 events of about 60 KB: 24 MB, far more than the socket buffers
	// of a connection that is not read (Linux: the sender's up to 4 MB,
	// the receiver's initial window) and the queue (DashboardQueue
	// events) hold.
	const n = 400
	rec := record(300, 100, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			d.Interval(rec)
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second): // the calls take well under a second; only a blocked call misses this
		t.Fatal("Interval blocked on a viewer that does not read")
	}
	d.mu.Lock()
	var queued int
	var dropped int64
	for v := range d.viewers {
		v.mu.Lock()
		queued, dropped = len(v.q), v.dropped
		v.mu.Unlock()
	}
	d.mu.Unlock()
	if queued > DashboardQueue || dropped == 0 {
		t.Fatalf("viewer queue %d (max %d), dropped %d: want a full queue with drops", queued, DashboardQueue, dropped)
	}

	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	dec := sse.NewDecoder(resp.Body)
	prev, gap := 0, false
	for prev < n {
		ev, err := dec.Next()
		if err != nil {
			t.Fatalf("after event %d: %v", prev, err)
		}
		if !ev.HasID {
			continue
		}
		var id int
		fmt.Sscan(string(ev.ID), &id)
		if id <= prev {
			t.Fatalf("event %d after %d: out of order", id, prev)
		}
		if id > prev+1 {
			gap = true
		}
		if !json.Valid(ev.Data) {
			t.Fatalf("event %d: invalid JSON", id)
		}
		prev = id
	}
	if !gap {
		t.Errorf("no gap in the ids, yet %d events were dropped", dropped)
	}
}

// The dashboard counts what the run did: its interval events add up to
// the summary's ops and the planted errors and duplicates, the end event
// has the summary's headline, and after Finish the page's report is the
// run's HTML report, served until the page has fetched it.
func TestDashboardCountsPlantedFaults(t *testing.T) {
	d := startDashboard(t)
	dir := t.TempDir()
	var pl planted
	var sum *results.Summary
	synctest.Test(t, func(t *testing.T) {
		hc, stop := mcptest.ServePipe(faultyFake(&pl))
		defer stop()
		p := &profile.Profile{Name: "faults", URL: "http://fake/mcp", VUs: 2, Duration: profile.Duration(4 * time.Second),
			Ops: []profile.OpSpec{{Method: "tools/call", Tool: "echo", Progress: true, Weight: weight(1)}}}
		plan, err := workload.Compile(p, hc)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := results.NewResultsDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		sum, err = workload.Run(t.Context(), plan, workload.Options{Sinks: []results.Sink{rd, d}})
		if err != nil {
			t.Fatal(err)
		}
	})
	d.mu.Lock()
	hist := d.since(0)
	d.mu.Unlock()
	var stream strings.Builder
	for _, ev := range hist {
		stream.Write(ev.frame)
	}
	evs := readEvents(t, strings.NewReader(stream.String()), len(hist))
	var count, dup, rpc, http500 float64
	for i, ev := range evs {
		if ev.id != fmt.Sprint(i+1) {
			t.Fatalf("event %d has id %s", i, ev.id)
		}
		if ev.typ != "interval" {
			continue
		}
		count += ev.data["all"].(map[string]any)["count"].(float64)
		if v, ok := ev.data["verdicts"].(map[string]any); ok && v["duplicated"] != nil {
			dup += v["duplicated"].(float64)
		}
		if c, ok := ev.data["errors_by_class"].(map[string]any); ok {
			rpc += num(c["jsonrpc-error"])
			http500 += num(c["http-status"])
		}
		if svc := ev.data["service_ms"].(map[string]any); ev.data["phase"] == "measure" && num(svc["p50_ms"]) < 5 {
			t.Errorf("interval %s: service p50 %v ms, want at least the fake's 5 ms", ev.id, svc["p50_ms"])
		}
	}
	if evs[0].typ != "start" || evs[len(evs)-1].typ != "end" {
		t.Errorf("events from %s to %s, want start … end", evs[0].typ, evs[len(evs)-1].typ)
	}
	total := pl.rpcErrors.Load() + pl.status500.Load() + pl.duplicated.Load() + pl.ok.Load()
	if int64(count) != total || int64(dup) != pl.duplicated.Load() || int64(rpc) != pl.rpcErrors.Load() || int64(http500) != pl.status500.Load() {
		t.Errorf("interval events: %v ops, %v duplicated, %v JSON-RPC errors, %v HTTP 500; planted %d, %d, %d, %d",
			count, dup, rpc, http500, total, pl.duplicated.Load(), pl.rpcErrors.Load(), pl.status500.Load())
	}
	if end := evs[len(evs)-1].data; int64(num(end["count"])) != sum.All.Count || int64(num(end["errors"])) != sum.All.Errors {
		t.Errorf("end event %v ops, %v errors; summary %d, %d", end["count"], end["errors"], sum.All.Count, sum.All.Errors)
	}

	viewer := getEvents(t, d, len(hist))
	waitViewers(t, d, 1)
	d.Finish(dir)
	rep := readEvents(t, viewer.Body, 1)[0]
	if rep.typ != "report" || rep.data["ok"] != true || rep.data["url"] != "/report" {
		t.Fatalf("after Finish: %s %v, want a report event", rep.typ, rep.data)
	}
	// The page leaves for the report: its event stream may close before
	// its request for /report comes, and the command ends meanwhile
	// (Close): the server must still be there for that request.
	viewer.Body.Close()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		d.Close(t.Context(), 0)
	}()
	resp, err := http.Get(d.URL() + "report")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(body), `id="summary-table"`) || !strings.Contains(string(body), `<link rel="icon" href="data:,">`) {
		t.Errorf("GET /report: %s %q, %d bytes: want the run's HTML report with an empty icon", resp.Status, resp.Header.Get("Content-Type"), len(body))
	}
	// The end page gives the run's verdict, as the terminal does.
	if want := fmt.Sprintf(`<p class="vline verdict level-WARN">Verdict: WARN — %d errors (`, sum.All.Errors); !strings.Contains(string(body), want) {
		t.Errorf("the end page lacks %q", want)
	}
	<-closed // the report was fetched: Close goes on
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// Without a results directory the report event says why, and the page
// keeps its numbers; Close sends "bye" and ends the stream.
func TestDashboardFinishWithoutResults(t *testing.T) {
	d, err := ServeDashboard("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	viewer := getEvents(t, d, 0)
	waitViewers(t, d, 1)
	d.Finish("")
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		d.Close(t.Context(), 0)
	}()
	evs := readEvents(t, viewer.Body, 2)
	if evs[0].typ != "report" || evs[0].data["ok"] != false || !strings.Contains(fmt.Sprint(evs[0].data["why"]), "--no-results") || evs[1].typ != "bye" {
		t.Errorf("events %v, want a report event that says why, then bye", evs)
	}
	<-closed
	if _, err := sse.NewDecoder(viewer.Body).Next(); err == nil {
		t.Errorf("the stream goes on after Close: %v", err)
	}
	if resp, err := http.Get(d.URL()); err == nil {
		resp.Body.Close()
		t.Errorf("the dashboard still answers after Close: %s", resp.Status)
	}
}

// The page and its assets come from the binary, with a policy that lets
// the page load only from its own origin.
func TestDashboardServesPage(t *testing.T) {
	d := startDashboard(t)
	for path, want := range map[string]string{"": "dashboard.js", "dashboard.js": "new EventSource('events')", "uPlot.iife.min.js": "uPlot", "uPlot.min.css": ".uplot"} {
		resp, err := http.Get(d.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("GET /%s: %s, CSP %q, body lacks %q", path, resp.Status, resp.Header.Get("Content-Security-Policy"), want)
		}
	}
	resp, err := http.Get(d.URL() + "report")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /report before the end: %s, want 404", resp.Status)
	}
}

// Loopback by default: ":PORT" listens on 127.0.0.1; any other address
// gets serve's kind of warning.
func TestDashboardAddressAndWarning(t *testing.T) {
	if got := DashboardAddr(":5665"); got != "127.0.0.1:5665" {
		t.Errorf("DashboardAddr(:5665) = %s", got)
	}
	for _, addr := range []string{"127.0.0.1:5665", "[::1]:5665", "127.0.0.2:80"} {
		if w := DashboardExposure(addr); w != "" {
			t.Errorf("%s: warned %q", addr, w)
		}
	}
	for _, addr := range []string{"0.0.0.0:5665", "[::]:5665", "192.168.1.5:5665"} {
		w := DashboardExposure(addr)
		if !strings.HasPrefix(w, "mcpbench: WARNING: live.ServeDashboard's addr listening on "+addr+", not a loopback address") ||
			!strings.Contains(w, "no authentication") || !strings.Contains(w, "use live.ServeDashboard's addr 127.0.0.1:PORT") || !strings.HasSuffix(w, "\n") {
			t.Errorf("%s: warning %q", addr, w)
		}
	}
	d, err := ServeDashboard(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(t.Context(), 0)
	if host, _, _ := net.SplitHostPort(d.Addr()); host != "127.0.0.1" {
		t.Errorf("--dashboard :0 listens on %s, want loopback", d.Addr())
	}
}
