// Package httpclient is mcpbench's HTTP client: the transports, the dialer
// under them and OAuth above them, built for load generation. It knows
// nothing of MCP: the session package (driver) maps its configuration onto
// Options, and the chaos layer wraps the client's RoundTripper and bodies
// through the interfaces of interfaces.go. It must not import driver,
// chaos or the MCP codecs (internal/sse, internal/jsonrpc); a test checks.
//
// # Transports
//
// New picks the transport by Options.HTTP: ours (HTTP/1.1) for http:// and
// wherever ALPN picks http/1.1; net/http's HTTP/2 where ALPN picks h2
// (HTTPAuto), for every https:// request (HTTP2), or as h2c with prior
// knowledge for http:// (HTTP2). Under HTTP/2 each session has a
// connection of its own (PerSession), which its POST streams, GET stream
// and answers share, as one client's would. Every connection goes through
// one dialer: the proxy (Options.Proxy; CONNECT tunnels, absolute-form
// requests for http:// over HTTP/1.1), TLS (Options.TLS: CA, client
// certificate, server name; sessions resumed), with connections, proxied
// connections, TLS handshakes (timed) and resumptions counted apart from
// the requests' latency (TransportStats). With Options.OAuth, a 401 Bearer
// challenge starts the MCP authorization flow for machine clients
// (client credentials); the token is shared by the client's requests and
// refreshed before it expires.
//
// # Errors
//
// Failures wrap a sentinel where the caller can act on them:
// ErrConnClosedAfterWrite (a request that reached the socket is never
// re-sent), ErrHTTP2Only, ErrNoHTTP2, ErrNoH2C, ErrGoAway (with its code
// and whether the server took the request), ErrConnectTimeout (a
// context.DeadlineExceeded), ErrProxy and ErrAuthorization. TLS failures
// say what to do (TLSFiles.CAFile, CertFile and KeyFile, ServerName,
// Options.Insecure). Texts name settings by their fields through
// internal/setting (ErrNoHTTP2, ErrHTTP2Only, ErrNoH2C and
// ErrConnectTimeout are *setting.Error), said as the front end names
// them: mcpbench's CLI says its flags (cmd/mcpbench/settingflags.go).
//
// # Files
//
//   - transport.go: Options, New, the transport New builds for each HTTP
//     version (netTransport), the per-session transports, NetStats and
//     TransportStats.
//   - interfaces.go: the optional interfaces the layers above use
//     (PerSession, Multiplexed, ConnCutter, ConnResetter, StormCutReporter,
//     BytesBody).
//   - h1.go: our HTTP/1.1 transport and RoundTrip, request writing, which
//     failures are re-sent; h1_conn.go: dialing (TLS, ALPN, HTTP/2-only
//     servers), the idle pool and its liveness peek; h1_read.go: the
//     response head (status line, header, 1xx, body framing); h1_body.go:
//     the body (Content-Length, chunked, trailers) and connection reuse.
//   - h2.go: HTTP/2 from net/http (a ClientConn per session; h2c with prior
//     knowledge), the ALPN choice of HTTPAuto, the response body the chaos
//     layer cuts by stream or by connection; h2c.go: telling a server
//     without h2c apart, and GOAWAY said in our words.
//   - dial.go: the dialer under every transport (proxies: CONNECT tunnels
//     and absolute-form requests; TLS roots, client certificates, server
//     name, session resumption; counts and handshake times; TLS errors
//     explained); source.go: source addresses (ParseSourceAddrs).
//   - oauth.go: MCP authorization with client credentials (the token the
//     requests share, refresh before expiry, counts); oauth_discover.go:
//     the 401 challenge, protected resource and authorization server
//     metadata.
//   - util.go: the connect timeout's error, and small body helpers.
//   - rawio_linux.go: plain TCP reads, writes and the liveness peek as raw
//     system calls within the netpoller (no entersyscall, which wakes the
//     runtime's sysmon thread after every idle spell: ~3 fewer sleeps and
//     wakes per request at 2000/s); rawio_other.go: elsewhere, none.
package httpclient
