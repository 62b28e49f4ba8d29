package launch

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/internal/setting"
	"github.com/mcpbench/mcpbench/profile"
)

// ErrProxySecret: the proxy URL (--proxy, or the profile's proxy:)
// carries a literal password or secret parameter, which a printed
// manifest would show.
var ErrProxySecret error = &setting.Error{Format: "%s (or the profile's proxy:) carries a literal password: the manifest would print it; write it as ${NAME} (e.g. http://user:${PROXY_PASSWORD}@proxy:3128) and give the pods NAME with %s, or put the whole proxy URL in the Secret as HTTPS_PROXY", Names: []setting.Name{setting.Proxy, setting.K8sSecrets}}

// CheckSecrets refuses credentials written out in p's URLs, headers or
// proxy (the manifest is printed): they must be ${NAME} references. The
// error names the field, never the secret.
func CheckSecrets(p *profile.Profile) error {
	for i, u := range append([]string{p.URL}, p.URLs...) {
		if secret.LiteralInURL(u) {
			field := setting.URL.String()
			if i > 0 {
				field = "urls[" + strconv.Itoa(i-1) + "]"
			}
			return fmt.Errorf("%s carries a literal credential: write it as ${NAME} and give the pods NAME with %s", field, setting.K8sSecrets)
		}
	}
	for name, v := range p.Headers {
		shown := driver.RedactHeader(http.Header{name: {v}})
		if len(shown) == 1 && strings.HasSuffix(shown[0], secret.Redacted) && !strings.Contains(v, "${") {
			return fmt.Errorf("header %s carries a literal secret: write it as ${NAME} (e.g. 'Authorization: Bearer ${TOKEN}') and give the pods NAME with %s", name, setting.K8sSecrets)
		}
	}
	if secret.LiteralInURL(p.Proxy) {
		return ErrProxySecret
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		if v := p.Env[k]; secret.SecretParam(k) && v != "" && !strings.Contains(v, "${") {
			return fmt.Errorf("env %s (%s %s=..., or the profile's env:) carries a literal secret: write it as %s %s='${NAME}' and give the pods NAME with %s", k, setting.Env, k, setting.Env, k, setting.K8sSecrets)
		}
	}
	return nil
}

// CheckArgs refuses a literal credential in any URL among a pod's
// arguments ("--name=value", cmd/mcpbench's segmentArgs): a value with :// whose
// userinfo or secret-looking query parameter is written out, not a
// ${NAME} reference (secret.LiteralInURL). It is the net
// under CheckSecrets for the flags the profile does not carry (e.g.
// --prometheus-rw?api_key=..., --oauth-issuer): the manifest prints
// every argument. The error names the flag, never the value.
func CheckArgs(args []string) error {
	for _, a := range args {
		name, v, ok := strings.Cut(a, "=")
		if ok && strings.Contains(v, "://") && secret.LiteralInURL(v) {
			return fmt.Errorf("%s carries a literal credential in its URL: the manifest would print it; write it as ${NAME} and give the pods NAME with %s, or leave it out", name, setting.K8sSecrets)
		}
	}
	return nil
}
