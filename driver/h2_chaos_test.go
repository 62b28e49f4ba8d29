package driver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/chaos"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/refserver"
)

// Over HTTP/2 a session's POST streams and its GET stream share one
// connection. A cut at the stream layer resets the POST stream alone
// (RST_STREAM): it is resumed, the GET stream lives on, no new connection.
// A cut at the connection layer closes the connection: the POST stream is
// resumed on a new one and the GET stream breaks too, once per cut. The
// replay ledger stays clean either way, and the chaos counts say which
// layer each cut broke.
func TestH2ChaosCutLayers(t *testing.T) {
	t.Parallel()
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{}})
	ca := caFile(t, srv)
	const calls = 4
	for _, tc := range []struct {
		name  string
		layer chaos.Layer
		http  string
	}{{"h2 stream", chaos.LayerStream, httpclient.HTTPAuto}, {"h2 conn", chaos.LayerConn, httpclient.HTTPAuto}, {"http/1.1", chaos.LayerStream, httpclient.HTTP1}} {
		layer := tc.layer
		t.Run(tc.name, func(t *testing.T) {
			plan := chaos.Plan{Faults: []chaos.Fault{{Action: chaos.ActionCut, When: chaos.When{AfterEvents: 2}, Layer: layer, Target: chaos.TargetPOST}}}
			plan.Defaults()
			if errs := plan.Validate("chaos"); len(errs) > 0 {
				t.Fatal(errs)
			}
			inj := chaos.New(plan, 1)
			// A loaded server may answer the GET stream's re-open 409 until it
			// has seen the cut connection: the stream keeps trying (MaxResumes)
			// rather than give up after a few milliseconds.
			base := &driver.Config{URL: srv.URL(), HTTP: tc.http, TLS: httpclient.TLSFiles{CAFile: ca}, DefaultRetry: time.Millisecond, MaxResumes: 1000}
			base.HTTPClient = driver.NewHTTPClient(base)
			cfg := *base
			cfg.HTTPClient = &http.Client{Transport: inj.Wrap(0, base.HTTPClient.Transport)}
			s, err := driver.NewSession(&cfg, 0)
			if err != nil {
				t.Fatal(err)
			}
			var res driver.Result
			if err := s.Initialize(chaos.WithPhase(t.Context(), chaos.PhaseSetup), &res); err != nil { // as the engine marks it: no fault
				t.Fatal(err)
			}
			if err := s.OpenStream(t.Context()); err != nil {
				t.Fatal(err)
			}
			prog := op(t, "tools/call", `{"name":"progress","arguments":{"count":4,"interval_ms":5}}`, true)
			resumes := 0
			for range calls {
				r := do(t, s, prog)
				if r.Ledger.Faulty() || r.Progress != 4 {
					t.Fatalf("ledger %v, %d progress", r.Ledger.Evidence, r.Progress)
				}
				resumes += len(r.Resumes)
			}
			wantBreaks := int64(0)
			if layer == chaos.LayerConn {
				wantBreaks = calls // the GET stream shares the connection
			}
			waitFor(t, "the GET stream's breaks", func() bool { st := s.StreamStats(); return st.Breaks >= wantBreaks && st.Open })
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			cs := inj.Stats()
			ns := httpclient.TransportStats(base.HTTPClient)
			get := s.StreamStats()
			if resumes < calls || cs.CutsRST != calls || get.Breaks != wantBreaks || get.Ledger.Faulty() {
				t.Errorf("%d resumes, %d cuts, GET stream: %d breaks (want %d), ledger %v", resumes, cs.CutsRST, get.Breaks, wantBreaks, get.Ledger.Evidence)
			}
			switch {
			case tc.http == httpclient.HTTP1: // one stream per connection: every cut closes one
				if cs.StreamResets != 0 || cs.ConnCloses != calls || ns.Protocols["http/1.1"] < 2+calls {
					t.Errorf("stream resets %d, connection closes %d, connections %v", cs.StreamResets, cs.ConnCloses, ns.Protocols)
				}
			case layer == chaos.LayerStream:
				if cs.StreamResets != calls || cs.ConnCloses != 0 || ns.Protocols["h2"] != 1 {
					t.Errorf("stream resets %d, connection closes %d, connections %v", cs.StreamResets, cs.ConnCloses, ns.Protocols)
				}
			default:
				if cs.StreamResets != 0 || cs.ConnCloses != calls || ns.Protocols["h2"] != 1+calls {
					t.Errorf("stream resets %d, connection closes %d, connections %v", cs.StreamResets, cs.ConnCloses, ns.Protocols)
				}
			}
		})
	}
}
