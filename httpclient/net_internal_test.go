package httpclient

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Which requests the proxy settings send through a proxy: the
// environment honours NO_PROXY and never proxies loopback targets; --proxy
// proxies everything; none nothing.
func TestProxyChoice(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://envproxy:3128")
	t.Setenv("HTTP_PROXY", "http://plainproxy:3128")
	t.Setenv("NO_PROXY", "skip.test")
	env, err := parseProxy("")
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := parseProxy("http://u:pw@fixed:8080")
	if err != nil {
		t.Fatal(err)
	}
	none, err := parseProxy(proxyNone)
	if err != nil || none != nil {
		t.Fatalf("none: %v %v", none, err)
	}
	tests := []struct {
		p            *proxySetting
		scheme, host string
		want         string
	}{
		{env, "https", "mcp.test:443", "http://envproxy:3128"},
		{env, "http", "mcp.test:80", "http://plainproxy:3128"},
		{env, "https", "skip.test:443", ""},
		{env, "https", "127.0.0.1:8443", ""},
		{env, "https", "localhost:8443", ""},
		{fixed, "https", "127.0.0.1:8443", "http://u:pw@fixed:8080"},
		{fixed, "http", "skip.test:80", "http://u:pw@fixed:8080"},
		{none, "https", "mcp.test:443", ""},
	}
	for _, tt := range tests {
		u, err := tt.p.forTarget(tt.scheme, tt.host)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != tt.want {
			t.Errorf("%s://%s: %q, %v; want %q", tt.scheme, tt.host, got, err, tt.want)
		}
	}
	if a := proxyAuth(fixed.fixed); a != "Basic dTpwdw==" {
		t.Errorf("Proxy-Authorization %q", a)
	}
	for _, bad := range []string{"ftp://u:SECRETPW@h:1", "http://u:SECRETPW@", "socks5://h:1"} {
		_, err := parseProxy(bad)
		if err == nil || strings.Contains(err.Error(), "SECRETPW") || !strings.HasPrefix(err.Error(), "proxy: ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The Bearer challenge's parameters are found among other challenges and
// parameters, quoted or not, with escapes.
func TestBearerChallenge(t *testing.T) {
	tests := []struct {
		values []string
		want   bearerChall
		ok     bool
	}{
		{[]string{`Bearer resource_metadata="https://a/.well-known/oauth-protected-resource/mcp"`}, bearerChall{resourceMetadata: "https://a/.well-known/oauth-protected-resource/mcp"}, true},
		{[]string{`Basic realm="x", Bearer error="invalid_token", scope="a b", resource_metadata="https://m"`}, bearerChall{resourceMetadata: "https://m", scope: "a b"}, true},
		{[]string{`Basic realm="x"`, `bearer Resource_Metadata=https://t`}, bearerChall{resourceMetadata: "https://t"}, true},
		{[]string{`Bearer realm="a \"quoted\" b", scope=read`}, bearerChall{scope: "read"}, true},
		{[]string{`Bearer`}, bearerChall{}, true},
		{[]string{`Basic realm="Bearer resource_metadata=x"`}, bearerChall{}, false},
		{[]string{`Negotiate abc==, Basic realm=x`}, bearerChall{}, false},
		{nil, bearerChall{}, false},
	}
	for _, tt := range tests {
		got, ok := bearerChallenge(tt.values)
		if ok != tt.ok || got != tt.want {
			t.Errorf("%q: %+v %v, want %+v %v", tt.values, got, ok, tt.want, tt.ok)
		}
	}
}

// Only https:// or a loopback http:// authorization server gets the
// client secret.
func TestSecureURL(t *testing.T) {
	var got []string
	for _, u := range []string{"https://as.example", "http://127.0.0.1:9/x", "http://localhost:8080", "http://[::1]:1", "http://as.example", "ftp://x", "nope"} {
		if secureURL("authorization server", u) == nil {
			got = append(got, u)
		}
	}
	if diff := cmp.Diff([]string{"https://as.example", "http://127.0.0.1:9/x", "http://localhost:8080", "http://[::1]:1"}, got); diff != "" {
		t.Error(diff)
	}
}
