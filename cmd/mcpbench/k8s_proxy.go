package main

import (
	"errors"
	"strings"

	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/workload"
)

// errProxySecret: the proxy URL (--proxy, or the profile's proxy:) carries
// a literal password or secret parameter, which a printed manifest would
// show.
var errProxySecret = errors.New("--proxy (or the profile's proxy:) carries a literal password: the manifest would print it; write it as ${NAME} (e.g. http://user:${PROXY_PASSWORD}@proxy:3128) and give the pods NAME with --env-from-secret, or put the whole proxy URL in the Secret as HTTPS_PROXY")

// literalProxySecret refuses a proxy URL with a literal credential for a
// manifest, as literalSecrets does for the URLs and headers.
func literalProxySecret(p *workload.Profile) error {
	if secret.RedactURL(p.Proxy) != p.Proxy && !strings.Contains(p.Proxy, "${") {
		return errProxySecret
	}
	return nil
}
