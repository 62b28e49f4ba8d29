package profile

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
)

// Secrets in a profile or on the command line:
//
//   - ${NAME} (NAME in upper case: [A-Z_][A-Z0-9_]*) in the URL, header
//     values, and ops' tool, prompt, uri and string values inside
//     arguments is replaced by the environment variable NAME when the
//     profile is compiled; an unset variable is a profile error naming the
//     field. Lower-case names are left alone: ${request} is the driver's
//     per-request placeholder (driver.RequestPlaceholder). $${ writes a
//     literal ${.
//   - user:password@ in the URL is not sent in the URL: it becomes an
//     Authorization: Basic header, unless an Authorization header is set
//     explicitly, which then wins (as in net/http).
//   - Only the driver sees the expanded values and the real URL
//     (Plan.Driver). What is shown or written (Plan.Target, Plan.Profile)
//     keeps the profile as written, with the URL shown by ShowURL.

// Endpoint is where requests go, Resolved from a URL and headers as the
// user wrote them.
type Endpoint struct {
	// URL is for the driver only: variables expanded, userinfo removed.
	URL string
	// Header holds the header values expanded, plus Authorization: Basic
	// from the URL's userinfo when no Authorization header was given.
	Header http.Header
	// Shown is the URL for display (ShowURL).
	Shown string
}

// ResolveEndpoint expands ${NAME} references (looked up with lookup,
// usually os.LookupEnv) in rawURL and in the values of header, moves the
// URL's userinfo into an Authorization: Basic header (an Authorization
// header in header wins), and checks the URL as driver.Config.Validate
// does. It returns every problem at once, each naming its field ("url",
// "headers.Name"), and never a value: an unset variable is named, a
// malformed URL is described without its credentials. rawURL "" (the
// embedded server, not started yet) resolves to "" without error. header
// is not modified.
func ResolveEndpoint(rawURL string, header http.Header, lookup secret.LookupFunc) (*Endpoint, []error) {
	var errs []error
	ep := &Endpoint{Shown: ShowURL(rawURL, lookup)}
	if len(header) > 0 {
		ep.Header = make(http.Header, len(header)+1)
		for _, name := range slices.Sorted(maps.Keys(header)) {
			key := http.CanonicalHeaderKey(name)
			for _, v := range header[name] {
				x, err := secret.Expand(v, lookup)
				if err != nil {
					errs = append(errs, fmt.Errorf("headers.%s: %w", name, err))
				}
				ep.Header[key] = append(ep.Header[key], x)
			}
		}
	}
	if rawURL == "" {
		return ep, errs
	}
	raw, err := secret.Expand(rawURL, lookup)
	if err != nil {
		return ep, append(errs, fmt.Errorf("url: %w", err))
	}
	if err := driver.SchemeError(raw, raw == rawURL && !strings.Contains(raw, "@")); err != nil {
		return ep, append(errs, fmt.Errorf("url: %w", err))
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL; its inner error quotes a part
		// (a port, an escape), which may hold a password or an expanded
		// value: say what is wrong only when neither can be there.
		var ue *url.Error
		if errors.As(err, &ue) && raw == rawURL && !strings.Contains(raw, "@") {
			return ep, append(errs, fmt.Errorf("url: not a valid URL: %v", ue.Err))
		}
		return ep, append(errs, errors.New("url: not a valid URL (details hidden: it has credentials or expanded variables)"))
	}
	if u.User != nil {
		if _, set := ep.Header["Authorization"]; !set {
			pass, _ := u.User.Password()
			if ep.Header == nil {
				ep.Header = http.Header{}
			}
			ep.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)))
		}
		u.User = nil
	}
	ep.URL = u.String()
	c := driver.Config{URL: ep.URL}
	errs = append(errs, c.Validate()...)
	return ep, errs
}

// ShowURL returns rawURL (as the user wrote it, perhaps with ${NAME}
// references) for display in output and result files: references in the
// scheme, user name and host (before the path) are expanded, others are
// shown as written; then the password (or a lone user name) and the
// values of secret-looking query parameters are redacted
// (secret.RedactURL). A reference that cannot be expanded is shown as
// written.
func ShowURL(rawURL string, lookup secret.LookupFunc) string {
	s := secret.RedactURL(rawURL) // a literal password goes before anything is expanded
	end := len(s)
	from := 0
	if i := strings.Index(s, "://"); i >= 0 {
		from = i + 3
	}
	if k := strings.IndexAny(s[from:], "/?#"); k >= 0 {
		end = from + k
	}
	origin, err := secret.Expand(s[:end], lookup)
	if err != nil {
		return s
	}
	return secret.RedactURL(origin + s[end:])
}

// endpoint resolves the profile's URL and headers (ResolveEndpoint), with
// the header names as the profile writes them in errors. Header values
// are set, one per name (canonicalized), as Compile always did.
func (p *Profile) endpoint(lookup secret.LookupFunc) (*Endpoint, []error) {
	var h http.Header
	if len(p.Headers) > 0 {
		h = make(http.Header, len(p.Headers))
		for k, v := range p.Headers {
			h[k] = []string{v}
		}
	}
	return ResolveEndpoint(p.URL, h, lookup)
}

// expandOps returns a copy of the ops with ${NAME} references expanded in
// tool, prompt, uri and every string inside arguments (recursively), and
// one error per field with an unset variable. p.Ops is not modified.
func (p *Profile) expandOps(lookup secret.LookupFunc) ([]OpSpec, []error) {
	var errs []error
	ops := slices.Clone(p.Ops)
	str := func(field, s string) string {
		x, err := secret.Expand(s, lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
		return x
	}
	for i := range ops {
		o := &ops[i]
		f := "ops[" + strconv.Itoa(i) + "]"
		o.Tool = str(f+".tool", o.Tool)
		o.Prompt = str(f+".prompt", o.Prompt)
		o.URI = str(f+".uri", o.URI)
		o.Changes = str(f+".changes", o.Changes)
		if o.Arguments != nil {
			o.Arguments = expandAny(f+".arguments", o.Arguments, str).(map[string]any)
		}
	}
	return ops, errs
}

// expandAny returns a copy of v with str applied to every string inside
// it (maps and lists as decoded from YAML or JSON), field naming where.
func expandAny(field string, v any, str func(field, s string) string) any {
	switch v := v.(type) {
	case string:
		return str(field, v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) { // errors in a stable order
			out[k] = expandAny(field+"."+k, v[k], str)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = expandAny(field+"["+strconv.Itoa(i)+"]", x, str)
		}
		return out
	}
	return v
}
