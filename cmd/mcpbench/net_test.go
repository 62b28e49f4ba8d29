package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/results"
)

// served is a `mcpbench serve` running in the test's process.
type served struct {
	url  string
	out  *lockedBuffer
	stop func() // stops it and waits for its last words
}

// startServe runs `mcpbench serve --addr 127.0.0.1:0 args...` until the
// test ends, and returns once it listens (its pid line is printed).
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	root := newRootCmd()
	s := &served{out: &lockedBuffer{}}
	var errb lockedBuffer
	root.SetOut(s.out)
	root.SetErr(&errb)
	root.SetArgs(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(s.stop)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.out.String(), "Ctrl-C to stop") {
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s\n%s", err, s.out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %q", s.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.url = regexp.MustCompile(`https?://127\.0\.0\.1:\d+/mcp`).FindString(s.out.String())
	return s
}

// results reads a run's summary.json and run.json.
func netResults(t *testing.T, dir string) (*results.Summary, *results.RunInfo) {
	t.Helper()
	var sum results.Summary
	var info results.RunInfo
	for name, v := range map[string]any{"summary.json": &sum, "run.json": &info} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	return &sum, &info
}

// headerLine is the report's first line.
func headerLine(out string) string {
	line, _, _ := strings.Cut(out, "\n")
	return line
}

var progressTool = []string{"--tool", "progress", "--args", `{"count":3,"interval_ms":2}`, "--progress-token"}

// Against `serve --tls` (HTTP/2 offered), --http auto negotiates h2, says
// so in the header and run.json, and a run with resume chaos at either
// layer is clean: 0 errors, every cut stream resumed, ledger clean.
func TestServeTLSNegotiatesH2WithResumeChaos(t *testing.T) {
	t.Parallel()
	tlsDir := t.TempDir()
	srv := startServe(t, "--tls", "--tls-dir", tlsDir)
	if !strings.HasPrefix(srv.url, "https://") || !regexp.MustCompile(`fingerprint ([0-9A-F]{2}:){31}[0-9A-F]{2}\n`).MatchString(srv.out.String()) {
		t.Fatalf("serve said %q", srv.out.String())
	}
	for _, layer := range []string{"stream", "conn"} {
		t.Run(layer, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r")
			args := append([]string{"run", "--url", srv.url, "--ca", filepath.Join(tlsDir, "ca.pem"), "--vus", "4", "--duration", "1500ms", "--warmup", "0s", "-q",
				"--chaos", "cut after_events=2 layer=" + layer, "--retry-default", "1ms", "--out", dir}, progressTool...)
			out, errs, code := runPar(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
			if h := headerLine(out); !strings.Contains(h, "·  HTTP/2 (h2)  ·") {
				t.Errorf("header %q", h)
			}
			sum, info := netResults(t, dir)
			l := sum.All.Ledger
			if sum.All.Errors != 0 || sum.All.Count == 0 || l == nil || l.Faulty != 0 || sum.All.Resumes == nil || sum.All.Resumes.Accepted < sum.Chaos.CutsRST {
				t.Errorf("%d ops, %d errors, ledger %+v, resumes %+v, chaos %+v\n%s", sum.All.Count, sum.All.Errors, l, sum.All.Resumes, sum.Chaos, out)
			}
			c := sum.Chaos
			if layer == "stream" && (c.StreamResets != c.CutsRST || c.ConnCloses != 0 || c.CutsRST == 0) ||
				layer == "conn" && (c.ConnCloses != c.CutsRST || c.StreamResets != 0 || c.CutsRST == 0) {
				t.Errorf("chaos %+v", c)
			}
			if info.HTTPProtocol != "h2" || sum.Net == nil || sum.Net.Protocol != "h2" || sum.Net.TLS == nil || sum.Net.TLS.Handshakes == 0 {
				t.Errorf("run.json http_protocol %q; summary net %+v", info.HTTPProtocol, sum.Net)
			}
		})
	}
}

// An HTTP/2-only server works under --http auto; h2c with prior
// knowledge works against `serve --h2c`.
func TestServeHTTP2OnlyAndH2C(t *testing.T) {
	t.Parallel()
	tlsDir := t.TempDir()
	h2only := startServe(t, "--tls", "--http2-only", "--tls-dir", tlsDir)
	h2c := startServe(t, "--h2c")
	for _, tt := range []struct {
		url    string
		args   []string
		header string
	}{
		{h2only.url, []string{"--ca", filepath.Join(tlsDir, "ca.pem")}, "·  HTTP/2 (h2)  ·"},
		{h2c.url, []string{"--http", "2"}, "·  HTTP/2 (h2c)  ·"},
	} {
		out, errs, code := runPar(t, append([]string{"run", "--url", tt.url, "--vus", "2", "--duration", "1s", "--warmup", "0s", "-q", "--no-results"}, tt.args...)...)
		if code != exitOK || !strings.Contains(headerLine(out), tt.header) || !strings.Contains(out, "Errors: 0") {
			t.Errorf("%s %v: exit %d\n%s\n%s", tt.url, tt.args, code, out, errs)
		}
	}
}

// Against `serve --auth` with short-lived tokens: a client-credentials run
// gets 0 errors, the token is refreshed before its expiry (the client's
// fetches are exactly the tokens the server issued; a token a loaded
// machine delivered late is refused, counted by both sides and replaced);
// with long-lived tokens it is fetched once; a wrong secret
// fails with the authorization server's answer, the secret nowhere.
func TestServeAuthClientCredentials(t *testing.T) {
	t.Setenv("MCPBENCH_OAUTH_CLIENT_SECRET", "right-S3CRET")
	short := startServe(t, "--auth", "--auth-token-ttl", "1s")
	long := startServe(t, "--auth")
	dir := filepath.Join(t.TempDir(), "r")
	out, errs, code := run(t, "run", "--url", short.url, "--oauth-client-id", "mcpbench", "--vus", "4", "--duration", "3s", "--warmup", "0s", "-q", "--out", dir)
	if code != exitOK || !strings.Contains(out, "Errors: 0") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	sum, _ := netResults(t, dir)
	o := sum.Net.OAuth
	short.stop()
	m := regexp.MustCompile(`authorization: (\d+) tokens issued, (\d+) token requests refused; \d+ requests challenged \(401\), (\d+) of them with an expired token`).FindStringSubmatch(short.out.String())
	if m == nil {
		t.Fatalf("serve said %q", short.out.String())
	}
	issued, _ := strconv.ParseInt(m[1], 10, 64)
	expired, _ := strconv.ParseInt(m[3], 10, 64)
	// A token is sent until 50 ms before its expiry (a 1 s token's margin):
	// on a loaded machine a request sent just before that can reach the
	// server after the expiry. The server then refuses it with a 401, and
	// the client fetches a new token. Exact either way: every expired token
	// the server saw is one the client counted as rejected, and most
	// refreshes still came before the expiry, in the background.
	if o.Fetches < 3 || o.Fetches != issued || o.Refreshes != o.Fetches-1 || o.Failures != 0 || m[2] != "0" ||
		o.Rejected != expired || o.Refreshes <= o.Rejected {
		t.Errorf("client %+v; server issued %s, refused %s, expired presented %s", *o, m[1], m[2], m[3])
	}
	if !strings.Contains(out, "Authorization (OAuth client credentials, apart from op latency): "+strconv.FormatInt(o.Fetches, 10)+" token fetches") {
		t.Errorf("no authorization line:\n%s", out)
	}

	out, errs, code = run(t, "run", "--url", long.url, "--oauth-client-id", "mcpbench", "--vus", "8", "--duration", "1s", "--warmup", "0s", "-q", "--format", "json", "--no-results")
	var js results.Summary
	if err := json.Unmarshal([]byte(out), &js); code != exitOK || err != nil || js.Net.OAuth.Fetches != 1 || js.All.Errors != 0 {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errs)
	}

	t.Setenv("MCPBENCH_OAUTH_CLIENT_SECRET", "wrong-S3CRET")
	out, errs, code = run(t, "run", "--url", long.url, "--oauth-client-id", "mcpbench", "--vus", "2", "--duration", "1s", "--warmup", "0s", "-q", "--no-results")
	if code != exitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"refused the client-credentials token request", "401 Unauthorized: invalid_client (client authentication failed)"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, errs)
		}
	}
	if strings.Contains(out+errs, "S3CRET") {
		t.Errorf("a secret in the output:\n%s\n%s", out, errs)
	}
}

// Through a CONNECT proxy built with the standard library, the proxy sees
// every connection of the run, and the header line says the load went
// through it.
func TestRunThroughProxy(t *testing.T) {
	t.Parallel()
	tlsDir := t.TempDir()
	srv := startServe(t, "--tls", "--tls-dir", tlsDir)
	px, err := mcptest.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	dir := filepath.Join(t.TempDir(), "r")
	out, errs, code := runPar(t, "run", "--url", srv.url, "--ca", filepath.Join(tlsDir, "ca.pem"), "--proxy", px.URL, "--vus", "3", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	sum, info := netResults(t, dir)
	if n := sum.Net; n.Connections == 0 || n.Proxied != n.Connections || int64(px.Accepted()) != n.Connections || int64(len(px.Tunnels())) != n.Connections {
		t.Errorf("client: %d connections, %d proxied; proxy: %d accepted, %d tunnels", n.Connections, n.Proxied, px.Accepted(), len(px.Tunnels()))
	}
	want := "through proxy " + px.URL + " (--proxy): its latency is in the numbers"
	if !strings.Contains(headerLine(out), want) || info.Proxy != px.URL+" (--proxy)" {
		t.Errorf("header %q, run.json proxy %q", headerLine(out), info.Proxy)
	}
}

// Against a server that requires client certificates: with --cert/--key
// the run works; without, it fails saying a client certificate is needed.
func TestRunMutualTLS(t *testing.T) {
	t.Parallel()
	tlsDir := t.TempDir()
	srv := startServe(t, "--tls", "--mtls", "--tls-dir", tlsDir)
	base := []string{"run", "--url", srv.url, "--ca", filepath.Join(tlsDir, "ca.pem"), "--vus", "2", "--duration", "1s", "--warmup", "0s", "-q", "--no-results"}
	out, errs, code := runPar(t, append(base, "--cert", filepath.Join(tlsDir, "client.pem"), "--key", filepath.Join(tlsDir, "client-key.pem"))...)
	if code != exitOK || !strings.Contains(out, "Errors: 0") {
		t.Fatalf("with the certificate: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = runPar(t, base...)
	if code != exitFailed || !strings.Contains(out+errs, "client certificate") || !strings.Contains(out+errs, "give --cert and --key") {
		t.Fatalf("without the certificate: exit %d\n%s\n%s", code, out, errs)
	}
	_, errs, code = runPar(t, append(base, "--cert", filepath.Join(tlsDir, "client.pem"))...)
	if code != exitUsage || !strings.Contains(errs, "tls.cert: needs key") {
		t.Fatalf("--cert without --key: exit %d\n%s", code, errs)
	}
}
