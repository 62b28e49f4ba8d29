package driver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mcpbench/mcpbench/internal/jsonrpc"
	"github.com/mcpbench/mcpbench/internal/netutil"
)

func (s *Lane) initialize(ctx context.Context, res *Result) error {
	if s.modern {
		return s.discover(ctx, res)
	}
	proto := s.cfg.protocol()
	params := make([]byte, 0, 256)
	params = append(params, `{"protocolVersion":"`...)
	params = append(params, proto...)
	params = append(params, `","capabilities":{"roots":{"listChanged":false},"sampling":{}`...)
	if proto != Protocol20250326 {
		params = append(params, `,"elicitation":{}`...)
	}
	params = append(params, `},"clientInfo":{"name":`...)
	params = jsonrpc.AppendString(params, cmp.Or(s.cfg.ClientName, "mcpbench"))
	params = append(params, `,"version":`...)
	params = jsonrpc.AppendString(params, cmp.Or(s.cfg.ClientVersion, "dev"))
	params = append(params, "}}"...)

	c := call{id: s.next(), init: true}
	body := jsonrpc.AppendRequest(s.body.buf(), c.id, "initialize", params, nil)
	// No session id and no version header yet; the session's headers stay
	// as they are for the other lanes until the new id is known.
	if err := s.exchange(ctx, body, &c, res, s.buildHeaders("", "").post); err != nil {
		return err
	}
	if c.err != nil {
		return c.err
	}
	v := jsonrpc.Field(c.result, "protocolVersion")
	if len(v) < 2 || v[0] != '"' {
		return fmt.Errorf("%w: initialize result has no protocolVersion", ErrBadResponse)
	}
	got := string(v[1 : len(v)-1])
	if !slices.Contains(SupportedProtocols, got) {
		return fmt.Errorf("%w: server chose %q", ErrUnsupportedVersion, got)
	}
	s.proto = got
	s.setHeaders(c.sid, got)

	// notifications/initialized: 202 expected (2025-11-25 transports
	// §Sending Messages, item 4); some servers answer 200/204.
	body = jsonrpc.AppendNotification(s.body.buf(), "notifications/initialized", nil)
	s.arm()
	resp, err := s.send(ctx, http.MethodPost, body, s.hdr.Load().post, "")
	res.BytesOut += int64(len(body))
	if err != nil {
		return s.ctxErr(ctx, err)
	}
	res.Status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notifications/initialized: %w", s.statusError(resp, res))
	}
	res.BytesIn += netutil.Drain(resp)
	return nil
}

// checkSessionID flags a session id outside visible ASCII; one the driver
// cannot send back (control characters) is an error.
func (s *Lane) checkSessionID(sid string) error {
	for i := 0; i < len(sid); i++ {
		if c := sid[i]; c < 0x21 || c > 0x7e {
			s.badSID = true
			if c < 0x20 || c == 0x7f {
				return fmt.Errorf("%w: Mcp-Session-Id holds control characters (it MUST be visible ASCII)", ErrBadResponse)
			}
		}
	}
	return nil
}

// discover starts a modern session: server/discover (2026-07-28 server
// §discover) must list the session's protocol version.
func (s *Lane) discover(ctx context.Context, res *Result) error {
	c := call{id: s.next(), init: true}
	body := jsonrpc.AppendRequest(s.body.buf(), c.id, "server/discover", nil, s.metaModern)
	h := s.hdr.Load().post.Clone()
	h[HeaderMethod] = []string{"server/discover"}
	if err := s.exchange(ctx, body, &c, res, h); err != nil {
		return err
	}
	if c.err != nil {
		return c.err
	}
	var d struct {
		Supported []string `json:"supportedVersions"`
	}
	if json.Unmarshal(c.result, &d) != nil || !slices.Contains(d.Supported, s.proto) {
		return fmt.Errorf("%w: server/discover lists %v, not %s", ErrUnsupportedVersion, d.Supported, s.proto)
	}
	return nil
}

// Initialize runs the initialization phase (2025-11-25 lifecycle):
// initialize → (Mcp-Session-Id) → notifications/initialized. It records the
// exchange in res (times, status, bytes) and returns the error also stored
// in res.Err. ErrUnsupportedVersion when the server picks a version this
// driver does not speak; ErrBadResponse when the session id holds control
// characters (it could not be sent back).
func (s *Lane) Initialize(ctx context.Context, res *Result) error {
	res.Start = time.Now()
	if res.Intended.IsZero() {
		res.Intended = res.Start
	}
	ctx, cancel := s.opContext(ctx)
	s.opCtx = ctx
	err := s.initialize(ctx, res)
	s.endOp(cancel, ctx, false)
	s.opCtx = nil
	res.End = time.Now()
	if err != nil {
		res.fail(err)
	}
	return err
}
