package main

import (
	"testing"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/launch"
)

// Under the CLI the libraries' errors say the flags, byte for byte as
// they did when the libraries named the flags themselves.
func TestSettingsSaidAsFlags(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{driver.ErrRequestTimeout.Error(), "request timeout: no answer in time (--timeout)"},
		{httpclient.ErrConnectTimeout.Error(), "connect timeout (--connect-timeout)"},
		{httpclient.ErrNoHTTP2.Error(), "server does not offer HTTP/2 (ALPN h2): use --http auto or 1.1"},
		{httpclient.ErrHTTP2Only.Error(), "server offers only HTTP/2 (ALPN h2); this transport speaks HTTP/1.1 (--http auto or 2 speaks HTTP/2)"},
		{httpclient.ErrNoH2C.Error(), "server does not speak h2c (HTTP/2 with prior knowledge): use --http auto or 1.1 for http://, or https:// where it offers h2"},
		{setting.Say("raise it with %s", setting.MaxMessageBytes), "raise it with --max-message-bytes"},
		{setting.Say("give %s (and %s) ... %s", setting.OAuthClientID, setting.OAuthClientSecret, setting.Header), "give --oauth-client-id (and the secret in $MCPBENCH_OAUTH_CLIENT_SECRET) ... -H"},
		{launch.ErrThreshold.Error(), "--threshold"},
		{launch.ErrProxySecret.Error(), "--proxy (or the profile's proxy:) carries a literal password: the manifest would print it; write it as ${NAME} (e.g. http://user:${PROXY_PASSWORD}@proxy:3128) and give the pods NAME with --env-from-secret, or put the whole proxy URL in the Secret as HTTPS_PROXY"},
		{launch.CheckJUnitPath(t.TempDir() + "/no/such.xml").Error()[:8], "--junit "},
	} {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
	for n, flag := range settingFlags {
		if setting.Name(n).String() != flag {
			t.Errorf("%s says %q, want %q", n, setting.Name(n).String(), flag)
		}
	}
}
