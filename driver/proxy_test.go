package driver_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

func startProxy(t *testing.T) *mcptest.Proxy {
	t.Helper()
	p, err := mcptest.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// Through --proxy, every connection of every transport goes to the proxy:
// the proxy accepted exactly the connections the client opened, each a
// CONNECT tunnel to the server (https://, h2c) or a connection carrying
// absolute-form requests (http:// over HTTP/1.1), and the client counts
// them all as proxied.
func TestProxySeesEveryConnection(t *testing.T) {
	tlsSrv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{}})
	plain := startRefWith(t, refserver.Options{H2C: true})
	ca := caFile(t, tlsSrv)
	tests := []struct {
		name    string
		srv     *refserver.Server
		http    string
		std     bool
		tunnels bool // CONNECT (else absolute form)
		proto   string
	}{
		{"https auto (h2)", tlsSrv, httpclient.HTTPAuto, false, true, "h2"},
		{"https 1.1", tlsSrv, httpclient.HTTP1, false, true, "http/1.1"},
		{"https 2", tlsSrv, httpclient.HTTP2, false, true, "h2"},
		{"https net/http", tlsSrv, httpclient.HTTPAuto, true, true, "h2"},
		{"http auto (absolute form)", plain, httpclient.HTTPAuto, false, false, "http/1.1"},
		{"h2c", plain, httpclient.HTTP2, false, true, "h2c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			px := startProxy(t)
			cfg := &driver.Config{URL: tt.srv.URL(), HTTP: tt.http, StdHTTP: tt.std, Proxy: px.URL, TLS: httpclient.TLSFiles{CAFile: ca}}
			cfg.HTTPClient = driver.NewHTTPClient(cfg)
			if err := sessionOps(t, cfg, 2, 3); err != nil {
				t.Fatal(err)
			}
			cfg.HTTPClient.CloseIdleConnections()
			st := httpclient.TransportStats(cfg.HTTPClient)
			if st.Connections == 0 || int64(px.Accepted()) != st.Connections || st.Proxied != st.Connections {
				t.Errorf("client opened %d connections (%d proxied); the proxy accepted %d", st.Connections, st.Proxied, px.Accepted())
			}
			tunnels, forwards := px.Tunnels(), px.Forwards()
			if tt.tunnels {
				if int64(len(tunnels)) != st.Connections || len(forwards) != 0 {
					t.Errorf("%d tunnels and %d forwards for %d connections", len(tunnels), len(forwards), st.Connections)
				}
				for _, h := range tunnels {
					if h != tt.srv.Addr() {
						t.Errorf("tunnel to %s, want %s", h, tt.srv.Addr())
					}
				}
			} else {
				if len(tunnels) != 0 || len(forwards) < 2*5 {
					t.Errorf("%d tunnels and %d forwards", len(tunnels), len(forwards))
				}
				for _, u := range forwards {
					if !strings.HasPrefix(u, tt.srv.URL()) {
						t.Errorf("forwarded %s", u)
					}
				}
			}
			if st.Protocol() != tt.proto {
				t.Errorf("protocol %q, want %q", st.Protocol(), tt.proto)
			}
			if want := px.URL + " (httpclient.Options.Proxy)"; len(st.Proxies) != 1 || st.Proxies[px.URL] != "httpclient.Options.Proxy" {
				t.Errorf("proxies %v, want %s", st.Proxies, want)
			}
		})
	}
}

// HTTPS_PROXY applies to a non-loopback name (here one the test proxy
// maps to the loopback server), and the URL's credentials go as
// Proxy-Authorization and never into an error or the stats.
func TestProxyFromEnvironmentWithCredentials(t *testing.T) {
	srv := startRefWith(t, refserver.Options{TLS: &refserver.TLSOptions{Hosts: []string{"mcp.example.test"}}})
	_, port, _ := net.SplitHostPort(srv.Addr())
	px := startProxy(t)
	px.SetAuth("u", "PROXYSECRET")
	px.Map["mcp.example.test:"+port] = srv.Addr()
	t.Setenv("HTTPS_PROXY", strings.Replace(px.URL, "http://", "http://u:PROXYSECRET@", 1))
	t.Setenv("NO_PROXY", "")
	cfg := &driver.Config{URL: "https://mcp.example.test:" + port + "/mcp", TLS: httpclient.TLSFiles{CAFile: caFile(t, srv)}}
	cfg.HTTPClient = driver.NewHTTPClient(cfg)
	if err := sessionOps(t, cfg, 1, 2); err != nil {
		t.Fatal(err)
	}
	st := httpclient.TransportStats(cfg.HTTPClient)
	if int64(px.Accepted()) != st.Connections || st.Proxied != st.Connections || px.Refused() != 0 {
		t.Errorf("client opened %d connections (%d proxied); the proxy accepted %d, refused %d", st.Connections, st.Proxied, px.Accepted(), px.Refused())
	}
	for u, src := range st.Proxies {
		if strings.Contains(u, "PROXYSECRET") || src != "environment" {
			t.Errorf("proxy shown as %q from %q", u, src)
		}
	}
	// A wrong password: the proxy's 407, named, without the password.
	t.Setenv("HTTPS_PROXY", strings.Replace(px.URL, "http://", "http://u:WRONGSECRET@", 1))
	bad := &driver.Config{URL: cfg.URL, TLS: cfg.TLS}
	bad.HTTPClient = driver.NewHTTPClient(bad)
	err := sessionOps(t, bad, 1, 1)
	if !errors.Is(err, httpclient.ErrProxy) || !strings.Contains(err.Error(), "407 Proxy Authentication Required") || strings.Contains(err.Error(), "WRONGSECRET") {
		t.Fatalf("error %v", err)
	}
	if st := httpclient.TransportStats(bad.HTTPClient); st.ProxyFailures != 1 || st.Proxied != 0 || px.Refused() != 1 {
		t.Errorf("%d proxy failures, %d proxied; the proxy refused %d", st.ProxyFailures, st.Proxied, px.Refused())
	}
}
