package probe_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/probe"
)

// WriteText lays out a report as `mcpbench probe` prints it: the eras, the
// summary lines, a row per check with what it got, saw or why, and the
// count of checks that differ; a report of a server that is not an MCP
// endpoint stops after the eras (and its checks).
func TestWriteText(t *testing.T) {
	r := &probe.Report{URL: "http://127.0.0.1:9/mcp", MCPEndpoint: true, Requests: 7,
		Legacy: []probe.Init{
			{Requested: "2025-11-25", Negotiated: "2025-11-25", Status: 200, SessionID: true},
			{Requested: "2025-06-18", Status: 400, Error: "HTTP 400 (text/plain) without a JSON-RPC response"},
		},
		Sessions: "stateful", Answers: "sse", EventIDs: true, Priming: true, RetryHints: []int{250, 1000},
		GETStream: "offered", Resumable: "no: the replay differs", Recommended: "2025-11-25",
		Streaming: probe.Stream{Tool: "progress", Args: `{"count":3}`, Era: "2025-11-25", AnsweredAs: "sse",
			Events: 5, Progress: 3, EventIDs: true, Priming: true, RetryHints: []int{250}, Response: true, Ended: true},
		Notes: []string{"a note"},
		Cases: []probe.Case{
			{Case: "ok case", Protocol: "2025-11-25", Status: 200, Expected: "200", Result: probe.OK, OK: true, Detail: "fine", Spec: "spec A"},
			{Case: "differing case", Protocol: "2025-11-25", Status: 400, RPCCode: -32600, Expected: "404", Result: probe.Differs, Detail: "HTTP 400", Spec: "spec B"},
			{Case: "n/a case", Expected: "405", Result: probe.NA, Detail: "no stream", Spec: "spec C"},
		},
		Checked: 2, Differ: 1}
	r.Discover.Error = "server/discover: HTTP 400 without a modern JSON-RPC answer: legacy"
	row := func(name, proto, status, code, want, result string) string {
		return fmt.Sprintf("%-54s %-10s %6s %8s  %-40s %s\n", name, proto, status, code, want, result)
	}
	want := "mcpbench probe http://127.0.0.1:9/mcp (7 requests)\n\n" +
		"2026-07-28 (stateless)   no: server/discover: HTTP 400 without a modern JSON-RPC answer: legacy\n" +
		"initialize 2025-11-25    yes: negotiated 2025-11-25, Mcp-Session-Id yes\n" +
		"initialize 2025-06-18    no: HTTP 400 (text/plain) without a JSON-RPC response\n" +
		"\nsessions     stateful\nanswers      sse\n" +
		"streaming    tools/call progress{\"count\":3} (2025-11-25) with a progressToken: SSE, 5 events, 3 progress, event ids, priming event, retry 250 ms, response, then the end\n" +
		"event ids    yes\npriming      yes, but no: the replay differs\nretry hints  250 ms, 1000 ms\n" +
		"resumable    no: the replay differs\nGET stream   offered\nauto picks   2025-11-25\n" +
		"note: a note\n\n" +
		row("check", "protocol", "status", "json-rpc", "expected", "result") +
		row("ok case", "2025-11-25", "200", "", "200", "ok") + "    saw: fine\n    spec: spec A\n" +
		row("differing case", "2025-11-25", "400", "-32600", "404", "DIFFERS") + "    got: HTTP 400\n    spec: spec B\n" +
		row("n/a case", "-", "-", "", "405", "n/a") + "    why: no stream\n    spec: spec C\n" +
		"\n1 of 2 checks differ from the spec (1 did not apply).\n"
	var b strings.Builder
	if err := probe.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteText (-want +got):\n%s", diff)
	}

	// Not an MCP endpoint: the eras, then the checks, no summary.
	r.MCPEndpoint = false
	r.Cases = r.Cases[2:]
	b.Reset()
	if err := probe.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	want = "mcpbench probe http://127.0.0.1:9/mcp (7 requests)\n\n" +
		"2026-07-28 (stateless)   no: server/discover: HTTP 400 without a modern JSON-RPC answer: legacy\n" +
		"initialize 2025-11-25    yes: negotiated 2025-11-25, Mcp-Session-Id yes\n" +
		"initialize 2025-06-18    no: HTTP 400 (text/plain) without a JSON-RPC response\n" +
		row("n/a case", "-", "-", "", "405", "n/a") + "    why: no stream\n    spec: spec C\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteText, not an MCP endpoint (-want +got):\n%s", diff)
	}
}

// WriteJSON writes the report's JSON, indented, with a final newline; it
// reads back as the same report.
func TestWriteJSON(t *testing.T) {
	r := &probe.Report{URL: "http://127.0.0.1:9/mcp", MCPEndpoint: true, Requests: 3, RetryHints: []int{},
		Cases: []probe.Case{{Case: "c", Expected: "e", Result: probe.OK, OK: true, Spec: "s"}}, Checked: 1}
	var b bytes.Buffer
	if err := probe.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "{\n  \"url\": \"http://127.0.0.1:9/mcp\",\n  \"mcp_endpoint\": true,\n") || !strings.HasSuffix(out, "\n}\n") {
		t.Errorf("not indented JSON with a final newline:\n%s", out)
	}
	var back probe.Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, &back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
