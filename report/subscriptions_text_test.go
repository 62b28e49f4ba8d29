package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/results"
)

// Resource updates with no notification matched have no latency samples:
// the line says so instead of printing zeros; with samples (a correct
// server) it prints the percentiles. Notifications outside the measured
// window are named, so the line adds up with the Notifications line.
func TestSubscriptionLatencyNoSamples(t *testing.T) {
	text := func(u *results.SubscriptionSummary, get int64) string {
		s := &results.Summary{Subscriptions: u, GETStreams: &results.GETStreamSummary{Notifications: &results.NotificationSummary{ResourcesUpdated: get}}}
		var b bytes.Buffer
		p := &printer{}
		p.W = &b
		p.mcp(s)
		return b.String()
	}
	out := text(&results.SubscriptionSummary{Changes: 5, Unnotified: 5, Unmatched: 4, Outside: 1}, 5)
	if !strings.Contains(out, "0 notified, 5 never notified, 4 unmatched (no change of the session's own pending); latency from the change's send no samples (no notification matched a change)") ||
		strings.Contains(out, "p50 0.000") {
		t.Errorf("no samples:\n%s", out)
	}
	if !strings.Contains(out, "resources/updated 0 · 5") || !strings.Contains(out, "and 1 notifications/resources/updated outside the measured window") {
		t.Errorf("counts do not add up in the text:\n%s", out)
	}
	out = text(&results.SubscriptionSummary{Changes: 5, Notified: 5, Latency: results.Latency{P50: 0.151, P90: 0.37, P99: 2.135, Max: 5.579}}, 5)
	if !strings.Contains(out, "latency from the change's send p50 0.151 p90 0.370 p99 2.135 max 5.579 ms") || strings.Contains(out, "no samples") || strings.Contains(out, "outside the measured window") {
		t.Errorf("with samples:\n%s", out)
	}
}
