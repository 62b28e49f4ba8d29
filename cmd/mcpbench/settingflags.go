package main

import "github.com/mcpbench/mcpbench/internal/setting"

// settingFlags says each library setting (internal/setting: the
// package-qualified field a library error names) as the CLI sets it: its
// flag, or where the CLI takes it from. Installed at init (below), so
// every error text the process makes or reads — stderr, summary.json's
// examples, the report, a child's stderr — says the flag, as it did
// before the libraries named their settings. One table for every library:
// a setting missing here is said by its library name.
var settingFlags = map[setting.Name]string{
	// driver.Config
	setting.RequestTimeout:    "--timeout",
	setting.StreamIdleTimeout: "--stream-idle-timeout",
	setting.MaxMessageBytes:   "--max-message-bytes",
	setting.MaxEventBytes:     "--max-event-bytes",
	setting.FollowRedirects:   "--follow-redirects",
	setting.Header:            "-H",

	// httpclient.Options, TLSFiles, OAuthConfig
	setting.HTTPVersion:       "--http",
	setting.Proxy:             "--proxy",
	setting.ConnectTimeout:    "--connect-timeout",
	setting.Insecure:          "--insecure",
	setting.CAFile:            "--ca",
	setting.CertFile:          "--cert",
	setting.KeyFile:           "--key",
	setting.TLSServerName:     "--tls-server-name",
	setting.OAuthClientID:     "--oauth-client-id",
	setting.OAuthClientSecret: "the secret in $MCPBENCH_OAUTH_CLIENT_SECRET",
}

// The hook: errors reach the terminal (and the results) from many places
// (main's stderr, the report's examples recorded inside the libraries), so
// the words are installed once for the whole process, before any error is
// made.
func init() { setting.SetNames(func(n setting.Name) string { return settingFlags[n] }) }
