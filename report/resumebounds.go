package report

import (
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// resumeBounds prints what the reconnect bounds did to r's streams: the
// server retry hints cut to the cap, and the streams given up for
// reconnecting past the bounds (class resume-limit). Nothing when neither
// happened.
func (p *printer) resumeBounds(indent string, r *results.ResumeSummary) {
	if r == nil {
		return
	}
	if r.RetryCapped > 0 {
		p.F("%sretry hint capped: %d (server asked %d ms, waited %s max)\n", indent, r.RetryCapped, r.RetryHintMaxMS, time.Duration(r.RetryCapMS)*time.Millisecond)
	}
	if r.Limited > 0 {
		p.F("%sresume bound hit: %d streams given up (class resume-limit: the server ended each one again as soon as it was resumed, too often to follow)\n", indent, r.Limited)
	}
}
