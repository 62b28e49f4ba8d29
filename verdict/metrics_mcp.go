package verdict

import "github.com/mcpbench/mcpbench/results"

// The metrics of the rest of MCP: cancelled calls, list pages, the
// notifications counted on every stream, and resource updates. (The
// after-cancel verdict is a replay-ledger verdict, registered with the
// others in metrics.go.) Registered after metrics.go's (file order).
func init() {
	def("cancelled", "", "calls cancelled by the client (an op's cancel option; not in count or latency)", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Cancelled) })
	def("cancelled_rate", "%", "cancelled / (completed + cancelled)", opScopes, func(v view) (float64, bool) {
		o := v.opOf()
		return 100 * o.CancelledRate, o.Count+o.Cancelled > 0
	})
	def("cancel_raced", "", "messages of cancelled calls after the cancel that do not prove the server went on: error answers, or the race the spec allows", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().CancelRaced) })
	def("pages", "", "list pages fetched (list ops follow nextCursor)", opScopes, func(v view) (float64, bool) { return cnt(v.opOf().Pages) })
	def("log_messages", "", "notifications/message received", streamScopes, func(v view) (float64, bool) {
		return v.notes(func(n *results.NotificationSummary) int64 { return n.Messages })
	})
	def("tools_list_changed", "", "notifications/tools/list_changed received", streamScopes, func(v view) (float64, bool) {
		return v.notes(func(n *results.NotificationSummary) int64 { return n.ToolsListChanged })
	})
	def("resources_updated", "", "notifications/resources/updated received", streamScopes, func(v view) (float64, bool) {
		return v.notes(func(n *results.NotificationSummary) int64 { return n.ResourcesUpdated })
	})
	sub := func(name, doc string, f func(*results.SubscriptionSummary) int64) {
		def(name, "", doc, nil, func(v view) (float64, bool) {
			if s := v.s.Subscriptions; s != nil {
				return cnt(f(s))
			}
			return 0, true
		})
	}
	sub("updates_notified", "changes of subscribed resources that were notified", func(s *results.SubscriptionSummary) int64 { return s.Notified })
	sub("updates_unnotified", "changes of subscribed resources never notified (by the session's end)", func(s *results.SubscriptionSummary) int64 { return s.Unnotified })
	sub("updates_unmatched", "resources/updated of no change of the session's own", func(s *results.SubscriptionSummary) int64 { return s.Unmatched })
	for _, q := range []struct {
		name string
		get  func(l *results.Latency) float64
	}{
		{"update_p50", func(l *results.Latency) float64 { return l.P50 }},
		{"update_p90", func(l *results.Latency) float64 { return l.P90 }},
		{"update_p99", func(l *results.Latency) float64 { return l.P99 }},
		{"update_max", func(l *results.Latency) float64 { return l.Max }},
	} {
		def(q.name, "ms", "resource update latency: the change's send to its notification", nil, func(v view) (float64, bool) {
			s := v.s.Subscriptions
			if s == nil || s.Notified == 0 {
				return 0, false
			}
			return q.get(&s.Latency), true
		})
	}
}

// notes adds a notification count over the view's streams: the op's (or
// every op's) response streams, and the GET streams for the total and
// get: scopes.
func (v view) notes(f func(*results.NotificationSummary) int64) (float64, bool) {
	var n int64
	if v.scope != ScopeGET {
		if x := v.opOf().Notifications; x != nil {
			n += f(x)
		}
	}
	if g := v.s.GETStreams; g != nil && g.Notifications != nil && (v.scope == ScopeTotal || v.scope == ScopeGET) {
		n += f(g.Notifications)
	}
	return cnt(n)
}
