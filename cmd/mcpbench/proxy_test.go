package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/refserver"
)

// A bad --fault or --upstream is a usage error that names the word at
// fault and why; every bad --fault is reported at once.
func TestProxyFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--upstream", "127.0.0.1:8080"}, []string{`--upstream "127.0.0.1:8080"`, "http://127.0.0.1:8080/mcp"}},
		{[]string{"--upstream", "http://127.0.0.1:1/mcp", "--fault", "cut after=x", "--fault", "drop p=2"},
			[]string{`--fault: fault "cut after=x": after=x: invalid syntax`, `--fault: fault "drop p=2": p=2: want a probability in (0, 1]`}},
		{[]string{"--upstream", "http://127.0.0.1:1/mcp", "--allow-origin", "http://app.example/x"}, []string{`--allow-origin "http://app.example/x": "http://app.example/x" is not scheme://host[:port]`}},
		{[]string{"--upstream", "http://127.0.0.1:1/mcp", "--fault", "explode"}, []string{`unknown kind "explode"; want one of drop, duplicate`}},
		{[]string{"--upstream", "http://127.0.0.1:1/mcp", "--fault", "cut"}, []string{"cut needs exactly one of after=N, mid=N, before_id (got 0)"}},
		{[]string{"--upstream", "http://127.0.0.1:1/mcp", "--fault", "replay mode=sideways"}, []string{"mode=sideways: want too-much, too-little, wrong-place or silent"}},
		{[]string{"--upstream", "http://127.0.0.1:1/mcp", "--fault", "status code=404 retry_after=1"}, []string{"retry_after=1: only 429 and 503 carry Retry-After"}},
		{[]string{"--upstream", "http://127.0.0.1:1/mcp", "--fault", "drop target=sideways"}, []string{"target=sideways: want post, get, resume, any, progress, response or a JSON-RPC method"}},
	} {
		_, errs, code := runPar(t, append([]string{"proxy"}, tt.args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (usage)\n%s", tt.args, code, exitUsage, errs)
		}
		for _, w := range tt.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: error %q lacks %q", tt.args, errs, w)
			}
		}
	}
}

func TestProxyWarning(t *testing.T) {
	for addr, warn := range map[string]bool{"127.0.0.1:9090": false, "[::1]:9090": false, "localhost:9090": false, "0.0.0.0:9090": true, "[::]:9090": true, ":9090": true, "192.0.2.1:9090": true} {
		if got := launch.ProxyWarning(addr); (got != "") != warn || (warn && !strings.Contains(got, "not a loopback address")) {
			t.Errorf("%s: warning %q, want one: %v", addr, got, warn)
		}
	}
}

var reListening = regexp.MustCompile(`listening on (http://\S+)`)

// The command end to end: it listens (loopback by default, no warning),
// forwards to the upstream, plants the fault, and on Ctrl-C prints its
// verdicts and writes the log and the summary beside it.
func TestProxyCommand(t *testing.T) {
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	log := filepath.Join(dir, "p.jsonl")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- cliTo(ctx, &out, &errb, "proxy", "--listen", "127.0.0.1:0", "--upstream", srv.URL(), "--fault", "status code=503 retry_after=3 target=initialize", "--log", log)
	}()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		if m := reListening.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("proxy ended (%d): %s\n%s", code, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy not listening after 10 s: %s", out.String())
		}
		time.Sleep(5 * time.Millisecond) // polling its output, bounded by the deadline
	}
	req, _ := http.NewRequest("POST", base, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("status %d, Retry-After %q: want the planted 503 with Retry-After 3", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if errb.String() != "" {
		t.Fatalf("stderr on loopback: %q", errb.String())
	}
	if !strings.Contains(out.String(), "Planted: status 1") || !strings.Contains(out.String(), "summary "+filepath.Join(dir, "p.summary.json")) {
		t.Fatalf("output:\n%s", out.String())
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"ev":"request","stream":1,"kind":"post","http":"POST","proto":"HTTP/1.1","method":"initialize","rid":"1"`) || !strings.Contains(string(b), `"fault":"status"`) {
		t.Fatalf("log:\n%s", b)
	}
	var sum struct {
		Planted map[string]int `json:"planted"`
	}
	if b, err = os.ReadFile(filepath.Join(dir, "p.summary.json")); err != nil || json.Unmarshal(b, &sum) != nil || sum.Planted["status"] != 1 {
		t.Fatalf("summary %s (%v)", b, err)
	}
}

// Listening off loopback, the proxy warns on stderr (only started and
// stopped: no traffic is sent).
func TestProxyWarnsOffLoopback(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- cliTo(ctx, &out, &errb, "proxy", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/mcp")
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "Ctrl-C to stop"); {
		select {
		case code := <-done:
			t.Fatalf("proxy ended (%d): %s\n%s", code, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy not listening after 10 s: %s", out.String())
		}
		time.Sleep(5 * time.Millisecond) // polling its output, bounded by the deadline
	}
	cancel()
	<-done
	if w := errb.String(); !strings.Contains(w, "WARNING: proxy listening on ") || !strings.Contains(w, "not a loopback address") || !strings.Contains(w, "--listen 127.0.0.1:PORT") {
		t.Fatalf("stderr %q: want the off-loopback warning", w)
	}
}

func TestUpstreamWarning(t *testing.T) {
	for raw, warn := range map[string]bool{"http://127.0.0.1:8080/mcp": false, "http://[::1]:8080/mcp": false, "http://localhost/mcp": false,
		"https://127.1.2.3/mcp": false, "http://192.0.2.1:8080/mcp": true, "https://mcp.example/mcp": true, "http://0.0.0.0:8080/mcp": true} {
		u, _ := url.Parse(raw)
		got := launch.UpstreamWarning(u)
		if (got != "") != warn || (warn && !strings.Contains(got, "WARNING [proxy-upstream-remote]: --upstream "+raw+" is not a loopback address")) {
			t.Errorf("%s: warning %q, want one: %v", raw, got, warn)
		}
	}
	u, _ := url.Parse("https://user:s3cret@mcp.example/mcp")
	if got := launch.UpstreamWarning(u); strings.Contains(got, "s3cret") || !strings.Contains(got, "https://user:xxxxx@mcp.example/mcp") {
		t.Errorf("warning %q: want the password redacted", got)
	}
}

// startProxyCmd runs the proxy command with args (on 127.0.0.1:0) until
// the test ends; it returns the address it listens at and its stderr.
func startProxyCmd(t *testing.T, args ...string) (base string, errb *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var out lockedBuffer
	errb = new(lockedBuffer)
	done := make(chan int, 1)
	go func() {
		done <- cliTo(ctx, &out, errb, append([]string{"proxy", "--listen", "127.0.0.1:0"}, args...)...)
	}()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(10 * time.Second); ; {
		if m := reListening.FindStringSubmatch(out.String()); m != nil {
			return m[1], errb
		}
		select {
		case code := <-done:
			done <- code
			t.Fatalf("proxy ended (%d): %s\n%s", code, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy not listening after 10 s: %s", out.String())
		}
		time.Sleep(5 * time.Millisecond) // polling its output, bounded by the deadline
	}
}

// An --upstream off loopback gets the warning once (no traffic is sent:
// 192.0.2.1 is TEST-NET-1).
func TestProxyWarnsUpstreamOffLoopback(t *testing.T) {
	_, errb := startProxyCmd(t, "--upstream", "http://192.0.2.1:1/mcp")
	if w := errb.String(); strings.Count(w, "WARNING [proxy-upstream-remote]: --upstream http://192.0.2.1:1/mcp is not a loopback address") != 1 {
		t.Fatalf("stderr %q: want the upstream warning once", w)
	}
}

// The command's listener refuses a foreign Host and a foreign Origin
// (403, nothing forwarded), serves its own and the --allow-origin ones.
func TestProxyCommandRebinding(t *testing.T) {
	var reached atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.WriteString(w, "upstream data")
	}))
	defer up.Close()
	base, _ := startProxyCmd(t, "--upstream", up.URL+"/mcp", "--allow-origin", "https://app.example")
	for i, tc := range []struct {
		host, origin string
		code         int
		reached      int64
	}{
		{"", "", 200, 1},
		{"", "https://app.example", 200, 2},
		{"evil.example", "", 403, 2},
		{"", "http://evil.example", 403, 2},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base, strings.NewReader("{}"))
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code || reached.Load() != tc.reached {
			t.Fatalf("case %d (Host %q Origin %q): %d, upstream reached %d; want %d, %d", i, tc.host, tc.origin, resp.StatusCode, reached.Load(), tc.code, tc.reached)
		}
	}
}
