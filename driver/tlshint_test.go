package driver_test

import (
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/refserver"
)

// The hint for an untrusted certificate is said once per error, for
// every HTTP version (the dialer explained the handshake, and the
// transport explained it again: "--ca" came twice in one line).
func TestUntrustedCertificateHintOnce(t *testing.T) {
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{}})
	for _, mode := range []string{httpclient.HTTPAuto, httpclient.HTTP1, httpclient.HTTP2} {
		cfg := &driver.Config{URL: srv.URL(), HTTP: mode}
		cfg.HTTPClient = driver.NewHTTPClient(cfg)
		err := sessionOps(t, cfg, 1, 1)
		if err == nil || strings.Count(err.Error(), "give its CA with httpclient.TLSFiles.CAFile, or httpclient.Options.Insecure") != 1 || strings.Count(err.Error(), "TLS: ") != 1 {
			t.Errorf("--http %s: %v: want the CA hint once", mode, err)
		}
	}
}
