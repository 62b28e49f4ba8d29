package main

import (
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/live"
	"github.com/mcpbench/mcpbench/profile"
)

// checkURLCredentials is the one refusal of credentials written into a
// URL that mcpbench sends none from (secret.RefuseUserinfo): run, sweep,
// soak, their --processes forms and k8s-job all reach it through
// applyFlags, before anything runs, a results directory is claimed or a
// manifest is printed, so each refuses such a URL with the same error.
// The URLs are --prometheus-rw (whose credentials come from the
// environment: live.CheckRemoteWriteURL, the error NewRemoteWrite gives)
// and the OAuth issuer (--oauth-issuer or the profile's oauth.issuer: the
// authorization server's identifier, compared, never logged into). The
// target (--url) and --proxy are not refused: their userinfo is sent
// (Authorization: Basic, Proxy-Authorization) and redacted in every
// output; k8s-job refuses them as literals (kubejob.CheckSecrets).
func checkURLCredentials(p *profile.Profile, f *runFlags) error {
	if err := live.CheckRemoteWriteURL(f.live.RemoteWrite); err != nil {
		return err
	}
	if p.OAuth != nil {
		if err := secret.RefuseUserinfo("--oauth-issuer (oauth.issuer)", p.OAuth.Issuer,
			"give the authorization server's issuer URL without user:password@ (the client secret is read from the environment: --oauth-client-secret '${NAME}')"); err != nil {
			return err
		}
	}
	return nil
}
