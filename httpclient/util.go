package httpclient

import (
	"errors"
	"io"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/setting"
)

// ErrConnectTimeout: no TCP connection (or TLS handshake, or proxy
// tunnel) within Options.ConnectTimeout. It is context.DeadlineExceeded
// for errors.Is.
var ErrConnectTimeout error = setting.Errorf(netutil.Deadline("connect timeout"), "connect timeout", " (%s)", setting.ConnectTimeout)

// connectTimeout is ErrConnectTimeout after d: what did not finish in
// time ("no TCP connection to 127.0.0.1:8080").
func connectTimeout(what string, d time.Duration) error {
	return netutil.Timeout(ErrConnectTimeout, "connect timeout: "+what+" within "+d.String()+" ("+setting.ConnectTimeout.String()+")")
}

// isEventStream reports whether a Content-Type is text/event-stream,
// without allocating.
func isEventStream(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), "text/event-stream")
}

// errTooLarge: a metadata document exceeded readLimited's limit.
var errTooLarge = errors.New("response larger than max_message_bytes")

// readLimited reads r to its end, up to limit bytes (errTooLarge
// beyond).
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = errTooLarge
	}
	return b, err
}
