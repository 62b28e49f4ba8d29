package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/probe"
)

func TestProbeExitNotAnMCPEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	url := srv.URL + "/mcp"
	out, errs, code := cli(t.Context(), "probe", url)
	const want = "probe " + "%s: not an MCP endpoint: HTTP 404 to every request (server/discover, initialize 2025-11-25, 2025-06-18, 2025-03-26)"
	if code != exitFailed || !strings.Contains(errs, strings.Replace(want, "%s", url, 1)) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if strings.Contains(out, "auto picks") || !strings.Contains(out, "initialize 2025-11-25    no: HTTP 404 (text/plain)") {
		t.Errorf("stdout:\n%s", out)
	}
	out, _, code = cli(t.Context(), "probe", "--format", "json", url)
	var r probe.Report
	if code != exitFailed || json.Unmarshal([]byte(out), &r) != nil || r.MCPEndpoint || r.Recommended != "" || r.Requests != 4 {
		t.Fatalf("--json: exit %d, report %+v\n%s", code, r, out)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	if _, errs, code := cli(t.Context(), "probe", closed); code != exitFailed || !strings.Contains(errs, "(transport)") {
		t.Errorf("closed port: exit %d, stderr %q", code, errs)
	}
	for _, args := range [][]string{{"probe", "a", "b"}, {"probe", "--server-mode", "bogus"}, {"probe", "ftp://x"}} {
		if _, errs, code := cli(t.Context(), args...); code != exitUsage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, errs, exitUsage)
		}
	}
}

// A server with one planted fault is still an MCP endpoint: exit 0, and
// the last line counts the difference.
func TestProbeExitCountsDifferences(t *testing.T) {
	srv := httptest.NewServer(&mcptest.ProbeFake{Faults: mcptest.ProbeFaults{IgnoreOrigin: true}})
	defer srv.Close()
	out, errs, code := cli(t.Context(), "probe", srv.URL)
	if code != exitOK || !strings.HasSuffix(out, "\n1 of 30 checks differ from the spec.\n") {
		t.Fatalf("exit %d (%s):\n%s", code, errs, out)
	}
	for _, want := range []string{
		fmt.Sprintf("%-54s %-10s %6s %8s  %-40s %s\n", "foreign Origin (DNS rebinding)", "2025-11-25", "200", "", "403", "DIFFERS") +
			"    got: HTTP 200 (application/json) to Origin http://evil.example\n" +
			`    spec: 2025-11-25 transports §Security Warning: "If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."`,
		"retry hints  250 ms\n",
		"event ids    yes\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Every mode of the embedded server meets every check that applies to it.
func TestProbeEmbeddedModes(t *testing.T) {
	testenv.Long(t)
	t.Parallel()
	for _, mode := range []string{"stateful", "stateless", "json", "2026-07-28"} {
		out, errs, code := cli(t.Context(), "probe", "--server-mode", mode, "--format", "json")
		var r probe.Report
		if code != exitOK || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("%s: exit %d (%s)\n%s", mode, code, errs, out)
		}
		if r.Differ != 0 || r.Checked == 0 || !r.MCPEndpoint {
			t.Errorf("%s: %d of %d checks differ: %+v", mode, r.Differ, r.Checked, r.Cases)
		}
		for _, c := range r.Cases {
			if c.Result == probe.NA && c.Detail == "" {
				t.Errorf("%s: %q does not apply without saying why", mode, c.Case)
			}
		}
	}
}
