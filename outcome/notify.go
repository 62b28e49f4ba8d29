package outcome

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
