package kubejob

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/workload"
)

// ErrProxySecret: the proxy URL (--proxy, or the profile's proxy:)
// carries a literal password or secret parameter, which a printed
// manifest would show.
var ErrProxySecret = errors.New("--proxy (or the profile's proxy:) carries a literal password: the manifest would print it; write it as ${NAME} (e.g. http://user:${PROXY_PASSWORD}@proxy:3128) and give the pods NAME with --env-from-secret, or put the whole proxy URL in the Secret as HTTPS_PROXY")

// CheckSecrets refuses credentials written out in p's URLs, headers or
// proxy (the manifest is printed): they must be ${NAME} references. The
// error names the field, never the secret.
func CheckSecrets(p *workload.Profile) error {
	for i, u := range append([]string{p.URL}, p.URLs...) {
		if secret.RedactURL(u) != u && !strings.Contains(u, "${") {
			field := "--url"
			if i > 0 {
				field = "urls[" + strconv.Itoa(i-1) + "]"
			}
			return fmt.Errorf("%s carries a literal credential: write it as ${NAME} and give the pods NAME with --env-from-secret", field)
		}
	}
	for name, v := range p.Headers {
		shown := driver.RedactHeader(http.Header{name: {v}})
		if len(shown) == 1 && strings.HasSuffix(shown[0], secret.Redacted) && !strings.Contains(v, "${") {
			return fmt.Errorf("header %s carries a literal secret: write it as ${NAME} (e.g. 'Authorization: Bearer ${TOKEN}') and give the pods NAME with --env-from-secret", name)
		}
	}
	if secret.RedactURL(p.Proxy) != p.Proxy && !strings.Contains(p.Proxy, "${") {
		return ErrProxySecret
	}
	return nil
}
