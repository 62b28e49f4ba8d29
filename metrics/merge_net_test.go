package metrics

import (
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/results"
)

// writeNetSeg writes a one-second segment run whose summary has net (and
// whose summary.hlog has the histograms behind it, hs), as a run writes
// it.
func writeNetSeg(t *testing.T, dir string, start time.Time, sg *results.SegmentInfo, net *results.NetSummary, hs map[string]*results.Hist) {
	t.Helper()
	rec := NewRecorder(segOps, 1)
	rec.Begin(start, start.Add(time.Second))
	w, err := results.NewResultsDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	info := &results.RunInfo{Tool: "mcpbench", Target: "https://x/mcp", Profile: "p", Started: start, Ops: segOps, Segment: sg}
	w.Start(info)
	for i := range 10 {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		rec.Shard(0).Record(&driver.Result{Op: i % 2, Intended: at, Start: at, FirstByte: at.Add(time.Millisecond), End: at.Add(2 * time.Millisecond), Class: driver.ClassOK, Status: 200})
	}
	iv := rec.Tick(start.Add(time.Second), time.Time{})
	w.Interval(&results.IntervalRecord{Interval: iv, Row: results.RowOf(iv), Phase: results.PhaseMeasure})
	ops, all := rec.Summarize(1)
	sum := &results.Summary{Tool: "mcpbench test", Target: "https://x/mcp", Profile: "p", Model: "closed", Started: start, DurationS: 1,
		Ops: ops, All: all, Segment: sg, VUs: 1, Sessions: rec.Sessions(), Net: net}
	h := rec.Histograms()
	for tag, x := range hs {
		h[tag] = x
	}
	w.End(&results.RunEnd{Info: info, Summary: sum, Histograms: h})
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
}

// A merged result (merge, --processes, k8s-job) keeps the net block:
// HTTP version, connections by protocol, proxy, TLS and OAuth counts
// summed, and the handshake and token-fetch times from one histogram of
// every segment's samples (never averaged). Segments without one merge
// into none.
func TestMergeKeepsNet(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	hist := func(us ...int64) *hdr.Histogram {
		h := results.NewHistogram()
		for _, v := range us {
			h.RecordValue(v)
		}
		return h
	}
	truthHS, truthFetch := hist(), hist()
	var dirs []string
	for i, p := range []struct {
		hs, fetch []int64
		protos    map[string]int64
	}{
		{[]int64{1000, 2000}, []int64{30_000}, map[string]int64{"h2": 2}},
		{[]int64{9000, 50_000, 70_000}, []int64{10_000, 90_000}, map[string]int64{"h2": 2, "http/1.1": 1}},
	} {
		hs, fetch := hist(p.hs...), hist(p.fetch...)
		truthHS.Merge(hs)
		truthFetch.Merge(fetch)
		net := &results.NetSummary{HTTP: "auto", Protocol: "h2", Transport: "net/http", Connections: int64(len(p.hs)), ByProtocol: p.protos,
			Proxy: "http://127.0.0.1:3128 (--proxy)", Proxied: int64(len(p.hs)), ProxyFailures: int64(i),
			TLS: &results.TLSSummary{Handshakes: int64(len(p.hs)), Resumed: 1, Versions: map[string]int64{"TLS 1.3": int64(len(p.hs))}, Handshake: results.LatencyOf(hs)},
			OAuth: &results.OAuthSummary{Issuer: "https://as", TokenEndpoint: "https://as/token", Resource: "https://x/mcp", Scopes: []string{"mcp"},
				Fetches: int64(len(p.fetch)), Refreshes: int64(len(p.fetch) - 1), Challenges: 1, Rejected: int64(i), Fetch: results.LatencyOf(fetch)}}
		d := filepath.Join(dir, string(rune('a'+i)))
		writeNetSeg(t, d, t0, seg(i, 2, "0,1/2,1"), net, results.NetHistograms(&httpclient.NetStats{Handshake: hs, OAuth: &httpclient.OAuthStats{Fetch: fetch}}))
		dirs = append(dirs, d)
	}
	m, err := results.MergeResults(dirs)
	if err != nil {
		t.Fatal(err)
	}
	want := &results.NetSummary{HTTP: "auto", Protocol: "h2 (+ http/1.1)", Transport: "net/http", Connections: 5, ByProtocol: map[string]int64{"h2": 4, "http/1.1": 1},
		Proxy: "http://127.0.0.1:3128 (--proxy)", Proxied: 5, ProxyFailures: 1,
		TLS: &results.TLSSummary{Handshakes: 5, Resumed: 2, Versions: map[string]int64{"TLS 1.3": 5}, Handshake: results.LatencyOf(truthHS)},
		OAuth: &results.OAuthSummary{Issuer: "https://as", TokenEndpoint: "https://as/token", Resource: "https://x/mcp", Scopes: []string{"mcp"},
			Fetches: 3, Refreshes: 1, Challenges: 2, Rejected: 1, Fetch: results.LatencyOf(truthFetch)}}
	if d := cmp.Diff(want, m.Summary.Net); d != "" {
		t.Fatalf("merged net block (-want +got):\n%s", d)
	}
	// Written and read back, as report and compare read it.
	out := filepath.Join(dir, "merged")
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	res, err := results.ReadResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, res.Summary.Net); d != "" {
		t.Errorf("merged summary.json's net block (-want +got):\n%s", d)
	}

	// Segments without a net block (an embedded run's transport) merge into none.
	var plain []string
	for i := range 2 {
		d := filepath.Join(dir, "plain", string(rune('a'+i)))
		writeNetSeg(t, d, t0, seg(i, 2, "0,1/2,1"), nil, nil)
		plain = append(plain, d)
	}
	if m, err := results.MergeResults(plain); err != nil || m.Summary.Net != nil {
		t.Fatalf("merged %+v (err %v): want no net block", m.Summary.Net, err)
	}
}
