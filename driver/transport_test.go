package driver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/refserver"
)

// startRefWith starts the reference server with opts and closes it with
// the test.
func startRefWith(t *testing.T, opts refserver.Options) *refserver.Server {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// caFile writes the server's generated CA into a file for Config.TLS.
func caFile(t *testing.T, srv *refserver.Server) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(p, srv.CACertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sessionOps initializes n sessions of cfg, runs calls ops on each (echo
// and a streamed progress call, with a GET stream open), closes them, and
// returns the first error.
func sessionOps(t *testing.T, cfg *driver.Config, n, calls int) error {
	t.Helper()
	echo := op(t, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, false)
	prog := op(t, "tools/call", `{"name":"progress","arguments":{"count":3,"interval_ms":1}}`, true)
	for i := range n {
		s, err := driver.NewSession(cfg, i)
		if err != nil {
			return err
		}
		var res driver.Result
		if err := s.Initialize(t.Context(), &res); err != nil {
			return err
		}
		if err := s.OpenStream(t.Context()); err != nil {
			return err
		}
		for j := range calls {
			o := echo
			if j%2 == 1 {
				o = prog
			}
			var r driver.Result
			s.Do(t.Context(), o, &r)
			if r.Err != nil {
				return r.Err
			}
			if r.Ledger.Faulty() {
				return errors.New("faulty stream: " + strings.Join(r.Ledger.Evidence, "; "))
			}
		}
		if err := s.Close(t.Context()); err != nil {
			return err
		}
	}
	return nil
}

// With --http auto against a TLS server offering h2 and http/1.1, ALPN
// picks h2: every session has one HTTP/2 connection of its own (its POST
// streams, GET stream and DELETE share it), the first one made by the
// ALPN decision itself; later connections resume the TLS session.
func TestAutoNegotiatesH2(t *testing.T) {
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{}})
	cfg := &driver.Config{URL: srv.URL(), TLS: httpclient.TLSFiles{CAFile: caFile(t, srv)}}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	if err := sessionOps(t, cfg, 3, 4); err != nil {
		t.Fatal(err)
	}
	st := httpclient.TransportStats(cfg.HTTPClient)
	if diff := cmp.Diff(map[string]int64{"h2": 3}, st.Protocols); diff != "" {
		t.Errorf("connections by protocol (-want +got):\n%s", diff)
	}
	if st.Protocol() != "h2" || st.Connections != 3 || st.TLSHandshakes != 3 || st.TLSResumed != 2 || st.Handshake.TotalCount() != 3 {
		t.Errorf("protocol %q, %d connections, %d handshakes (%d resumed, %d timed)", st.Protocol(), st.Connections, st.TLSHandshakes, st.TLSResumed, st.Handshake.TotalCount())
	}
}

// --http auto against a server that offers only http/1.1 over TLS goes to
// our HTTP/1.1 transport, with the ALPN connection reused (no extra handshake).
func TestAutoFallsBackToH1(t *testing.T) {
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{HTTP1Only: true}})
	cfg := &driver.Config{URL: srv.URL(), TLS: httpclient.TLSFiles{CAFile: caFile(t, srv)}}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	if err := sessionOps(t, cfg, 2, 2); err != nil {
		t.Fatal(err)
	}
	st := httpclient.TransportStats(cfg.HTTPClient)
	if st.Protocol() != "http/1.1" || st.TLSHandshakes != st.Connections || st.Protocols["http/1.1"] != st.Connections {
		t.Errorf("protocol %q, %d connections, %d handshakes, by protocol %v", st.Protocol(), st.Connections, st.TLSHandshakes, st.Protocols)
	}
}

// An HTTP/2-only server works with auto and 2, and is named as such with
// 1.1.
func TestHTTP2OnlyServer(t *testing.T) {
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{HTTP2Only: true}})
	ca := caFile(t, srv)
	for _, mode := range []string{httpclient.HTTPAuto, httpclient.HTTP2} {
		cfg := &driver.Config{URL: srv.URL(), HTTP: mode, TLS: httpclient.TLSFiles{CAFile: ca}}
		if err := sessionOps(t, cfg, 1, 2); err != nil {
			t.Fatalf("--http %s: %v", mode, err)
		}
	}
	cfg := &driver.Config{URL: srv.URL(), HTTP: httpclient.HTTP1, TLS: httpclient.TLSFiles{CAFile: ca}}
	if err := sessionOps(t, cfg, 1, 1); !errors.Is(err, httpclient.ErrHTTP2Only) {
		t.Fatalf("--http 1.1 against an HTTP/2-only server: %v, want ErrHTTP2Only", err)
	}
}

// --http 2 against http:// speaks h2c with prior knowledge; against a
// server without h2c it fails instead of falling back.
func TestH2CPriorKnowledge(t *testing.T) {
	srv := startRefWith(t, refserver.Options{H2C: true})
	cfg := &driver.Config{URL: srv.URL(), HTTP: httpclient.HTTP2}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	if err := sessionOps(t, cfg, 2, 4); err != nil {
		t.Fatal(err)
	}
	st := httpclient.TransportStats(cfg.HTTPClient)
	if diff := cmp.Diff(map[string]int64{"h2c": 2}, st.Protocols); diff != "" {
		t.Errorf("connections by protocol (-want +got):\n%s", diff)
	}
	plain := startRefWith(t, refserver.Options{})
	cfg = &driver.Config{URL: plain.URL(), HTTP: httpclient.HTTP2, RequestTimeout: 5 * time.Second}
	if err := sessionOps(t, cfg, 1, 1); err == nil {
		t.Fatal("h2c against an HTTP/1.1-only server worked")
	}
}

// A server that requires client certificates: with --cert/--key the run
// works; without, the error says that a client certificate is required.
func TestMutualTLS(t *testing.T) {
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{RequireClientCert: true}})
	dir := t.TempDir()
	if _, err := srv.WriteTLSFiles(dir); err != nil {
		t.Fatal(err)
	}
	files := httpclient.TLSFiles{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "client.pem"), KeyFile: filepath.Join(dir, "client-key.pem")}
	for _, mode := range []string{httpclient.HTTPAuto, httpclient.HTTP1, httpclient.HTTP2} {
		if err := sessionOps(t, &driver.Config{URL: srv.URL(), HTTP: mode, TLS: files}, 1, 2); err != nil {
			t.Fatalf("--http %s with a client certificate: %v", mode, err)
		}
		err := sessionOps(t, &driver.Config{URL: srv.URL(), HTTP: mode, TLS: httpclient.TLSFiles{CAFile: files.CAFile}}, 1, 1)
		if err == nil || !strings.Contains(err.Error(), "client certificate") || !strings.Contains(err.Error(), "(mutual TLS: give httpclient.TLSFiles.CertFile and httpclient.TLSFiles.KeyFile)") {
			t.Errorf("--http %s without a client certificate: %v", mode, err)
		}
	}
}

// A certificate the client does not trust is named as such.
func TestUntrustedServerCertificate(t *testing.T) {
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{}})
	cfg := &driver.Config{URL: srv.URL()}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	err := sessionOps(t, cfg, 1, 1)
	if err == nil || !strings.Contains(err.Error(), "signed by an authority not trusted here (give its CA with httpclient.TLSFiles.CAFile, or httpclient.Options.Insecure)") {
		t.Fatalf("error %v", err)
	}
	if st := httpclient.TransportStats(cfg.HTTPClient); st.TLSFailed != 1 || st.TLSHandshakes != 0 || len(st.Protocols) != 0 {
		t.Errorf("%d failed handshakes, %d made, connections by protocol %v", st.TLSFailed, st.TLSHandshakes, st.Protocols)
	}
	if err := sessionOps(t, &driver.Config{URL: srv.URL(), Insecure: true}, 1, 1); err != nil {
		t.Fatalf("--insecure: %v", err)
	}
}
