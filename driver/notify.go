package driver

import "github.com/mcpbench/mcpbench/internal/jsonrpc"

// Counting the notifications an MCP client listens for besides progress:
// log messages, list changes and resource updates, on whichever stream
// they arrive (a request's response stream or the GET stream).

// Notifications counts notifications of interest that a stream carried.
// The zero value is ready to use; not safe for concurrent use.
type Notifications struct {
	// Messages counts notifications/message (2025-11-25 logging utility:
	// log messages at or above the level set with logging/setLevel; the
	// reference server's numbered GET-stream notifications are log
	// messages too).
	Messages int
	// ToolsListChanged counts notifications/tools/list_changed (2025-11-25
	// server tools §List Changed Notification).
	ToolsListChanged int
	// ResourcesUpdated counts notifications/resources/updated (2025-11-25
	// server resources §Subscriptions), matched or not (see
	// ResourceUpdate).
	ResourcesUpdated int
}

// Add adds n to o.
func (o *Notifications) Add(n Notifications) {
	o.Messages += n.Messages
	o.ToolsListChanged += n.ToolsListChanged
	o.ResourcesUpdated += n.ResourcesUpdated
}

// Zero reports whether nothing was counted.
func (o Notifications) Zero() bool { return o == Notifications{} }

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
