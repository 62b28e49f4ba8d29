package driver

import (
	"context"
	"errors"
	"net/http"

	"github.com/mcpbench/mcpbench/internal/netutil"
)

// ProbeGET sends the session's standalone GET (legacy versions) once and
// ends it at once, to learn before a run whether the server offers the
// stream the run's features need: it returns the HTTP status (405: none
// offered; 200: offered). The stream it may open is closed before
// ProbeGET returns and counts in no statistics. Call it on a session that
// has no GET stream of its own (a server that allows one stream per
// session may answer the session's next GET 409 while it notices the
// close). Errors: transport failures and RequestTimeout, as the stream's
// own opening; an error under 2026-07-28, which has no GET stream.
// Not safe to call concurrently with OpenStream on the same session.
func (s *Lane) ProbeGET(ctx context.Context) (int, error) {
	if s.modern {
		return 0, errors.New("ProbeGET: " + s.proto + " has no GET stream (subscriptions/listen instead)")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, hcancel, err := s.openStreamTimed(ctx, "", nil)
	if err != nil {
		return 0, err
	}
	defer hcancel(nil)
	if resp.StatusCode != http.StatusOK {
		netutil.Drain(resp)
	} else {
		resp.Body.Close() // an open stream: not read
	}
	return resp.StatusCode, nil
}
