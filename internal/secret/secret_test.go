package secret

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func env(vars map[string]string) LookupFunc {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestExpand(t *testing.T) {
	lookup := env(map[string]string{"TOKEN": "s3cr3t", "EMPTY": "", "A_1": "x", "_U": "u"})
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"plain", "plain"},
		{"Bearer ${TOKEN}", "Bearer s3cr3t"},
		{"${TOKEN}${TOKEN}", "s3cr3ts3cr3t"},
		{"a${EMPTY}b", "ab"},
		{"${A_1}-${_U}", "x-u"},
		{"${request}", "${request}"}, // the driver's per-request placeholder
		{`{"key":"${request}"}`, `{"key":"${request}"}`},
		{"${Token}", "${Token}"}, // not upper case: left as written
		{"${1X}", "${1X}"},       // not a name
		{"${}", "${}"},
		{"${TOKEN", "${TOKEN"},      // unterminated
		{"$TOKEN", "$TOKEN"},        // braces required
		{"$${TOKEN}", "${TOKEN}"},   // escaped
		{"$$${TOKEN}", "$${TOKEN}"}, // a $, then an escaped ${
		{"$$", "$$"},
		{"price $5 ${A_1}$", "price $5 x$"},
		{"${ TOKEN }", "${ TOKEN }"},
		{"${TOKEN}}", "s3cr3t}"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, lookup)
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExpandUnset(t *testing.T) {
	tests := []struct {
		in    string
		names []string
		msg   string
	}{
		{"Bearer ${TOKEN}", []string{"TOKEN"}, "${TOKEN} is not set in the environment"},
		{"${A}:${B}@${A}/${request}", []string{"A", "B"}, "${A} and ${B} are not set in the environment"},
		{"${A}${B}${C}", []string{"A", "B", "C"}, "${A}, ${B} and ${C} are not set in the environment"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, env(nil))
		var ue *UnsetError
		if got != "" || !errors.As(err, &ue) || !errors.Is(err, ErrUnset) {
			t.Fatalf("Expand(%q) = %q, %v; want an *UnsetError", tt.in, got, err)
		}
		if diff := cmp.Diff(tt.names, ue.Names); diff != "" {
			t.Errorf("Expand(%q) names (-want +got):\n%s", tt.in, diff)
		}
		if err.Error() != tt.msg {
			t.Errorf("Expand(%q) error %q, want %q", tt.in, err, tt.msg)
		}
	}
	// A set variable's value never appears in the error about another.
	_, err := Expand("${SET}${UNSET}", env(map[string]string{"SET": "s3cr3t"}))
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error %v", err)
	}
}

func TestExpandDoesNotAllocateWithoutReferences(t *testing.T) {
	s := strings.Repeat("Bearer abc $x ", 10)
	n := testing.AllocsPerRun(100, func() {
		if out, _ := Expand(s, env(nil)); out != s {
			t.Fatal(out)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

// FuzzExpand: with a lookup that gives each name back as a reference,
// Expand only unescapes $${.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${A}", "$${A}", "$$${A}", "${$${A}", "${request}", "a$b${", "${A_1}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Expand(s, func(name string) (string, bool) {
			if !IsVarName(name) {
				t.Fatalf("looked up %q", name)
			}
			return "${" + name + "}", true
		})
		if want := strings.ReplaceAll(s, "$${", "${"); err != nil || got != want {
			t.Fatalf("Expand(%q) = %q, %v; want %q", s, got, err, want)
		}
	})
}

func TestRedactURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"},
		{"http://u:SECRET@host/mcp", "http://u:[redacted]@host/mcp"},
		{"https://TOKEN@host", "https://[redacted]@host"},
		{"http://u:p@ss@host:1/x", "http://u:[redacted]@host:1/x"},
		{"http://u:SECRET@host?x=1", "http://u:[redacted]@host?x=1"},
		{"http://host/mcp?api_key=SECRET", "http://host/mcp?api_key=[redacted]"},
		{"http://host/mcp?a=1&Access_Token=S&b=2", "http://host/mcp?a=1&Access_Token=[redacted]&b=2"},
		{"http://h/?password=a;sig=b;page=3", "http://h/?password=[redacted];sig=[redacted];page=3"},
		{"http://h/?X-Amz-Signature=abc&X-Amz-Credential=k&X-Amz-Date=1", "http://h/?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&X-Amz-Date=1"},
		{"http://h/?api%5Fkey=S&auth=S&secret=S&sessionId=S", "http://h/?api%5Fkey=[redacted]&auth=[redacted]&secret=[redacted]&sessionId=[redacted]"},
		{"http://h/?token", "http://h/?token"}, // no value
		{"http://h/?token=", "http://h/?token=[redacted]"},
		{"http://h/p#access_token=S&state=1", "http://h/p#access_token=[redacted]&state=1"},
		{"http://h/p?key=S#frag", "http://h/p?key=[redacted]#frag"},
		{"http://h/users/@me", "http://h/users/@me"}, // @ in the path is not userinfo
		{"http://127.0.0.1:1/mcp (embedded reference server)", "http://127.0.0.1:1/mcp (embedded reference server)"},
		{"not a url", "not a url"},
		{"", ""},
		{"http://u:pw@h:bad port/?token=S", "http://u:[redacted]@h:bad port/?token=[redacted]"}, // malformed, still redacted
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ExampleRedactURL() {
	fmt.Println(RedactURL("https://bench:hunter2@mcp.example.com/mcp?api_key=abc123&region=eu"))
	// Output: https://bench:[redacted]@mcp.example.com/mcp?api_key=[redacted]&region=eu
}

func ExampleExpand() {
	lookup := func(name string) (string, bool) { return map[string]string{"TOKEN": "abc123"}[name], name == "TOKEN" }
	v, _ := Expand("Bearer ${TOKEN}", lookup)
	fmt.Println(v)
	v, _ = Expand(`{"key":"${request}","literal":"$${TOKEN}"}`, lookup)
	fmt.Println(v)
	_, err := Expand("Bearer ${MISSING}", lookup)
	fmt.Println(err)
	// Output:
	// Bearer abc123
	// {"key":"${request}","literal":"${TOKEN}"}
	// ${MISSING} is not set in the environment
}

// RefuseUserinfo refuses a URL with user:password@ (or a lone user@),
// parsed or malformed, naming the flag and the remedy, never the
// password; a URL without userinfo, or none, passes.
func TestRefuseUserinfo(t *testing.T) {
	for _, tt := range []struct {
		raw, shown string // shown "": accepted
	}{
		{"", ""},
		{"http://h:9090/api/v1/write", ""},
		{"http://h/write?token=x", ""}, // a query secret is RedactURL's, not userinfo
		{"http://h/p@th", ""},          // an @ in the path is no userinfo
		{"http://h/?q=a@b", ""},
		{"http://u:PASS1@h/write", `"http://u:[redacted]@h/write"`},
		{"https://PASS2@h/write", `"https://[redacted]@h/write"`},
		{"http://u:PASS3@h:bad port/w", `"http://u:[redacted]@h:bad port/w"`}, // malformed: refused too
		{"http://u:PA@SS4@h/w", `"http://u:[redacted]@h/w"`},
	} {
		err := RefuseUserinfo("--flag", tt.raw, "do this instead")
		switch {
		case tt.shown == "" && err != nil:
			t.Errorf("%q: %v, want nil", tt.raw, err)
		case tt.shown == "":
		case err == nil:
			t.Errorf("%q: accepted, want refused", tt.raw)
		case !errors.Is(err, ErrURLCredentials) || strings.Contains(err.Error(), "PASS") || strings.Contains(err.Error(), "SS4"):
			t.Errorf("%q: %v: want ErrURLCredentials without the password", tt.raw, err)
		default:
			want := "--flag " + tt.shown + ": credentials in the URL would be printed: do this instead"
			if err.Error() != want {
				t.Errorf("%q: %q, want %q", tt.raw, err, want)
			}
		}
	}
}

// LiteralInURL: only exactly-one-${NAME} secret parts pass.
func TestLiteralInURL(t *testing.T) {
	for s, want := range map[string]bool{
		"":                            false,
		"http://h/mcp":                false,
		"http://u:${PW}@h/mcp":        false,
		"http://${TOKEN}@h/mcp":       false,
		"http://h/mcp?token=${T}&n=1": false,
		"http://h/mcp?n=1":            false,
		"http://u:pw@h/mcp":           true,
		"http://tok@h/mcp":            true,
		"http://h/mcp?api_key=k":      true,
		"http://h/mcp?token=pre${T}":  true,
		"http://u:pw@h/mcp?x=${A}":    true,
		"http://u:$${PW}@h/mcp":       true, // $${ is a literal ${
	} {
		if got := LiteralInURL(s); got != want {
			t.Errorf("LiteralInURL(%q) = %v, want %v", s, got, want)
		}
	}
}
