// Package secret keeps secret values out of what mcpbench prints and
// writes. Expand fills ${NAME} references from the environment, so a token
// need not be written on the command line or in a profile; RedactURL
// renders a URL for display without its credentials.
//
// The rule for ${NAME}: NAME is an environment variable name in upper
// case ([A-Z_][A-Z0-9_]*). Anything else between ${ and } is left as
// written: in particular ${request}, the driver's per-request placeholder
// (driver.RequestPlaceholder), and any lower-case name. $${ writes a
// literal ${ (so $${TOKEN} sends the seven characters ${TOKEN}). A $ not
// followed by { is an ordinary character ($TOKEN is not expanded).
//
// Every function is safe for concurrent use.
package secret

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrUnset is wrapped by the error of Expand when a referenced variable is
// not set in the environment.
var ErrUnset = errors.New("not set in the environment")

// UnsetError names the variables a string referenced that are not set,
// in the order they appear (each once). It wraps ErrUnset.
type UnsetError struct {
	Names []string
}

func (e *UnsetError) Error() string {
	refs := make([]string, len(e.Names))
	for i, n := range e.Names {
		refs[i] = "${" + n + "}"
	}
	if len(refs) == 1 {
		return refs[0] + " is " + ErrUnset.Error()
	}
	return strings.Join(refs[:len(refs)-1], ", ") + " and " + refs[len(refs)-1] + " are " + ErrUnset.Error()
}

// Unwrap returns ErrUnset.
func (e *UnsetError) Unwrap() error { return ErrUnset }

// LookupFunc reports the value of an environment variable and whether it
// is set; os.LookupEnv is one.
type LookupFunc func(name string) (string, bool)

// Expand replaces every ${NAME} in s (see the package doc for the syntax)
// with lookup(NAME). A variable that is set but empty expands to "". If
// any referenced variable is unset, Expand returns "" and an *UnsetError
// naming all of them; the error never contains a value. A string without
// "${" is returned as is, without allocating.
func Expand(s string, lookup LookupFunc) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	var unset []string
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '$')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		b.WriteString(s[i:j])
		rest := s[j:]
		switch {
		case strings.HasPrefix(rest, "$${"):
			b.WriteString("${")
			i = j + 3
			continue
		case strings.HasPrefix(rest, "${"):
			if end := strings.IndexByte(rest, '}'); end > 2 && IsVarName(rest[2:end]) {
				name := rest[2:end]
				if v, ok := lookup(name); ok {
					b.WriteString(v)
				} else if !contains(unset, name) {
					unset = append(unset, name)
				}
				i = j + end + 1
				continue
			}
		}
		b.WriteByte('$')
		i = j + 1
	}
	if len(unset) > 0 {
		return "", &UnsetError{Names: unset}
	}
	return b.String(), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// IsVarName reports whether name is a variable name Expand expands:
// [A-Z_][A-Z0-9_]*.
func IsVarName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Redacted is what a hidden value is shown as.
const Redacted = "[redacted]"

// secretWords are the substrings that make a query parameter's value a
// secret (compared in lower case).
var secretWords = []string{"token", "key", "secret", "auth", "pass", "sig", "credential", "session"}

// SecretParam reports whether a query parameter's value must not be shown:
// its name (percent-decoded) contains token, key, secret, auth, pass
// (password, passwd), sig (signature), credential or session, in any case.
func SecretParam(name string) bool {
	if u, err := url.QueryUnescape(name); err == nil {
		name = u
	}
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactURL returns s for display: the userinfo of an absolute URL shown
// as "user:[redacted]@" (or "[redacted]@" when it has no password, since a
// lone user name is often a token), and the value of every query (and
// fragment) parameter whose name SecretParam matches shown as
// "[redacted]". The rest is kept byte for byte, so RedactURL of a string
// that is not a URL, or has nothing secret, is that string. It works on
// the text, not on a parsed URL, so a malformed URL is redacted too.
func RedactURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		start := i + 3
		end := len(s)
		if k := strings.IndexAny(s[start:], "/?#"); k >= 0 {
			end = start + k
		}
		if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
			shown := Redacted
			if user, _, ok := strings.Cut(s[start:start+at], ":"); ok {
				shown = user + ":" + Redacted
			}
			s = s[:start] + shown + s[start+at:]
		}
	}
	q := strings.IndexAny(s, "?#")
	if q < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:q+1])
	rest := s[q+1:]
	for rest != "" {
		k := strings.IndexAny(rest, "&;#")
		param, sep := rest, ""
		if k >= 0 {
			param, sep = rest[:k], rest[k:k+1]
			rest = rest[k+1:]
		} else {
			rest = ""
		}
		if name, _, ok := strings.Cut(param, "="); ok && SecretParam(name) {
			param = name + "=" + Redacted
		}
		b.WriteString(param)
		b.WriteString(sep)
	}
	return b.String()
}

// ErrURLCredentials is wrapped by the error of RefuseUserinfo: a URL given
// where mcpbench sends no credentials from it (it would only print them,
// or write them into a file) carries user:password@.
var ErrURLCredentials = errors.New("credentials in the URL would be printed")

// RefuseUserinfo is the one check every command applies to a URL that
// must not carry credentials in its userinfo (run's --prometheus-rw and
// --oauth-issuer, proxy's --upstream; the same flags of sweep, soak,
// --processes and k8s-job): nil when raw has no user@ part (or is ""),
// else an error wrapping ErrURLCredentials of the form
//
//	FLAG "URL shown redacted": credentials in the URL would be printed: REMEDY
//
// The URL is shown as RedactURL shows it: never the password (nor a lone
// user name, which is often a token). A URL is refused when url.Parse
// finds a userinfo, or when its text has an @ between :// and the first
// /, ? or #, so a malformed URL is refused too.
func RefuseUserinfo(flag, raw, remedy string) error {
	if raw == "" {
		return nil
	}
	if u, err := url.Parse(raw); (err != nil || u.User == nil) && !hasUserinfo(raw) {
		return nil
	}
	return fmt.Errorf("%s %q: %w: %s", flag, RedactURL(raw), ErrURLCredentials, remedy)
}

// hasUserinfo reports whether the absolute URL s has an @ in its
// authority (between :// and the first /, ? or #).
func hasUserinfo(s string) bool {
	i := strings.Index(s, "://")
	if i < 0 {
		return false
	}
	auth := s[i+3:]
	if k := strings.IndexAny(auth, "/?#"); k >= 0 {
		auth = auth[:k]
	}
	return strings.Contains(auth, "@")
}

// LiteralInURL reports whether RedactURL would hide a part of s that is
// written out rather than a ${NAME} reference: the userinfo, or the value
// of a query parameter SecretParam matches, is anything but exactly one
// ${NAME} ("http://u:${PW}@h" and "?token=${T}" are not literal;
// "http://u:pw@h?x=${A}" and "?token=pre${T}" are). For a manifest or a
// command line that is printed, where only references may appear.
func LiteralInURL(s string) bool {
	refs, _ := Expand(s, func(string) (string, bool) { return Redacted, true })
	return RedactURL(refs) != refs
}
