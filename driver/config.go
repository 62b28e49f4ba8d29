package driver

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/netutil"
	"github.com/mcpbench/mcpbench/internal/sse"
	"github.com/mcpbench/mcpbench/outcome"
)

// Protocol versions the driver speaks. 2025-03-26 … 2025-11-25 are the
// legacy, session-based revisions of the Streamable HTTP transport
// (initialize handshake, Mcp-Session-Id, GET stream, Last-Event-ID);
// 2026-07-28 is the modern, stateless one (SEP-2575: per-request _meta,
// server/discover, Mcp-Method/Mcp-Name headers, subscriptions/listen, no
// resumption).
const (
	Protocol20250326 = "2025-03-26"
	Protocol20250618 = "2025-06-18"
	Protocol20251125 = "2025-11-25"
	Protocol20260728 = outcome.Protocol20260728
	// ProtocolAuto asks server/discover first and falls back to initialize
	// (Negotiate), as the official clients do.
	ProtocolAuto = "auto"
	// DefaultProtocol is requested in initialize when Config.Protocol is "".
	DefaultProtocol = Protocol20251125
)

// LegacyProtocols are the session-based versions, newest first.
var LegacyProtocols = []string{Protocol20251125, Protocol20250618, Protocol20250326}

// modernProtocols are the stateless versions, newest first.
var modernProtocols = []string{Protocol20260728}

// SupportedProtocols lists every version the driver speaks, newest first.
var SupportedProtocols = append(append([]string(nil), modernProtocols...), LegacyProtocols...)

// IsModern reports whether a protocol version is a modern (stateless,
// per-request _meta) one.
func IsModern(p string) bool { return outcome.IsModern(p) }

// Reconnect policies: how long a client waits before resuming a broken stream.
const (
	// ReconnectHonourRetry waits the server's last retry hint (SEP-1699: the
	// client MUST respect it), or Config.DefaultRetry when there was none.
	ReconnectHonourRetry = "honour-retry"
	// ReconnectImmediate resumes at once, ignoring hints: a misbehaving
	// client, useful to provoke reconnect storms.
	ReconnectImmediate = "immediate"
	// ReconnectBackoff waits an exponential backoff with full jitter,
	// starting from the hint (or DefaultRetry) and doubling per failed
	// attempt up to BackoffMax; never less than the hint.
	ReconnectBackoff = "backoff"
)

// Config configures sessions. Durations are wall-clock; zero values are
// documented per field. A Config must not be changed once a Session uses it;
// it is safe for concurrent use by many sessions.
type Config struct {
	// URL is the MCP endpoint, http:// or https://.
	URL string
	// Protocol is the version requested in initialize; "" means
	// DefaultProtocol. The server may negotiate another (Session.Protocol).
	Protocol string
	// HTTPClient sends every request. nil means a client from NewHTTPClient.
	// A chaos transport wraps this client's RoundTripper; the driver does
	// not know it is there.
	HTTPClient *http.Client
	// Header is added to every request (e.g. Authorization). Values of
	// sensitive headers must be shown with RedactHeader.
	Header http.Header

	// ConnectTimeout bounds dialing (used by NewHTTPClient); 0 means 5 s.
	ConnectTimeout time.Duration
	// RequestTimeout bounds each request of an operation until its answer
	// begins: the response headers of an SSE answer (a POST stream, a GET
	// stream, a resume), or the whole of a JSON answer. An open stream is
	// bounded by StreamIdleTimeout and the run's end only. 0 means 30 s;
	// negative disables.
	RequestTimeout time.Duration
	// StreamIdleTimeout breaks a response stream that completed no event
	// and no keep-alive (a comment or blank line between events) for this
	// long (the break is then handled as a cut: resumed if possible).
	// Bytes of an unfinished event do not count: an event dripped a byte
	// at a time is cut, and a large event must arrive whole within it. The standalone GET stream has none: a silent GET stream is
	// normal. 0 means 30 s; negative disables.
	StreamIdleTimeout time.Duration
	// SourceAddrs are the local addresses NewHTTPClient's connections are
	// made from, round robin (ParseSourceAddrs); nil: the kernel chooses.
	SourceAddrs []net.IP
	// Insecure skips TLS certificate verification (NewHTTPClient).
	Insecure bool
	// StdHTTP makes NewHTTPClient use net/http's Transport instead of
	// httpclient's HTTP/1.1 one (slower per request; speaks HTTP/2 over
	// TLS).
	StdHTTP bool
	// HTTP is the HTTP version (NewHTTPClient): httpclient.HTTPAuto ("":
	// our HTTP/1.1 transport for http://, ALPN for https://),
	// httpclient.HTTP1 or httpclient.HTTP2 (h2, or h2c with prior
	// knowledge for http://).
	HTTP string
	// Proxy (NewHTTPClient): "" honours HTTP_PROXY, HTTPS_PROXY and
	// NO_PROXY (never for loopback targets); "none" goes direct; an
	// http:// or https:// URL sends every request through that proxy
	// (CONNECT tunnels for https://, absolute-form requests for http://).
	// Its userinfo becomes Proxy-Authorization and is never shown.
	Proxy string
	// TLS holds the roots, client certificate and server name
	// (NewHTTPClient); files are read when the client is built.
	TLS httpclient.TLSFiles
	// OAuth, when set, authorizes requests the way the MCP authorization
	// spec (2025-11-25) describes for machine clients: client credentials
	// after a 401 challenge (see OAuthConfig). Never shown.
	OAuth *httpclient.OAuthConfig

	// Reconnect is the reconnect policy: ReconnectHonourRetry (""),
	// ReconnectImmediate or ReconnectBackoff.
	Reconnect string
	// DefaultRetry is the wait before resuming when the server sent no
	// retry hint; 0 means 1 s (browsers use about 3 s).
	DefaultRetry time.Duration
	// BackoffMax caps ReconnectBackoff waits; 0 means 30 s.
	BackoffMax time.Duration
	// MaxResumes bounds consecutive resume attempts of one stream that
	// bring no new event id; 0 means 5; negative disables resumption.
	MaxResumes int
	// MaxRetryWait caps the wait a server's retry hint (the SSE retry
	// field) imposes before a reconnect: a longer hint waits MaxRetryWait,
	// and the capped wait is counted (Result.RetryCapped). 0 means
	// DefaultMaxRetryWait (30 s); negative: no cap.
	MaxRetryWait time.Duration
	// MaxStreamResumes bounds the reconnect attempts of one response
	// stream in all, progress or not; MaxResumeRate those of one stream
	// (response or GET) in one second. Past either the stream is given up
	// with ErrResumeLimit (class resume-limit). 0 means
	// DefaultMaxStreamResumes (1000) and DefaultMaxResumeRate (100);
	// negative: no bound.
	MaxStreamResumes, MaxResumeRate int
	// ReissueUnresumable re-sends a request (with a new id) whose response
	// stream broke before any event id, instead of failing it. Under
	// 2026-07-28, where no stream is resumable and a broken stream is a
	// cancelled request, it re-issues every request whose stream broke.
	ReissueUnresumable bool
	// MaxReissues bounds re-issues of one request; 0 means 3.
	MaxReissues int
	// CheckDeleted makes Close probe a session after DELETE: the server
	// must answer 404 to it (see Session.Hygiene).
	CheckDeleted bool

	// MaxMessageBytes bounds one JSON answer (profile max_message_bytes);
	// 0 means DefaultMaxMessageBytes (64 MiB). A larger answer fails with
	// ErrResponseTooLarge naming the limit; with a Content-Length over it,
	// without reading the body.
	MaxMessageBytes int64
	// MaxEventBytes bounds one SSE event (profile max_event_bytes); 0
	// means sse.MaxEventBytes (16 MiB).
	MaxEventBytes int
	// Budget bounds the memory large messages hold across the sessions
	// that share it (see Budget). nil: a process-wide budget of
	// 2×DefaultMaxMessageBytes, or one per session when the limits need
	// more.
	Budget *Budget
	// FollowRedirects follows 307 and 308 answers to the same origin (same
	// method and body; counted in Session.Redirects). Other redirects are
	// errors that show their Location.
	FollowRedirects bool
	// ClientName and ClientVersion go into clientInfo; "" means "mcpbench"
	// and "dev".
	ClientName, ClientVersion string
	// Canned maps server→client request methods (ping, sampling/createMessage,
	// elicitation/create, roots/list) to the raw JSON result to answer with;
	// methods not listed use defaultCanned, unknown methods get -32601.
	Canned map[string]json.RawMessage
	// SettleBeside frees a lane when its response arrives: the progress
	// a request still expects (Op.ExpectProgress) that may come on another
	// stream is awaited beside the lane, and Do leaves its judgement to
	// Result.Settle (Result.Pending; late.go). Without it Do waits for it,
	// up to 250 ms after the response, holding the lane.
	SettleBeside bool
	// Seed seeds per-session randomness (backoff jitter, the calls
	// Op.Cancel draws); sessions mix in their own number so runs are
	// reproducible.
	Seed int64
	// LogLevel, under 2026-07-28, is sent in every request's _meta as
	// io.modelcontextprotocol/logLevel (SEP-2575: it replaces
	// logging/setLevel; without it a server must send no
	// notifications/message). "" sends none; ignored by legacy versions.
	LogLevel string
	// OnResourceUpdate, when set, is called for every event of a
	// session's resource subscriptions (see ResourceUpdate), from the
	// goroutine that saw it (an op's, or the GET stream's). It must be safe
	// for concurrent use and must not block.
	OnResourceUpdate func(ResourceUpdate)
}

// defaultCanned are the answers to server→client requests.
var defaultCanned = map[string]json.RawMessage{
	"ping":                   json.RawMessage(`{}`),
	"sampling/createMessage": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"mcpbench canned sample"},"model":"mcpbench","stopReason":"endTurn"}`),
	"elicitation/create":     json.RawMessage(`{"action":"decline"}`),
	"roots/list":             json.RawMessage(`{"roots":[{"uri":"file:///tmp/mcpbench","name":"mcpbench"}]}`),
}

// Validate checks the config and reports every problem at once.
func (c *Config) Validate() []error {
	var errs []error
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		errs = append(errs, errors.New("url: empty"))
	case !strings.Contains(c.URL, "://"):
		errs = append(errs, fmt.Errorf("url: %w", SchemeError(c.URL, !strings.Contains(c.URL, "@"))))
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, credentials included
		}
		errs = append(errs, fmt.Errorf("url: %v", err))
	case u.Scheme != "http" && u.Scheme != "https":
		errs = append(errs, fmt.Errorf("url: scheme %q, want http or https", u.Scheme))
	case u.Host == "":
		errs = append(errs, errors.New("url: no host"))
	}
	if c.Protocol != "" && !slices.Contains(SupportedProtocols, c.Protocol) {
		errs = append(errs, fmt.Errorf("protocol: %q not supported (want one of %s)", c.Protocol, strings.Join(SupportedProtocols, ", ")))
	}
	switch c.Reconnect {
	case "", ReconnectHonourRetry, ReconnectImmediate, ReconnectBackoff:
	default:
		errs = append(errs, fmt.Errorf("reconnect: %q, want %s, %s or %s", c.Reconnect, ReconnectHonourRetry, ReconnectImmediate, ReconnectBackoff))
	}
	for m, raw := range c.Canned {
		if !json.Valid(raw) {
			errs = append(errs, fmt.Errorf("canned[%s]: not valid JSON", m))
		}
	}
	return append(errs, c.ValidateNet()...)
}

func (c *Config) protocol() string { return cmp.Or(c.Protocol, DefaultProtocol) }

func (c *Config) requestTimeout() time.Duration {
	return netutil.DurOr(c.RequestTimeout, 30*time.Second)
}
func (c *Config) streamIdleTimeout() time.Duration {
	return netutil.DurOr(c.StreamIdleTimeout, 30*time.Second)
}
func (c *Config) defaultRetry() time.Duration { return netutil.DurOr(c.DefaultRetry, time.Second) }
func (c *Config) backoffMax() time.Duration   { return netutil.DurOr(c.BackoffMax, 30*time.Second) }

// DefaultMaxMessageBytes is the default bound on one JSON answer.
const DefaultMaxMessageBytes = 64 << 20

func (c *Config) maxMessage() int64 {
	if c.MaxMessageBytes > 0 {
		return c.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

func (c *Config) maxEvent() int {
	if c.MaxEventBytes > 0 {
		return c.MaxEventBytes
	}
	return sse.MaxEventBytes
}

// BudgetNeed is the smallest Budget that holds one message of either kind
// under c's limits, in bytes: a JSON answer of unknown size reserves twice
// the limit (chunks and the joined message), an SSE event twice its limit
// (line and data buffers).
func (c *Config) BudgetNeed() int64 { return 2 * max(c.maxMessage(), int64(c.maxEvent())) }

var defaultBudget = NewBudget(2 * DefaultMaxMessageBytes)

// budget returns the budget sessions of c share.
func (c *Config) budget() *Budget {
	switch {
	case c.Budget != nil:
		return c.Budget
	case c.BudgetNeed() <= defaultBudget.Size():
		return defaultBudget
	}
	return NewBudget(c.BudgetNeed())
}
func (c *Config) maxResumes() int {
	switch {
	case c.MaxResumes == 0:
		return 5
	case c.MaxResumes < 0:
		return 0
	}
	return c.MaxResumes
}

func (c *Config) canned(method string) (json.RawMessage, bool) {
	if r, ok := c.Canned[method]; ok {
		return r, true
	}
	r, ok := defaultCanned[method]
	return r, ok
}

// NewHTTPClient returns the httpclient.New client for cfg's network
// settings: tuned for load generation, for the HTTP version cfg asks for
// (see httpclient.HTTPAuto, HTTP1, HTTP2; or net/http's Transport with
// cfg.StdHTTP): our HTTP/1.1 transport for HTTP/1.1, keep-alive
// connections without a per-host cap, HTTP/2 with a connection per
// session; the proxy, TLS files and OAuth of cfg; the connect timeout of
// cfg. Request and stream timeouts are the driver's, not the client's.
// httpclient.TransportStats reads what its connections did. A setting that cannot be
// used (a TLS file that does not load; Config.Validate reports it first)
// makes every request fail with the error naming it.
func NewHTTPClient(cfg *Config) *http.Client {
	return httpclient.New(cfg.netOptions())
}

// sensitiveHeader reports whether a header's value must not be printed.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, s := range []string{"token", "secret", "key", "auth", "password", "session"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// RedactHeader returns "Name: value" lines of h with the values of
// sensitive headers (Authorization, Cookie, *token*, *key*, *secret* ...)
// replaced by "[redacted]", sorted by name.
func RedactHeader(h http.Header) []string {
	var out []string
	for name, vals := range h {
		for _, v := range vals {
			if sensitiveHeader(name) {
				v = "[redacted]"
			}
			out = append(out, name+": "+v)
		}
	}
	slices.Sort(out)
	return out
}

// ParseHeader parses "Name: value" (as given to --header). The error for
// a malformed one shows at most its first word, never the value:
// `header "Authorization [redacted]": want "Name: value"`.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return "", "", fmt.Errorf("header %q: want \"Name: value\"", headerShown(s))
	}
	return http.CanonicalHeaderKey(name), strings.TrimSpace(value), nil
}

// headerShown renders a malformed header for an error: its first word
// (most likely the name) and "[redacted]" for the rest; a lone word
// without a colon may be a bare token, so it is hidden too.
func headerShown(s string) string {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, " \t:")
	switch {
	case i < 0:
		return "[redacted]"
	case s[i] == ':':
		return s[:i+1] + " [redacted]"
	}
	return s[:i] + " [redacted]"
}

// SchemeError reports a URL written without its scheme
// ("127.0.0.1:8080/mcp", "localhost:8080"), which url.Parse misreads (a
// colon in the first path segment, or "localhost" taken for the scheme):
// the error says to add http://, showing the URL so written when quote
// is true (false when raw may hold credentials or expanded secrets). nil
// when raw has a scheme ("://").
func SchemeError(raw string, quote bool) error {
	if strings.Contains(raw, "://") {
		return nil
	}
	if quote {
		return fmt.Errorf("%q has no scheme: add http:// (http://%s), or https:// for TLS", raw, raw)
	}
	return errors.New("no scheme: add http:// (or https:// for TLS) before the host")
}
