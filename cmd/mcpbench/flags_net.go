package main

import (
	"github.com/spf13/pflag"
)

// netFlags reach a deployment: the HTTP version, the proxy, TLS files and
// OAuth client credentials. Each overrides the profile field of the same
// meaning when given (runFlags.profileFlags).
type netFlags struct {
	http, proxy, ca, cert, key, serverName string
	oauthID, oauthSecret, oauthIssuer      string
	oauthScopes                            []string
}

// registerTransport defines the flags every command that sends requests
// has (run, sweep, soak, probe).
func (n *netFlags) registerTransport(fl *pflag.FlagSet) {
	fl.StringVar(&n.http, "http", "", "HTTP version: auto (default: mcpbench's HTTP/1.1 for http://, ALPN for https:// — h2 when offered), 1.1, or 2 (h2; h2c with prior knowledge for http://)")
	fl.StringVar(&n.proxy, "proxy", "", "proxy URL (http://[user:pass@]host:port; CONNECT for https://) or none; default: HTTP_PROXY, HTTPS_PROXY, NO_PROXY (never for loopback targets)")
	fl.StringVar(&n.ca, "ca", "", "PEM file of CA certificates to trust besides the system's")
	fl.StringVar(&n.cert, "cert", "", "client certificate (PEM) for mutual TLS; with --key")
	fl.StringVar(&n.key, "key", "", "private key (PEM) of --cert")
	fl.StringVar(&n.serverName, "tls-server-name", "", "name to check the server's certificate against (and send in SNI) instead of the URL's host")
}

// register defines the transport flags and the OAuth ones (run, sweep,
// soak).
func (n *netFlags) register(fl *pflag.FlagSet) {
	n.registerTransport(fl)
	fl.StringVar(&n.oauthID, "oauth-client-id", "", "OAuth client id: after the server's 401 challenge, get a token with the client-credentials grant (MCP authorization) and send it as a bearer token")
	fl.StringVar(&n.oauthSecret, "oauth-client-secret", "", "the client secret as ${NAME}: the environment variable holding it (default ${MCPBENCH_OAUTH_CLIENT_SECRET}); a secret written here is refused")
	fl.StringArrayVar(&n.oauthScopes, "oauth-scope", nil, "scope to ask for (repeatable; default: the challenge's, else the resource's scopes_supported)")
	fl.StringVar(&n.oauthIssuer, "oauth-issuer", "", "the only authorization server the client secret may be sent to (default: the one the resource names)")
}
