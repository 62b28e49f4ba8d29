package driver

import (
	"net/http"

	"github.com/mcpbench/mcpbench/httpclient"
)

// The session's use of the HTTP client (package httpclient): the client
// NewHTTPClient builds from a Config, and a session's own connections.

// ValidateNet checks the HTTP version, the proxy, the TLS files (they are
// read) and the OAuth settings of c, each error naming its field; Validate
// includes it.
func (c *Config) ValidateNet() []error {
	o := c.netOptions()
	return o.Validate()
}

// netOptions are the httpclient settings of c.
func (c *Config) netOptions() httpclient.Options {
	return httpclient.Options{HTTP: c.HTTP, StdHTTP: c.StdHTTP, Proxy: c.Proxy, TLS: c.TLS, Insecure: c.Insecure,
		ConnectTimeout: c.ConnectTimeout, SourceAddrs: c.SourceAddrs, OAuth: c.OAuth,
		Resource: c.URL, OAuthTimeout: c.requestTimeout(), OAuthHeader: http.Header{HeaderProtocolVersion: {DefaultProtocol}}}
}

// perSession returns the transport a new session uses: rt's ForSession
// when it has one (own reports a transport of the session's own, whose
// connections the session closes), else rt.
func perSession(rt http.RoundTripper) (_ http.RoundTripper, own bool) {
	fs, ok := rt.(httpclient.PerSession)
	if !ok {
		return rt, false
	}
	srt := fs.ForSession()
	return srt, srt != rt
}

// releaseConns closes the session's own connections (Close).
func (s *Lane) releaseConns() {
	if c, ok := s.rt.(interface{ CloseIdleConnections() }); ok && s.ownRT {
		c.CloseIdleConnections()
	}
}
