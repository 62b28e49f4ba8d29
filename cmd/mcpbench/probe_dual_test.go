package main

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/internal/mcptest"
)

// On a server that speaks both eras (here one with mcp-go's faults) the
// report says which era each row ran in, shows the streaming call of each
// era, says the legacy resumption was checked, and does not call a
// subscriptions/listen that ended at once a stream.
func TestProbePrintsEras(t *testing.T) {
	t.Parallel()
	f := &mcptest.ProbeFake{Modern: true, Faults: mcptest.ProbeFaults{DeletedAccepted: true, WellFormedAccepted: true, ListenAcksNothing: true}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	out, errs, code := cli(t.Context(), "probe", srv.URL)
	if code != exitOK || !strings.HasSuffix(out, "\n5 of 36 checks differ from the spec (1 did not apply).\n") {
		t.Fatalf("exit %d (%s):\n%s", code, errs, out)
	}
	row := func(name, proto, status, code, want, result string) string {
		return fmt.Sprintf("%-54s %-10s %6s %8s  %-40s %s\n", name, proto, status, code, want, result)
	}
	for _, want := range []string{
		"subscriptions/listen ended at once: acknowledged nothing ({})\n",
		"streaming    tools/call progress{\"count\":3} (2026-07-28) with a progressToken: SSE, 4 events, 3 progress, no event ids, response, then the end\n" +
			"             tools/call progress{\"count\":3} (2025-11-25) with a progressToken: SSE, 5 events, 3 progress, event ids, priming event, response, then the end\n",
		", in 2025-11-25 (2026-07-28 has no resumption)\n",
		"note: the server speaks 2025-11-25 (stateful) and 2026-07-28: the session checks ran in 2025-11-25, the stateless ones in 2026-07-28 (the protocol column says which)\n",
		row("check", "protocol", "status", "json-rpc", "expected", "result"),
		row("2026-07-28: Mcp-Method header does not match the body", "2026-07-28", "400", "-32020", "400 with -32020", "ok"),
		row("request with an unknown session id", "2025-11-25", "404", "", "404", "ok"),
		row("request with an unknown well-formed session id", "2025-11-25", "200", "", "404", "DIFFERS"),
		row("request on the deleted session", "2025-11-25", "200", "", "404", "DIFFERS"),
		row("resume with Last-Event-ID (exact replay)", "2025-11-25", "200", "", "the later events exactly, then the end", "ok"),
		row("2026-07-28: subscriptions/listen stream", "2026-07-28", "-", "", "SSE, acknowledged first, stays open", "n/a"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
