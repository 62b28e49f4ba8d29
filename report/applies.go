package report

import (
	"github.com/mcpbench/mcpbench/outcome"
	"github.com/mcpbench/mcpbench/results"
)

// streamName is what the report calls the session's standalone stream:
// the GET stream, or under 2026-07-28 (which has none) the
// subscriptions/listen stream that replaces it.
func streamName(s *results.Summary) string {
	if outcome.IsModern(s.Protocol) {
		return "subscriptions/listen streams"
	}
	return "GET streams"
}

// setupName is what sets a session up: initialize, or under 2026-07-28
// (which has no handshake) server/discover.
func setupName(s *results.Summary) string {
	if outcome.IsModern(s.Protocol) {
		return "server/discover"
	}
	return "initialize"
}
