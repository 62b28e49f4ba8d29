package main

import "github.com/mcpbench/mcpbench/internal/setting"

// settingFlags says each library setting as the CLI sets it: its flag, or
// where the CLI takes it from. Keys are the names library errors use:
// internal/setting's (the package-qualified field, "driver.Config.
// RequestTimeout") and workload's YAML paths ("abort_on_fail"); one table
// for both, as their names never collide. Installed at init (below), so
// every error text the process makes or reads — stderr, summary.json's
// examples, the report, a child's stderr — says the flag, as it did
// before the libraries named their settings. One table for every library:
// a setting missing here is said by its library name.
var settingFlags = map[string]string{
	// driver.Config
	string(setting.RequestTimeout):    "--timeout",
	string(setting.StreamIdleTimeout): "--stream-idle-timeout",
	string(setting.MaxMessageBytes):   "--max-message-bytes",
	string(setting.MaxEventBytes):     "--max-event-bytes",
	string(setting.FollowRedirects):   "--follow-redirects",
	string(setting.Header):            "-H",

	// httpclient.Options, TLSFiles, OAuthConfig
	string(setting.HTTPVersion):       "--http",
	string(setting.Proxy):             "--proxy",
	string(setting.ConnectTimeout):    "--connect-timeout",
	string(setting.Insecure):          "--insecure",
	string(setting.CAFile):            "--ca",
	string(setting.CertFile):          "--cert",
	string(setting.KeyFile):           "--key",
	string(setting.TLSServerName):     "--tls-server-name",
	string(setting.OAuthClientID):     "--oauth-client-id",
	string(setting.OAuthClientSecret): "the secret in $MCPBENCH_OAUTH_CLIENT_SECRET",
}

// The hook: errors reach the terminal (and the results) from many places
// (main's stderr, the report's examples recorded inside the libraries), so
// the words are installed once for the whole process, before any error is
// made.
func init() { setting.SetNames(func(n setting.Name) string { return settingFlags[string(n)] }) }
