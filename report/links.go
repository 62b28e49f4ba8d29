package report

import "github.com/mcpbench/mcpbench/results"

// linkResumes prints how many resume attempts went to a stream's
// rel="stream" URL (SEP-1335) rather than the MCP endpoint; nothing when
// none did.
func (p *printer) linkResumes(indent string, r *results.ResumeSummary) {
	if r != nil && r.ViaLink > 0 {
		p.F("%s%d of these resume attempts went to the stream's rel=\"stream\" URL (SEP-1335), not the MCP endpoint\n", indent, r.ViaLink)
	}
}

// linkLedger prints the streams resumed through their rel="stream" URL and
// the links refused for naming another origin; nothing when neither.
func (p *printer) linkLedger(indent string, l *results.LedgerSummary) {
	if l != nil && (l.ViaLink > 0 || l.LinksRefused > 0) {
		p.F("%sstream links (SEP-1335): %d streams resumed through their rel=\"stream\" URL; %d links refused (another origin: never followed)\n", indent, l.ViaLink, l.LinksRefused)
	}
}
