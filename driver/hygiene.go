package driver

import (
	"context"
	"net/http"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/netutil"
)

// Hygiene is the verdict of the deleted-session check (Config.CheckDeleted).
type Hygiene struct {
	// Checked reports whether the check was made.
	Checked bool
	// Verdict is VerdictDeletedSessionAccepted (the server still served
	// the deleted session: 2xx), VerdictWrongMissingStatus (another status
	// than 404), or NumVerdicts when the answer was the 404 required.
	Verdict Verdict
	// Status is the HTTP status of the request on the deleted session.
	Status int
	// SessionID is the deleted session's id.
	SessionID string
}

// Faulty reports whether the check found a fault.
func (h Hygiene) Faulty() bool { return h.Checked && h.Verdict != NumVerdicts }

// checkDeleted sends a ping on a deleted session: anything but 404 is a
// hygiene fault (2xx: the session lives on; another status: the wrong
// answer for a missing session; 2025-11-25 transports §Session Management,
// items 3 and 4).
func (s *Lane) checkDeleted(ctx context.Context, h *sessHeaders) {
	body := jsonrpc.AppendRequest(s.body.buf(), s.next(), "ping", nil, nil)
	resp, err := s.send(ctx, http.MethodPost, body, h.post, "")
	if err != nil {
		return
	}
	netutil.Drain(resp)
	hy := Hygiene{Checked: true, Verdict: NumVerdicts, Status: resp.StatusCode, SessionID: h.sid}
	switch {
	case resp.StatusCode == http.StatusNotFound:
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		hy.Verdict = VerdictDeletedSessionAccepted
	default:
		hy.Verdict = VerdictWrongMissingStatus
	}
	s.hygMu.Lock()
	s.hygiene = hy
	s.hygMu.Unlock()
}

// Hygiene returns the verdict of the deleted-session check made by Close
// (Config.CheckDeleted); Checked is false when none was made.
func (s *Lane) Hygiene() Hygiene {
	s.hygMu.Lock()
	defer s.hygMu.Unlock()
	return s.hygiene
}
