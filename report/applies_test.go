package report

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// appliesSummary is a run with a standalone stream, a storm that drew no
// reconnect and a feature that did not apply, under protocol proto.
func appliesSummary(proto string) *results.Summary {
	return &results.Summary{
		Tool: "mcpbench test", Target: "http://127.0.0.1:1/mcp", Protocol: proto, Profile: "p", Model: "closed", VUs: 2,
		NotApplicable: []results.NotApplicable{{Feature: "--check-deleted", Reason: "the server gave no Mcp-Session-Id"}},
		Sessions:      results.SessionSummary{Opened: 2, Closed: 2},
		GETStreams:    &results.GETStreamSummary{Opened: 2, Events: 3, Notifications: &results.NotificationSummary{ToolsListChanged: 1}},
		Chaos:         &results.ChaosSummary{Seed: 1},
		Storms:        []results.Wave{{AtS: 1}},
	}
}

// The summary names what did not apply (the verdict warns of it), a storm with no reconnect says
// so (not "first +0 ms"), and under 2026-07-28 the stream and the set-up
// take their 2026 names: subscriptions/listen and server/discover
// (initialize is not sent).
func TestTextNamesWhatDidNotApply(t *testing.T) {
	for _, c := range []struct {
		proto     string
		want, not []string
	}{
		{"2026-07-28", []string{"subscriptions/listen streams: 2 opened", "server/discover p50", "Notifications (response streams · subscriptions/listen streams)"}, []string{"GET streams:", "initialize p50"}},
		{"2025-11-25", []string{"GET streams: 2 opened", "initialize p50", "Notifications (response streams · GET streams)"}, []string{"subscriptions/listen", "server/discover"}},
	} {
		var b strings.Builder
		if err := WriteText(&b, appliesSummary(c.proto)); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		want := append(c.want, "Verdict: WARN — 1 requested feature not applicable (below)\n", "not applicable: --check-deleted, because the server gave no Mcp-Session-Id\n", "Storm at 1.0s: no reconnect attempt followed the cut")
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", c.proto, w, out)
			}
		}
		for _, n := range append(c.not, "first +0 ms") {
			if strings.Contains(out, n) {
				t.Errorf("%s: %q in\n%s", c.proto, n, out)
			}
		}
	}
}
