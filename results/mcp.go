package results

import (
	"github.com/mcpbench/mcpbench/internal/textfmt"
	"github.com/mcpbench/mcpbench/outcome"
)

// The tallies of the rest of MCP: list pages, cancelled calls, the
// notifications counted on every stream (log messages, list changes,
// resource updates) and the latency of resource updates.

// MCPTally is what an op's results add up to beyond latency and errors.
type MCPTally struct {
	Pages       int64 // list pages fetched (1 + cursors followed)
	Cancelled   int64 // calls cancelled (Op.Cancel): not in latency, not errors
	CancelRaced int64 // messages after a cancel was sent that do not prove the server went on
	Notes       NotificationSummary
	TailWaits   int64 // ops whose response stream was judged unterminated after the caller waited on its tail
	TailWaitUS  int64 // the time those callers waited (µs)
}

func (m *MCPTally) add(b *MCPTally) {
	m.Pages += b.Pages
	m.Cancelled += b.Cancelled
	m.CancelRaced += b.CancelRaced
	m.Notes.add(b.Notes)
	m.TailWaits += b.TailWaits
	m.TailWaitUS += b.TailWaitUS
}

// NotificationSummary counts notifications of interest: log messages
// (notifications/message), tool-list changes
// (notifications/tools/list_changed) and resource updates
// (notifications/resources/updated).
type NotificationSummary struct {
	Messages         int64 `json:"log_messages"`
	ToolsListChanged int64 `json:"tools_list_changed"`
	ResourcesUpdated int64 `json:"resources_updated"`
}

func (n *NotificationSummary) add(b NotificationSummary) {
	n.Messages += b.Messages
	n.ToolsListChanged += b.ToolsListChanged
	n.ResourcesUpdated += b.ResourcesUpdated
}

// OrNil returns n, or nil when it counted nothing (left out of JSON).
func (n NotificationSummary) OrNil() *NotificationSummary {
	if n == (NotificationSummary{}) {
		return nil
	}
	return &n
}

// MCPSummary is an op's summary of the rest of MCP (embedded in
// OpSummary: its fields are the op's).
type MCPSummary struct {
	// Pages counts the list pages fetched: a list op follows nextCursor
	// to the last page, and its latency covers every page.
	Pages int64 `json:"pages,omitempty"`
	// Cancelled counts the calls cancelled (the op's cancel option): they
	// are neither completed ops nor errors, and stay out of latency.
	Cancelled int64 `json:"cancelled,omitempty"`
	// CancelledRate is cancelled / (completed + cancelled), 0..1.
	CancelledRate float64 `json:"cancelled_rate,omitempty"`
	// CancelRaced counts messages of cancelled calls that arrived after
	// the cancel was sent and do not prove the server went on: an error
	// answer (it stopped), or what it may have written before it had the
	// cancel (the race the spec allows; the rest are the after-cancel
	// verdict, driver/cancel.go).
	CancelRaced int64 `json:"cancel_raced,omitempty"`
	// Notifications counts the notifications the op's response streams
	// carried.
	Notifications *NotificationSummary `json:"notifications,omitempty"`
	// TailWaits counts the ops whose response stream stayed open after
	// the response until it was judged unterminated (2 s); TailWaitS is
	// the time their callers (VUs) waited on those tails, in seconds: not
	// latency, but time in which the VU started no op, so it lowers the
	// throughput of a closed model.
	TailWaits int64   `json:"tail_waits,omitempty"`
	TailWaitS float64 `json:"tail_wait_s,omitempty"`
}

func mcpSummaryOf(o *OpStats) MCPSummary {
	m := MCPSummary{Pages: o.MCP.Pages, Cancelled: o.MCP.Cancelled, CancelRaced: o.MCP.CancelRaced, Notifications: o.MCP.Notes.OrNil(),
		TailWaits: o.MCP.TailWaits, TailWaitS: textfmt.Round3(float64(o.MCP.TailWaitUS) / 1e6)}
	if n := o.Count + o.MCP.Cancelled; n > 0 {
		m.CancelledRate = float64(o.MCP.Cancelled) / float64(n)
	}
	return m
}

// SubscriptionSummary describes resource subscriptions: changes the
// sessions made to resources they were subscribed to, and the
// notifications/resources/updated that followed. Latency runs from the
// change's send to its notification's arrival (ms). Counted by the time
// of the change (unmatched ones by their arrival) within the measured
// window. Sessions that share a resource cannot tell their changes'
// notifications apart: give each its own.
type SubscriptionSummary struct {
	// Changes counts changes sent while subscribed (a notification is due).
	Changes int64 `json:"changes"`
	// Notified counts notifications matched with a pending change (each
	// with the session's oldest pending change of its resource).
	Notified int64 `json:"notified"`
	// Unnotified counts changes that got no notification by the end of
	// their session (after a grace of 500 ms): lost, or coalesced by the
	// server into one notification for several changes.
	Unnotified int64 `json:"unnotified"`
	// Unmatched counts notifications when the session had no pending
	// change of the resource (another session's change: fan-out; or the
	// server's own).
	Unmatched int64 `json:"unmatched"`
	// Outside counts notifications/resources/updated that belong outside
	// the measured window (a change sent in the warm-up or an unmatched
	// notification that arrived then or after the window): the
	// notification counts of the streams (NotificationSummary, GET streams
	// over the sessions' whole life) include them, so Notified + Unmatched
	// + Outside is every notification the sessions received.
	Outside int64   `json:"outside_window,omitempty"`
	Latency Latency `json:"latency_ms"`
}

// AddNotifications adds the notifications a stream counted to n.
func (n *NotificationSummary) AddNotifications(b outcome.Notifications) {
	n.Messages += int64(b.Messages)
	n.ToolsListChanged += int64(b.ToolsListChanged)
	n.ResourcesUpdated += int64(b.ResourcesUpdated)
}
