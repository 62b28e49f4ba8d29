package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/profile"
	"github.com/mcpbench/mcpbench/proxy"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/mcpbench/mcpbench/results"
	"github.com/mcpbench/mcpbench/workload"
)

// through runs profile p against the reference server with the proxy
// (plan specs) between them; it returns mcpbench's summary, the proxy's
// log lines and the proxy.
func through(t *testing.T, opts refserver.Options, p *profile.Profile, specs ...string) (*results.Summary, []proxy.Line, *proxy.Proxy) {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	up, _ := url.Parse(srv.URL())
	var faults []proxy.Fault
	for _, s := range specs {
		f, err := proxy.ParseFault(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	var log bytes.Buffer
	px, err := proxy.New(proxy.Config{Upstream: up, Faults: faults, Seed: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: px}
	go hs.Serve(ln)
	p.URL = "http://" + ln.Addr().String() + "/mcp"
	pl, err := workload.Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := workload.Run(context.Background(), pl, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	px.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hs.Shutdown(ctx)
	var lines []proxy.Line
	sc := bufio.NewScanner(&log)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l proxy.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q: %v", sc.Bytes(), err)
		}
		lines = append(lines, l)
	}
	return sum, lines, px
}

// verdicts lists every non-zero verdict of a run, streams and sessions.
func verdicts(s *results.Summary) map[string]int64 {
	out := map[string]int64{}
	add := func(where string, l *results.LedgerSummary) {
		if l == nil {
			return
		}
		for v, n := range l.Verdicts {
			if n != 0 {
				out[where+v] += n
			}
		}
	}
	add("post:", s.All.Ledger)
	if g := s.GETStreams; g != nil {
		add("get:", g.Ledger)
	}
	if h := s.Sessions.Hygiene; h != nil && h.Faulty > 0 {
		out["sessions:faulty"] = h.Faulty
	}
	return out
}

func planted(lines []proxy.Line) map[string]int64 {
	out := map[string]int64{}
	for _, l := range lines {
		if l.Ev == "fault" {
			out[l.Fault]++
		}
	}
	return out
}

func progressProfile() *profile.Profile {
	return &profile.Profile{Name: "truth", VUs: 2, Duration: profile.Duration(400 * time.Millisecond), Protocol: driver.Protocol20251125,
		GracefulStop: profile.Duration(5 * time.Second),
		Resume:       profile.Resume{DefaultRetry: profile.Duration(5 * time.Millisecond)},
		Timeouts:     profile.Timeouts{StreamIdle: profile.Duration(300 * time.Millisecond)},
		Ops: []profile.OpSpec{{Method: "tools/call", Tool: "progress", Arguments: map[string]any{"count": 3, "interval_ms": 1}, Progress: true,
			Weight: weightOf(1), Expect: profile.Expect{Progress: 3}}}}
}

func weightOf(w int) *int { return &w }

// truthCase is one row of the planted-vs-judged table.
type truthCase struct {
	specs []string
	get   bool // a GET stream with numbered ticks
	// verdict mcpbench must give exactly planted[kind] times ("" none); any
	// other verdict fails the row, except also (verdict → planted kind ×
	// factor), a consequence of the fault.
	verdict, kind string
	also          map[string]int
	// recovered: no verdict, and mcpbench's accepted resumes (resumes) or
	// GET stream breaks (breaks) or errors of a class equal the planted
	// count.
	recovered string
	// faulty: each cut stream resumed by a faulty replay is one faulty
	// stream whose verdicts mix (a replay from the wrong place: lost,
	// misrouted, cross-stream): faulty streams = planted cuts.
	faulty bool
}

// Our own truth, tested through the proxy: for each fault kind, the
// verdicts mcpbench gives running against the go-sdk reference server
// through the proxy equal, exactly, the faults the proxy's log says it
// planted; with no fault every verdict is 0. Faults a correct client
// recovers from (a cut it resumes, a response it gets on the resume, a
// storm on GET streams) give no verdict: there the resumes or breaks
// mcpbench counts equal the planted count.
func TestVerdictsEqualPlantedFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference server through the proxy, ~15 s in all")
	}
	cases := []truthCase{
		{},
		{get: true},
		{specs: []string{"drop target=progress"}, verdict: "post:lost", kind: "drop"},
		{specs: []string{"drop target=get event=any at=1"}, get: true, verdict: "get:lost", kind: "drop"},
		{specs: []string{"duplicate target=progress"}, verdict: "post:duplicated", kind: "duplicate"},
		{specs: []string{"duplicate target=progress id=strip"}, verdict: "post:duplicated", kind: "duplicate"},
		{specs: []string{"duplicate target=get event=any"}, get: true, verdict: "get:duplicated", kind: "duplicate"},
		{specs: []string{"swap target=progress"}, verdict: "post:reordered", kind: "swap"},
		{specs: []string{"swap target=get event=any"}, get: true, verdict: "get:reordered", kind: "swap"},
		{specs: []string{"hold-progress"}, verdict: "post:late", kind: "hold-progress"},
		{specs: []string{"inject from=session"}, verdict: "post:misrouted", kind: "inject"},
		{specs: []string{"inject from=other"}, verdict: "post:cross-stream", kind: "inject"},
		{specs: []string{"cut before_id"}, verdict: "post:unresumable", kind: "cut"},
		{specs: []string{"keep-open"}, verdict: "post:unterminated", kind: "keep-open"},
		{specs: []string{"cut after=2", "replay mode=too-much"}, verdict: "post:duplicated", kind: "replay"},
		{specs: []string{"cut after=2", "replay mode=too-little"}, verdict: "post:lost", kind: "replay"},
		// Every resume silent: the call's last 2 progress and its response
		// never arrive (lost 3 per cut).
		{specs: []string{"cut after=2", "replay mode=silent"}, verdict: "post:silent-resume", kind: "replay", also: map[string]int{"post:lost": 3}},
		{specs: []string{"cut after=2"}, kind: "cut", recovered: "resumes"},
		{specs: []string{"cut mid=2"}, kind: "cut", recovered: "resumes"},
		{specs: []string{"drop-response"}, kind: "drop-response", recovered: "resumes"},
		{specs: []string{"cut after=3 target=get"}, get: true, kind: "cut", recovered: "breaks"},
		{specs: []string{"storm at=150ms close=fin"}, get: true, kind: "storm", recovered: "breaks"},
		{specs: []string{"status code=503 retry_after=0"}, kind: "status", recovered: "http-status"},
		{specs: []string{"status code=429 retry_after=0 p=0.2"}, kind: "status", recovered: "http-status"},
		// A 404 for a live session: mcpbench re-initializes and re-sends
		// the call once; a second 404 on the re-sent call is an error
		// (session-missing). Re-initializations + those errors = planted.
		{specs: []string{"status code=404 target=tools/call p=0.2"}, kind: "status", recovered: "reinits"},
		// Timing only: a delay on every event judges nothing.
		{specs: []string{"delay delay=1ms"}, kind: "delay"},
		{specs: []string{"cut after=2", "replay mode=wrong-place"}, kind: "replay", faulty: true},
	}
	for _, c := range cases {
		name := strings.Join(c.specs, "+")
		if name == "" {
			name = "no faults"
		}
		if c.get {
			name += " (GET stream)"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := progressProfile()
			opts := refserver.Options{}
			if c.get {
				p.GETStream = true
				opts.TickInterval = 20 * time.Millisecond
			}
			sum, lines, _ := through(t, opts, p, c.specs...)
			pl := planted(lines)
			got := verdicts(sum)
			want := map[string]int64{}
			if c.verdict != "" {
				want[c.verdict] = pl[c.kind]
			}
			for v, k := range c.also {
				want[v] = int64(k) * pl["cut"]
			}
			if c.kind != "" && pl[c.kind] == 0 {
				t.Fatalf("the proxy planted no %s (planted %v): the row checks nothing", c.kind, pl)
			}
			if c.faulty {
				if f := sum.All.Ledger.Faulty; f != pl["cut"] || f == 0 {
					t.Fatalf("faulty streams %d (verdicts %v), planted %v", f, got, pl)
				}
				t.Logf("%s: planted %v | %d faulty streams, verdicts %v", name, pl, sum.All.Ledger.Faulty, got)
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("verdicts (-planted +judged by mcpbench), planted %v:\n%s", pl, diff)
			}
			var resumes int64
			if r := sum.All.Resumes; r != nil {
				resumes = r.Accepted
			}
			t.Logf("%s: planted %v | judged %v | ops %d, accepted resumes %d, GET breaks %d, errors %v", name, pl, got, sum.All.Count, resumes, getBreaks(sum), sum.All.ErrorsByClass)
			var n int64
			switch c.recovered {
			case "resumes":
				if r := sum.All.Resumes; r != nil {
					n = r.Accepted
				}
			case "breaks":
				n = getBreaks(sum)
			case "reinits":
				n = sum.All.Reinits + sum.All.ErrorsByClass["session-missing"]
			case "":
				if c.kind == "" && len(pl) != 0 {
					t.Fatalf("planted %v with no fault in the plan", pl)
				}
				return
			default:
				n = sum.All.ErrorsByClass[c.recovered]
			}
			if n != pl[c.kind] {
				t.Fatalf("%s %d, planted %s %d (errors %v)", c.recovered, n, c.kind, pl[c.kind], sum.All.ErrorsByClass)
			}
		})
	}
}

func getBreaks(s *results.Summary) int64 {
	if s.GETStreams == nil {
		return 0
	}
	return s.GETStreams.Breaks
}
