package profile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/httpclient"
	"github.com/mcpbench/mcpbench/internal/secret"
)

// How the load reaches a deployment: the HTTP version, the proxy, TLS
// files, OAuth client credentials (profile fields http, proxy, tls,
// oauth).

// TLSSpec is the profile's tls section.
type TLSSpec struct {
	// CA is a PEM file of certificates trusted besides the system's.
	CA string `yaml:"ca"`
	// Cert and Key are a client certificate and its key (mutual TLS).
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// ServerName is checked against the server's certificate (and sent in
	// SNI) instead of the URL's host.
	ServerName string `yaml:"server_name"`
	// Insecure skips certificate verification.
	Insecure bool `yaml:"insecure"`
}

// OAuthSpec is the profile's oauth section: client credentials for MCP
// authorization (2025-11-25), obtained after the server's 401 challenge.
type OAuthSpec struct {
	ClientID string `yaml:"client_id"`
	// ClientSecret must be a ${NAME} reference, read from the environment
	// (default ${MCPBENCH_OAUTH_CLIENT_SECRET}): a secret written in a
	// profile or on a command line would be seen and kept.
	ClientSecret string `yaml:"client_secret"`
	// Scopes asked for (default: the challenge's, else the resource's
	// scopes_supported).
	Scopes []string `yaml:"scopes"`
	// Issuer, when set, is the only authorization server the secret may
	// be sent to.
	Issuer string `yaml:"issuer"`
}

// DefaultOAuthSecret is the variable the client secret is read from when
// the profile names none.
const DefaultOAuthSecret = "${MCPBENCH_OAUTH_CLIENT_SECRET}"

// validateNet checks http, proxy, tls and oauth, each error naming its
// field; an unset ${NAME} (looked up with lookup) is one. It sets them in
// d (netConfig).
func (p *Profile) validateNet(lookup secret.LookupFunc, d *driver.Config) []error {
	var errs problems
	switch p.HTTP {
	case "", httpclient.HTTPAuto, httpclient.HTTP1, httpclient.HTTP2:
	default:
		errs.add("http: %q, want auto, 1.1 or 2", p.HTTP)
	}
	if _, err := p.netConfig(lookup, d); err != nil {
		errs = append(errs, err...)
	}
	return errs
}

// netConfig sets the HTTP version, proxy, TLS files and OAuth of p in d,
// with ${NAME} references expanded from lookup. Errors name the field and
// never a value.
func (p *Profile) netConfig(lookup secret.LookupFunc, d *driver.Config) (*driver.Config, []error) {
	var errs []error
	d.HTTP = p.HTTP
	proxy, err := secret.Expand(p.Proxy, lookup)
	if err != nil {
		errs = append(errs, fmt.Errorf("proxy: %w", err))
	}
	d.Proxy = proxy
	d.TLS = httpclient.TLSFiles{CAFile: p.TLS.CA, CertFile: p.TLS.Cert, KeyFile: p.TLS.Key, ServerName: p.TLS.ServerName}
	d.Insecure = d.Insecure || p.TLS.Insecure
	if o := p.OAuth; o != nil {
		ref := o.ClientSecret
		if ref == "" {
			ref = DefaultOAuthSecret
		}
		sec, err := secret.Expand(ref, lookup)
		switch {
		case !strings.HasPrefix(ref, "${") || !strings.HasSuffix(ref, "}") || strings.Count(ref, "${") != 1:
			errs = append(errs, errors.New("oauth.client_secret: give ${NAME}, the environment variable holding the secret, not the secret itself (a command line or a profile is seen and kept)"))
		case err != nil:
			errs = append(errs, fmt.Errorf("oauth.client_secret: %w", err))
		case sec == "":
			errs = append(errs, fmt.Errorf("oauth.client_secret: %s is empty", ref))
		}
		if o.ClientID == "" {
			errs = append(errs, AsSetting(errors.New("oauth.client_id: empty{?oauth.client_id}")))
		}
		d.OAuth = &httpclient.OAuthConfig{ClientID: o.ClientID, ClientSecret: sec, Scopes: o.Scopes, Issuer: o.Issuer}
	}
	for _, e := range d.ValidateNet() {
		if !strings.HasPrefix(e.Error(), "oauth.") { // said above, with the flag
			errs = append(errs, e)
		}
	}
	return d, errs
}
