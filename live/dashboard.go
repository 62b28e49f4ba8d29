package live

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/plots"
	"github.com/mcpbench/mcpbench/results"
)

// DashboardQueue is how many events each viewer's buffer holds. A viewer
// that falls behind (a slow or stalled browser) loses its oldest queued
// event for the newest; the page sees the gap in the event ids. The run
// never waits for a viewer.
const DashboardQueue = 64

// DashboardHistory is how many events the dashboard keeps for a viewer
// that connects late or reconnects (about an hour of 1 s intervals).
const DashboardHistory = 4096

// ReportGrace is how long Close waits, without a linger, for the viewers
// connected at the end to fetch the HTML report before the server stops.
const ReportGrace = 3 * time.Second

// writeTimeout bounds the write of one event to a viewer: a browser that
// stops reading is dropped (its handler returns) after it.
const writeTimeout = 10 * time.Second

//go:embed dashboard
var dashboardFiles embed.FS

// Dashboard is a results.Sink that serves a live web page of the run
// (its charts drawn by the embedded uPlot) and feeds it Server-Sent
// Events at /events: "start" (the run's description), "interval" (one per
// interval: the --out-jsonl line with the service time percentiles and
// the ledger's verdicts added), "end" (the run's headline), "step" (a
// sweep's finished step, Step), "report" (the HTML report is ready at
// /report, Finish) and "bye" (the server is closing). Each event's id is
// its sequence number; data is one JSON object.
//
// Each event is encoded once, in the caller's goroutine, and handed to
// every viewer's bounded queue (DashboardQueue, the oldest dropped when
// full) under a short lock: no I/O happens in a Sink call. A late viewer
// (or one reconnecting with Last-Event-ID) first gets the events it
// missed from a bounded history (DashboardHistory). Safe for concurrent
// use.
type Dashboard struct {
	ln      net.Listener
	srv     *http.Server
	done    chan struct{} // the server has stopped
	closing chan struct{} // Close began: the viewers flush and return
	once    sync.Once
	closes  closes
	encErr  atomic.Pointer[error]

	mu      sync.Mutex
	seq     uint64
	hist    []dashEvent // ring of the last DashboardHistory events, hist[head] the oldest once full
	head    int
	viewers map[*viewer]struct{}
	report  []byte        // the final HTML report (nil: none)
	waiting int           // viewers yet to fetch the report after it was announced
	fetched chan struct{} // closed when waiting reaches 0 (nil before Finish)
}

var _ results.Sink = (*Dashboard)(nil)

// dashEvent is one encoded SSE event.
type dashEvent struct {
	id    uint64
	frame []byte
}

// viewer is one connected page: its bounded queue and a wake-up signal.
type viewer struct {
	mu      sync.Mutex
	q       []dashEvent // at most DashboardQueue
	dropped int64
	wake    chan struct{} // capacity 1
}

// push queues ev, dropping the oldest queued event when full, and wakes
// the viewer's writer; it never blocks.
func (v *viewer) push(ev dashEvent) {
	v.mu.Lock()
	if len(v.q) == DashboardQueue {
		copy(v.q, v.q[1:])
		v.q = v.q[:len(v.q)-1]
		v.dropped++
	}
	v.q = append(v.q, ev)
	v.mu.Unlock()
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// take empties the queue into buf.
func (v *viewer) take(buf []dashEvent) []dashEvent {
	v.mu.Lock()
	defer v.mu.Unlock()
	buf = append(buf[:0], v.q...)
	clear(v.q)
	v.q = v.q[:0]
	return buf
}

// DashboardAddr is the address --dashboard listens on: addr with an
// empty host made 127.0.0.1 (":5665" stays on this host; name the host,
// 0.0.0.0 say, to listen beyond it).
func DashboardAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// DashboardExposure is the warning for a dashboard listening on addr
// (the listener's address), "" when it is a loopback address.
func DashboardExposure(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("mcpbench: WARNING: %s listening on %s, not a loopback address: anyone who reaches it sees the run's live results and its report, with no authentication (use %s 127.0.0.1:PORT to keep it local)\n", setting.LiveDashboardAddr, addr, setting.LiveDashboardAddr)
}

// ServeDashboard listens on DashboardAddr(addr) and serves the page at /,
// its events at /events and, after Finish, the HTML report at /report.
// A request with an Origin header other than the dashboard's own, or one
// that reaches a loopback address with a Host that is not a loopback
// name, gets 403 (netutil.Guard: DNS rebinding protection, as mcpbench
// serve). The error names the flag and the address.
func ServeDashboard(addr string) (*Dashboard, error) {
	ln, err := net.Listen("tcp", DashboardAddr(addr))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", setting.LiveDashboardAddr, addr, err)
	}
	return newDashboard(ln), nil
}

func newDashboard(ln net.Listener) *Dashboard {
	d := &Dashboard{ln: ln, done: make(chan struct{}), closing: make(chan struct{}), viewers: map[*viewer]struct{}{}}
	assets, _ := fs.Sub(dashboardFiles, "dashboard")
	files := http.FileServerFS(assets)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events", d.serveEvents)
	mux.HandleFunc("GET /report", d.serveReport)
	mux.Handle("GET /", files)
	d.srv = &http.Server{Handler: secure(netutil.Guard{}.Wrap(mux)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(d.done)
		d.srv.Serve(ln)
	}()
	return d
}

// secure sets the headers of every answer: the page may load only from
// its own origin (the report's inline style included), and is not cached.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// Addr returns the address the dashboard listens on.
func (d *Dashboard) Addr() string { return d.ln.Addr().String() }

// URL returns the page's address.
func (d *Dashboard) URL() string { return "http://" + d.Addr() + "/" }

// Err returns the first event that could not be encoded (nil: none).
func (d *Dashboard) Err() error {
	if p := d.encErr.Load(); p != nil {
		return *p
	}
	return nil
}

// publish encodes v as event typ and hands it to the history and every
// viewer's queue.
func (d *Dashboard) publish(typ string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		d.encErr.CompareAndSwap(nil, &err)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	ev := dashEvent{id: d.seq, frame: sseFrame(d.seq, typ, data)}
	if len(d.hist) < DashboardHistory {
		d.hist = append(d.hist, ev)
	} else {
		d.hist[d.head] = ev
		d.head = (d.head + 1) % DashboardHistory
	}
	for v := range d.viewers {
		v.push(ev)
	}
}

// sseFrame is one SSE event: id, event type, one data line (JSON has no
// raw line breaks) and the blank line that dispatches it.
func sseFrame(id uint64, typ string, data []byte) []byte {
	b := make([]byte, 0, len(data)+len(typ)+40)
	b = append(b, "id: "...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, "\nevent: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// since returns the history's events after id, oldest first (mu held).
func (d *Dashboard) since(id uint64) []dashEvent {
	var out []dashEvent
	n := len(d.hist)
	for i := range n {
		ev := d.hist[(d.head+i)%n]
		if ev.id > id {
			out = append(out, ev)
		}
	}
	return out
}

// Event payloads.
type (
	dashStart struct {
		Started  time.Time `json:"started"`
		Profile  string    `json:"profile"`
		Target   string    `json:"target"`
		Protocol string    `json:"protocol"`
		Ops      []string  `json:"ops"`
	}
	dashLatency struct {
		P50 float64 `json:"p50_ms"`
		P90 float64 `json:"p90_ms"`
		P99 float64 `json:"p99_ms"`
	}
	dashInterval struct {
		IntervalLine
		RemainingS float64          `json:"remaining_s"`
		Service    dashLatency      `json:"service_ms"`
		Resumes    int64            `json:"resumes"`
		Streams    int64            `json:"ledger_streams"`
		Faulty     int64            `json:"ledger_faulty"`
		Verdicts   map[string]int64 `json:"verdicts,omitempty"`
	}
	dashEnd struct {
		TargetRate  float64                 `json:"target_rate,omitempty"`
		Rate        float64                 `json:"rate"`
		Count       int64                   `json:"count"`
		Errors      int64                   `json:"errors"`
		ErrorRate   float64                 `json:"error_rate"`
		Dropped     int64                   `json:"dropped"`
		Response    results.Latency         `json:"response_time_ms"`
		Service     results.Latency         `json:"service_time_ms"`
		ByClass     map[string]int64        `json:"errors_by_class,omitempty"`
		Resumes     int64                   `json:"resumes"`
		Ledger      *results.LedgerSummary  `json:"ledger,omitempty"`
		GETStreams  *results.LedgerSummary  `json:"get_streams_ledger,omitempty"`
		Sessions    results.SessionSummary  `json:"sessions"`
		Interrupted bool                    `json:"interrupted"`
		StopReason  string                  `json:"stop_reason,omitempty"`
		Generator   results.Generator       `json:"generator"`
		Notes       []string                `json:"notes,omitempty"`
		NotApplied  []results.NotApplicable `json:"not_applicable,omitempty"`
	}
	dashReport struct {
		OK  bool   `json:"ok"`
		URL string `json:"url,omitempty"`
		Why string `json:"why,omitempty"`
	}
)

// Start implements results.Sink: the "start" event.
func (d *Dashboard) Start(info *results.RunInfo) {
	d.closes.start(info.Started)
	d.publish("start", dashStart{Started: info.Started, Profile: info.Profile, Target: secret.RedactURL(info.Target),
		Protocol: info.ProtocolNegotiated, Ops: info.Ops})
}

// Interval implements results.Sink: the "interval" event.
func (d *Dashboard) Interval(rec *results.IntervalRecord) {
	ev := dashInterval{IntervalLine: IntervalLineOf(rec, d.closes.span()), RemainingS: rec.Remaining.Seconds()}
	if all := rec.Interval.All; all != nil {
		if all.Service != nil && all.Service.TotalCount() > 0 {
			l := results.LatencyOf(all.Service)
			ev.Service = dashLatency{P50: l.P50, P90: l.P90, P99: l.P99}
		}
		ev.Resumes, ev.Streams, ev.Faulty = all.Resumes, all.Streams, all.Faulty
		for v := range outcome.NumVerdicts {
			if n := all.Verdicts[v]; n > 0 {
				if ev.Verdicts == nil {
					ev.Verdicts = map[string]int64{}
				}
				ev.Verdicts[v.String()] = n
			}
		}
	}
	d.publish("interval", ev)
}

// End implements results.Sink: the "end" event with the run's headline
// (a sweep sends one per step's run).
func (d *Dashboard) End(end *results.RunEnd) {
	s := end.Summary
	if s == nil {
		d.publish("end", dashEnd{Interrupted: true, StopReason: "the run stopped before its load started"})
		return
	}
	ev := dashEnd{TargetRate: s.TargetRate, Rate: s.All.Rate, Count: s.All.Count, Errors: s.All.Errors, ErrorRate: s.All.ErrorRate,
		Dropped: s.Dropped, Response: s.All.Response, Service: s.All.Service, ByClass: s.All.ErrorsByClass, Ledger: s.All.Ledger,
		Sessions: s.Sessions, Interrupted: s.Interrupted, StopReason: s.StopReason, Generator: s.Generator, Notes: s.Notes,
		NotApplied: s.NotApplicable}
	if r := s.All.Resumes; r != nil {
		ev.Resumes = r.Attempts
	}
	if g := s.GETStreams; g != nil {
		ev.GETStreams = g.Ledger
	}
	d.publish("end", ev)
}

// Step adds a sweep's finished step (the "step" event: the step as
// sweep.json has it). Call it from the sweep's OnStep.
func (d *Dashboard) Step(st results.SweepStep) {
	d.publish("step", st)
}

// Finish renders the HTML report of the results directory dir (a run, a
// sweep or a soak, as `mcpbench plot` does), serves it at /report and
// sends the "report" event: the page switches to it. With dir "" (no
// results kept) or a report that cannot be made, the event says why and
// the page keeps its final numbers. Call it once, after the results are
// written.
func (d *Dashboard) Finish(dir string) {
	var buf bytes.Buffer
	ev := dashReport{OK: true, URL: "/report"}
	if dir == "" {
		ev = dashReport{Why: "no results directory (--no-results): no HTML report"}
	} else if err := renderReport(&buf, dir); err != nil {
		ev = dashReport{Why: "no HTML report: " + err.Error()}
	}
	d.mu.Lock()
	if ev.OK {
		d.report = noFavicon(buf.Bytes())
	}
	d.fetched = make(chan struct{})
	if ev.OK {
		d.waiting = len(d.viewers)
	}
	d.checkFetched()
	d.mu.Unlock()
	d.publish("report", ev)
}

// noFavicon gives the report an empty icon, so a browser that shows it
// asks the server (gone once the report is fetched) for no /favicon.ico.
func noFavicon(html []byte) []byte {
	head := []byte("<head>")
	i := bytes.Index(html, head)
	if i < 0 {
		return html
	}
	i += len(head)
	return slices.Concat(html[:i], []byte(`<link rel="icon" href="data:,">`), html[i:])
}

// renderReport writes dir's HTML report: a sweep's, a soak's or a run's.
func renderReport(buf *bytes.Buffer, dir string) error {
	if sw, err := results.ReadSweep(dir); err == nil {
		return plots.SweepHTMLReport(buf, sw)
	}
	res, err := results.ReadResults(dir)
	if err != nil {
		return err
	}
	if sk, err := results.ReadSoak(dir); err == nil {
		return plots.SoakHTMLReport(buf, res, sk)
	}
	return plots.HTMLReport(buf, res)
}

func (d *Dashboard) serveReport(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	report := d.report
	d.mu.Unlock()
	if report == nil {
		http.Error(w, "mcpbench: the HTML report is made when the run ends", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(report)
	d.noteFetch()
}

// noteFetch counts a fetch of the report after Finish.
func (d *Dashboard) noteFetch() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waiting--
	d.checkFetched()
}

// checkFetched closes fetched once every viewer connected at Finish has
// fetched the report (mu held). A viewer that leaves instead is waited
// for up to ReportGrace: a page that switches to the report may close
// its event stream before its request for /report arrives.
func (d *Dashboard) checkFetched() {
	if d.fetched == nil {
		return
	}
	select {
	case <-d.fetched:
	default:
		if d.waiting <= 0 {
			close(d.fetched)
		}
	}
}

// serveEvents streams the events to one viewer: the history it missed
// (all of it, or after its Last-Event-ID), then each new event, until the
// viewer goes, a write stalls past writeTimeout, or Close.
func (d *Dashboard) serveEvents(w http.ResponseWriter, r *http.Request) {
	var last uint64
	if s := r.Header.Get("Last-Event-ID"); s != "" {
		last, _ = strconv.ParseUint(s, 10, 64)
	}
	v := &viewer{wake: make(chan struct{}, 1)}
	d.mu.Lock()
	backlog := d.since(last)
	d.viewers[v] = struct{}{}
	d.mu.Unlock()
	defer d.drop(v)

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(evs []dashEvent, extra string) bool {
		for _, ev := range evs {
			rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := w.Write(ev.frame); err != nil {
				return false
			}
		}
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if extra != "" {
			if _, err := w.Write([]byte(extra)); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
	w.Write([]byte("retry: 2000\n\n")) // EventSource's reconnection delay
	if !write(backlog, "") {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	var buf []dashEvent
	for {
		select {
		case <-v.wake:
			buf = v.take(buf)
			if !write(buf, "") {
				return
			}
		case <-keep.C:
			if !write(nil, ": keep-alive\n\n") {
				return
			}
		case <-d.closing:
			write(v.take(buf), "")
			return
		case <-r.Context().Done():
			return
		}
	}
}

// drop forgets a viewer that went.
func (d *Dashboard) drop(v *viewer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.viewers, v)
}

// Close stops the dashboard. With linger > 0 the server stays up that
// long (or until ctx ends) for the page, its report and late viewers;
// without, it waits up to ReportGrace for the connected pages to fetch
// the report (after Finish). Then it sends "bye" (the pages stop
// reconnecting), lets each viewer write what it has queued and stops.
// Idempotent.
func (d *Dashboard) Close(ctx context.Context, linger time.Duration) {
	d.once.Do(func() {
		d.mu.Lock()
		fetched := d.fetched
		d.mu.Unlock()
		wait, grace := (<-chan struct{})(nil), linger
		if linger <= 0 && fetched != nil {
			wait, grace = fetched, ReportGrace
		}
		if grace > 0 {
			t := time.NewTimer(grace)
			select {
			case <-wait:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		d.publish("bye", struct{}{})
		close(d.closing)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := d.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.srv.Close()
		}
		<-d.done
	})
}
