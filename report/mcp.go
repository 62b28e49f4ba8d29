package report

import (
	"fmt"
	"strings"

	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/results"
)

// mcp prints the rest of MCP, each line only when there is something to
// say: list pages (when a list op followed a cursor), cancelled calls, the notifications counted, resource
// updates and their latency.
func (p *printer) mcp(s *results.Summary) {
	a := &s.All
	if paginated(s) {
		p.F("Pages: %d list pages fetched (list ops follow nextCursor to the last page; their latency covers every page)\n", a.Pages)
	}
	if a.Cancelled > 0 {
		after := int64(0)
		if a.Ledger != nil {
			after = a.Ledger.Verdicts["after-cancel"]
		}
		var per []string
		for _, o := range s.Ops {
			if o.Cancelled > 0 {
				per = append(per, fmt.Sprintf("%s %d of %d, %.2f%%", o.Name, o.Cancelled, o.Count+o.Cancelled, 100*o.CancelledRate))
			}
		}
		p.F("Cancellation: %d calls cancelled (%.2f%% of all %d calls; %s; not in count or latency); after the cancel: after-cancel %d (messages of calls whose tool ran on after the server had the cancel: to a success result, or progress written after it acknowledged the cancel), raced %d (error answers that say it stopped, or messages it may have written before it had the cancel: the race the spec allows)\n",
			a.Cancelled, 100*a.CancelledRate, a.Count+a.Cancelled, strings.Join(per, "; "), after, a.CancelRaced)
		if sv := s.Server; sv != nil && sv.Cancels > 0 {
			p.F("  the reference server received %d notifications/cancelled for calls in flight (warm-up included) and kept %d writes of cancelled calls from the client\n", sv.Cancels, sv.Muted)
		}
	}
	var post, get results.NotificationSummary
	if a.Notifications != nil {
		post = *a.Notifications
	}
	if g := s.GETStreams; g != nil && g.Notifications != nil {
		get = *g.Notifications
	}
	if post != (results.NotificationSummary{}) || get != (results.NotificationSummary{}) {
		p.F("Notifications (response streams · %s): log messages %d · %d; tools/list_changed %d · %d; resources/updated %d · %d\n",
			streamName(s), post.Messages, get.Messages, post.ToolsListChanged, get.ToolsListChanged, post.ResourcesUpdated, get.ResourcesUpdated)
	}
	if u := s.Subscriptions; u != nil {
		l := u.Latency
		lat := fmt.Sprintf("p50 %s p90 %s p99 %s max %s ms", textfmt.MS(l.P50), textfmt.MS(l.P90), textfmt.MS(l.P99), textfmt.MS(l.Max))
		if u.Notified == 0 {
			lat = "no samples (no notification matched a change)"
		}
		p.F("Resource updates: %d changes while subscribed; %d notified, %d never notified, %d unmatched (no change of the session's own pending); latency from the change's send %s\n",
			u.Changes, u.Notified, u.Unnotified, u.Unmatched, lat)
		if u.Outside > 0 {
			p.F("  and %d notifications/resources/updated outside the measured window (of changes in the warm-up, or unmatched ones that arrived before or after the window): the Notifications line counts them too, so notified + unmatched + these = its resources/updated\n", u.Outside)
		}
		if u.Unmatched > 0 {
			p.F("  note: %d notifications came with no change of the session's own pending: sessions that share a resource (or a server that notifies on its own) make attribution uncertain; give each session its own resource to time updates exactly\n", u.Unmatched)
		}
	}
}

// paginated reports whether some list op followed a nextCursor: an op
// whose pages outnumber its completed ops without error (every one of
// those fetched its first page, so more pages mean a cursor followed).
// A list that fits one page has nothing to say on a Pages line.
func paginated(s *results.Summary) bool {
	for _, o := range s.Ops {
		if o.Pages > o.Count-o.Errors {
			return true
		}
	}
	return len(s.Ops) == 0 && s.All.Pages > s.All.Count-s.All.Errors
}
