package driver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
)

// Close ends the session: it stops the GET stream and sends DELETE with
// the session id (2025-11-25 transports §Session Management, item 5);
// 405 (the server does not allow it) and 404 (already gone) are fine. With
// Config.CheckDeleted, a deleted session is then probed: the server must
// answer 404 to its id (item 3); the verdict is in Hygiene.
func (s *Lane) Close(ctx context.Context) error {
	s.settleUpdates() // the notifications of pending changes come on the GET stream
	s.late.settled()  // so may the progress of requests answered before it (late.go)
	defer s.releaseConns()
	for _, l := range s.lanes {
		l.dropKept() // the contexts kept for the lanes' next ops
	}
	s.stopGET()
	h := s.hdr.Load()
	if h.sid == "" || s.modern {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, netutil.DurOr(s.cfg.RequestTimeout, 30*time.Second))
	defer cancel()
	resp, err := s.send(ctx, http.MethodDelete, nil, h.forGET(""), "")
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		netutil.Drain(resp)
		if s.cfg.CheckDeleted {
			s.checkDeleted(ctx, h)
		}
		return nil
	case http.StatusMethodNotAllowed, http.StatusNotFound:
		netutil.Drain(resp)
		return nil
	}
	var scratch Result
	return fmt.Errorf("DELETE: %w", s.statusError(resp, &scratch))
}
