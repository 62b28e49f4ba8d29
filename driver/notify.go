package driver

import "github.com/mcpbench/mcpbench/internal/jsonrpc"

// Counting the notifications an MCP client listens for besides progress:
// log messages, list changes and resource updates, on whichever stream
// they arrive (a request's response stream or the GET stream).

// Notification methods counted (besides notifications/progress, which the
// ledger judges).
const (
	methodMessage          = "notifications/message"
	methodToolsListChanged = "notifications/tools/list_changed"
	methodResourcesUpdated = "notifications/resources/updated"
)

// countNotification counts m in n when it is one of the notifications of
// interest, and hands a resource update to the session's subscriptions.
// It reports whether m was one of them.
func (s *Lane) countNotification(m jsonrpc.Message, n *Notifications) bool {
	switch string(m.Method) {
	case methodMessage:
		n.Messages++
	case methodToolsListChanged:
		n.ToolsListChanged++
	case methodResourcesUpdated:
		n.ResourcesUpdated++
		s.resourceUpdated(m.Params)
	default:
		return false
	}
	return true
}
