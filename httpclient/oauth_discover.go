package httpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpbench/mcpbench/internal/netutil"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Discovery (2025-11-25 basic/authorization §Authorization Server
// Discovery): protected resource metadata, then authorization server
// metadata, then the client-credentials configuration.

// bearerChall is the Bearer challenge of a 401 (RFC 6750 §3, RFC 9728
// §5.1): its resource_metadata URL and scope, when given.
type bearerChall struct {
	resourceMetadata string
	scope            string
}

// bearerChallenge finds the Bearer challenge among WWW-Authenticate
// values (RFC 9110 §11.6.1: challenges and their auth-params, tokens or
// quoted strings, comma-separated). ok is false without one.
func bearerChallenge(values []string) (bearerChall, bool) {
	var ch bearerChall
	found := false
	for _, v := range values {
		scheme := ""
		for rest := v; ; {
			rest = strings.TrimLeft(rest, " \t,")
			if rest == "" {
				break
			}
			tok := rest[:tokenEnd(rest)]
			if tok == "" {
				break // not a token: give up on this value
			}
			after := strings.TrimLeft(rest[len(tok):], " \t")
			if !strings.HasPrefix(after, "=") || strings.HasPrefix(after, "==") {
				// A new challenge's scheme (a token68 after it is skipped
				// with the next round's token).
				scheme = strings.ToLower(tok)
				if scheme == "bearer" {
					found = true
				}
				rest = after
				continue
			}
			val, n := authParamValue(strings.TrimLeft(after[1:], " \t"))
			rest = strings.TrimLeft(after[1:], " \t")[n:]
			if scheme != "bearer" {
				continue
			}
			switch strings.ToLower(tok) {
			case "resource_metadata":
				ch.resourceMetadata = val
			case "scope":
				ch.scope = val
			}
		}
	}
	return ch, found
}

// BearerResourceMetadata returns the resource_metadata URL of the Bearer
// challenge among WWW-Authenticate values (RFC 9728 §5.1: where a client
// finds how to get a token), "" without one.
func BearerResourceMetadata(values []string) string {
	ch, _ := bearerChallenge(values)
	return ch.resourceMetadata
}

// tokenEnd returns the length of the token (RFC 9110 tchar) s starts
// with.
func tokenEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return i
		}
	}
	return len(s)
}

// authParamValue reads a token or a quoted string and returns its value
// and the bytes it took. An unquoted value runs to the next comma or
// space: servers send URLs unquoted, which a token cannot hold.
func authParamValue(s string) (string, int) {
	if !strings.HasPrefix(s, `"`) {
		n := strings.IndexAny(s, ", \t")
		if n < 0 {
			n = len(s)
		}
		return s[:n], n
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), i + 1
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), len(s)
}

// resourceMeta is the part of RFC 9728 §2 protected resource metadata the
// client uses.
type resourceMeta struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMeta is the part of RFC 8414 §2 authorization server metadata the
// client uses.
type serverMeta struct {
	Issuer           string   `json:"issuer"`
	TokenEndpoint    string   `json:"token_endpoint"`
	GrantTypes       []string `json:"grant_types_supported"`
	TokenAuthMethods []string `json:"token_endpoint_auth_methods_supported"`
}

// discover finds the authorization server of the MCP endpoint and builds
// the client-credentials configuration (resource parameter, scopes,
// client authentication method).
func (s *oauthState) discover(ctx context.Context, ch bearerChall) (*clientcredentials.Config, error) {
	prm, err := s.resourceMeta(ctx, ch)
	if err != nil {
		return nil, err
	}
	if canonical(prm.Resource) != canonical(s.target) {
		return nil, fmt.Errorf("%w: the protected resource metadata names resource %q, not this endpoint %q (RFC 9728 §3.3: not used)", ErrAuthorization, prm.Resource, canonical(s.target))
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, fmt.Errorf("%w: the protected resource metadata of %s names no authorization server", ErrAuthorization, prm.Resource)
	}
	issuer := prm.AuthorizationServers[0]
	if s.cfg.Issuer != "" && canonical(issuer) != canonical(s.cfg.Issuer) {
		return nil, fmt.Errorf("%w: the resource names authorization server %s, not the issuer given (%s): the client secret is not sent there", ErrAuthorization, issuer, s.cfg.Issuer)
	}
	if err := secureURL("authorization server", issuer); err != nil {
		return nil, err
	}
	asm, err := s.serverMeta(ctx, issuer)
	if err != nil {
		return nil, err
	}
	if err := secureURL("token endpoint", asm.TokenEndpoint); err != nil {
		return nil, err
	}
	if len(asm.GrantTypes) > 0 && !slices.Contains(asm.GrantTypes, "client_credentials") {
		return nil, fmt.Errorf("%w: the authorization server %s does not offer the client_credentials grant (grant_types_supported: %s)", ErrAuthorization, issuer, strings.Join(asm.GrantTypes, ", "))
	}
	scopes := s.cfg.Scopes
	switch {
	case len(scopes) > 0:
	case ch.scope != "":
		scopes = strings.Fields(ch.scope)
	default:
		scopes = prm.ScopesSupported
	}
	cc := &clientcredentials.Config{ClientID: s.cfg.ClientID, ClientSecret: s.cfg.ClientSecret, TokenURL: asm.TokenEndpoint,
		Scopes: scopes, EndpointParams: url.Values{"resource": {prm.Resource}}, AuthStyle: authStyle(asm.TokenAuthMethods)}
	s.mu.Lock()
	s.meta.Issuer, s.meta.TokenEndpoint, s.meta.Resource, s.meta.Scopes = issuer, asm.TokenEndpoint, prm.Resource, scopes
	s.mu.Unlock()
	return cc, nil
}

// authStyle picks how the client authenticates to the token endpoint
// (RFC 8414 §2: client_secret_basic when the server says nothing).
func authStyle(methods []string) oauth2.AuthStyle {
	switch {
	case len(methods) == 0 || slices.Contains(methods, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	case slices.Contains(methods, "client_secret_post"):
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// secureURL refuses to send the client secret over plain HTTP, except to
// a loopback address (2025-11-25 authorization §Communication Security).
func secureURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w: %s %q is not a URL", ErrAuthorization, what, raw)
	}
	if u.Scheme == "https" {
		return nil
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); u.Scheme == "http" && (h == "localhost" || (ip != nil && ip.IsLoopback())) {
		return nil
	}
	return fmt.Errorf("%w: %s %s is not https:// (only a loopback address may use http://)", ErrAuthorization, what, raw)
}

// resourceMeta fetches the protected resource metadata: the challenge's
// resource_metadata, else the well-known URIs of the endpoint (with its
// path, then at the root: RFC 9728 §3.1).
func (s *oauthState) resourceMeta(ctx context.Context, ch bearerChall) (*resourceMeta, error) {
	var urls []string
	if ch.resourceMetadata != "" {
		urls = []string{ch.resourceMetadata}
	} else if u, err := url.Parse(s.target); err == nil {
		base := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
		if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
			urls = append(urls, base+p)
		}
		urls = append(urls, base)
	}
	var tried []string
	for _, mu := range urls {
		var m resourceMeta
		found, err := s.getJSON(ctx, mu, &m)
		if err != nil {
			return nil, fmt.Errorf("%w: protected resource metadata: %w", ErrAuthorization, err)
		}
		if found {
			return &m, nil
		}
		tried = append(tried, mu)
	}
	return nil, fmt.Errorf("%w: no protected resource metadata (RFC 9728) at %s", ErrAuthorization, strings.Join(tried, ", "))
}

// serverMeta fetches the authorization server's metadata from the
// well-known URIs the MCP spec lists (RFC 8414 with path insertion, then
// OpenID Connect discovery) and checks its issuer (RFC 8414 §3.3).
func (s *oauthState) serverMeta(ctx context.Context, issuer string) (*serverMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: authorization server %q: %v", ErrAuthorization, issuer, err)
	}
	origin, p := u.Scheme+"://"+u.Host, strings.TrimSuffix(u.EscapedPath(), "/")
	urls := []string{origin + "/.well-known/oauth-authorization-server" + p, origin + "/.well-known/openid-configuration" + p}
	if p != "" {
		urls = append(urls, origin+p+"/.well-known/openid-configuration")
	}
	var tried []string
	for _, mu := range urls {
		var m serverMeta
		found, err := s.getJSON(ctx, mu, &m)
		if err != nil {
			return nil, fmt.Errorf("%w: authorization server metadata: %w", ErrAuthorization, err)
		}
		if !found {
			tried = append(tried, mu)
			continue
		}
		if canonical(m.Issuer) != canonical(issuer) {
			return nil, fmt.Errorf("%w: authorization server metadata at %s names issuer %q, not %q (RFC 8414 §3.3: not used)", ErrAuthorization, mu, m.Issuer, issuer)
		}
		if m.TokenEndpoint == "" {
			return nil, fmt.Errorf("%w: authorization server metadata at %s has no token_endpoint", ErrAuthorization, mu)
		}
		return &m, nil
	}
	return nil, fmt.Errorf("%w: no authorization server metadata (RFC 8414) at %s", ErrAuthorization, strings.Join(tried, ", "))
}

// getJSON GETs a metadata document into v. found is false on 404 (the
// next well-known URI is tried); other statuses and bad JSON are errors
// naming the URL.
func (s *oauthState) getJSON(ctx context.Context, u string, v any) (found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	for k, vs := range s.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	b, rerr := readLimited(resp.Body, 1<<20)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Errorf("GET %s: HTTP %s: %s", u, resp.Status, netutil.FirstLine(b))
	case rerr != nil:
		return false, fmt.Errorf("GET %s: %w", u, rerr)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("GET %s: not a JSON metadata document: %v", u, err)
	}
	return true, nil
}
