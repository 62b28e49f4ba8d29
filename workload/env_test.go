package workload

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/secret"
	"github.com/mcpbench/mcpbench/profile"
	"go.yaml.in/yaml/v3"
)

func lookupIn(vars map[string]string) secret.LookupFunc {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func basic(userpass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(userpass))
}

func errStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestResolveEndpoint(t *testing.T) {
	vars := lookupIn(map[string]string{"TOKEN": "tok3n", "HOST": "127.0.0.1:9", "PASS": "pa55", "KEY": "k3y", "BASE": "http://u:pw@10.0.0.1/mcp?api_key=k"})
	tests := []struct {
		name   string
		url    string
		header http.Header
		want   profile.Endpoint
	}{
		{"plain", "http://127.0.0.1:9/mcp", nil,
			profile.Endpoint{URL: "http://127.0.0.1:9/mcp", Shown: "http://127.0.0.1:9/mcp"}},
		{"userinfo becomes Basic auth", "http://u:SECRET@127.0.0.1:9/mcp?api_key=SECRET2", nil,
			profile.Endpoint{URL: "http://127.0.0.1:9/mcp?api_key=SECRET2", Header: http.Header{"Authorization": {basic("u:SECRET")}},
				Shown: "http://u:[redacted]@127.0.0.1:9/mcp?api_key=[redacted]"}},
		{"user only, percent-encoded", "http://t%40k@127.0.0.1:9/", nil,
			profile.Endpoint{URL: "http://127.0.0.1:9/", Header: http.Header{"Authorization": {basic("t@k:")}}, Shown: "http://[redacted]@127.0.0.1:9/"}},
		{"an explicit Authorization header wins", "http://u:SECRET@127.0.0.1:9/mcp", http.Header{"Authorization": {"Bearer ${TOKEN}"}},
			profile.Endpoint{URL: "http://127.0.0.1:9/mcp", Header: http.Header{"Authorization": {"Bearer tok3n"}}, Shown: "http://u:[redacted]@127.0.0.1:9/mcp"}},
		{"header names are canonicalized", "http://127.0.0.1:9/mcp", http.Header{"x-api-key": {"${KEY}"}, "authorization": {"Bearer x"}},
			profile.Endpoint{URL: "http://127.0.0.1:9/mcp", Header: http.Header{"X-Api-Key": {"k3y"}, "Authorization": {"Bearer x"}}, Shown: "http://127.0.0.1:9/mcp"}},
		{"variables everywhere", "http://u:${PASS}@${HOST}/mcp/${TOKEN}?api_key=${KEY}&n=1", nil,
			profile.Endpoint{URL: "http://127.0.0.1:9/mcp/tok3n?api_key=k3y&n=1", Header: http.Header{"Authorization": {basic("u:pa55")}},
				Shown: "http://u:[redacted]@127.0.0.1:9/mcp/${TOKEN}?api_key=[redacted]&n=1"}},
		{"the whole URL from a variable", "${BASE}", nil,
			profile.Endpoint{URL: "http://10.0.0.1/mcp?api_key=k", Header: http.Header{"Authorization": {basic("u:pw")}},
				Shown: "http://u:[redacted]@10.0.0.1/mcp?api_key=[redacted]"}},
		{"embedded server: no URL yet", "", http.Header{"X-Id": {"${TOKEN}"}},
			profile.Endpoint{Header: http.Header{"X-Id": {"tok3n"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.header.Clone()
			got, errs := profile.ResolveEndpoint(tt.url, tt.header, vars)
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tt.header); diff != "" {
				t.Errorf("header argument modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestResolveEndpointErrors(t *testing.T) {
	vars := lookupIn(map[string]string{"PORT": "SECRETPORT"})
	tests := []struct {
		url    string
		header http.Header
		want   []string
	}{
		{"http://h/mcp?k=${KEY}", http.Header{"Authorization": {"Bearer ${TOKEN}"}, "X-A": {"${A}${B}"}},
			[]string{"headers.Authorization: ${TOKEN} is not set in the environment",
				"headers.X-A: ${A} and ${B} are not set in the environment",
				"url: ${KEY} is not set in the environment"}},
		{"ftp://h/x", nil, []string{`url: scheme "ftp", want http or https`}},
		{"http:///mcp", nil, []string{"url: no host"}},
		{"http://h:bad/mcp", nil, []string{`url: not a valid URL: invalid port ":bad" after host`}},
		// The parser's message would quote part of the password or of
		// an expanded value.
		{"http://u:SECRET/x@h/mcp", nil, []string{"url: not a valid URL (details hidden: it has credentials or expanded variables)"}},
		{"http://h:${PORT}/mcp", nil, []string{"url: not a valid URL (details hidden: it has credentials or expanded variables)"}},
	}
	for _, tt := range tests {
		_, errs := profile.ResolveEndpoint(tt.url, tt.header, vars)
		got := errStrings(errs)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.url, diff)
		}
		for _, e := range got {
			if strings.Contains(e, "SECRET") {
				t.Errorf("%s: error %q shows a secret", tt.url, e)
			}
		}
	}
}

func TestShowURL(t *testing.T) {
	vars := lookupIn(map[string]string{"HOST": "mcp.example.com", "USER": "bench", "PASS": "pa55", "BASE": "https://t0k@mcp.example.com"})
	tests := []struct{ in, want string }{
		{"https://${HOST}/mcp", "https://mcp.example.com/mcp"},
		{"https://${USER}:${PASS}@${HOST}/mcp", "https://bench:[redacted]@mcp.example.com/mcp"},
		{"https://u:lit3ral@${HOST}/mcp", "https://u:[redacted]@mcp.example.com/mcp"},
		{"${BASE}/mcp/${PASS}", "https://[redacted]@mcp.example.com/mcp/${PASS}"}, // after the host: as written
		{"https://${HOST}/mcp?key=${PASS}&v=${USER}", "https://mcp.example.com/mcp?key=[redacted]&v=${USER}"},
		{"https://${UNSET}/mcp", "https://${UNSET}/mcp"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := profile.ShowURL(tt.in, vars); got != tt.want {
			t.Errorf("ShowURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

const envProfile = `
name: env
url: http://bench:${MCPB_PASS}@127.0.0.1:9/mcp?api_key=${MCPB_KEY}
headers:
  x-tenant: ${MCPB_TENANT}
  X-Api-Key: ${MCPB_KEY}
ops:
  - method: tools/call
    tool: ${MCPB_TOOL}
    arguments:
      text: "hello ${MCPB_TENANT}"
      id: "${request}"
      literal: "$${MCPB_KEY}"
      n: 3
      nested: {list: ["${MCPB_KEY}", 1, {deep: "${MCPB_TENANT}"}]}
  - method: resources/read
    uri: file:///${MCPB_TENANT}/doc
  - method: prompts/get
    prompt: ${MCPB_TOOL}
    arguments: {who: "${MCPB_TENANT}"}
`

func TestCompileExpandsTheEnvironment(t *testing.T) {
	t.Setenv("MCPB_PASS", "Pa55")
	t.Setenv("MCPB_KEY", "K3y")
	t.Setenv("MCPB_TENANT", "acme")
	t.Setenv("MCPB_TOOL", "echo")
	p, errs := profile.ParseProfile([]byte(envProfile))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	template, _ := yaml.Marshal(p)
	pl, err := Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The driver gets the values, without userinfo in the URL.
	if want := "http://127.0.0.1:9/mcp?api_key=K3y"; pl.Driver.URL != want {
		t.Errorf("driver URL %q, want %q", pl.Driver.URL, want)
	}
	wantH := http.Header{"X-Tenant": {"acme"}, "X-Api-Key": {"K3y"}, "Authorization": {basic("bench:Pa55")}}
	if diff := cmp.Diff(wantH, pl.Driver.Header); diff != "" {
		t.Errorf("driver header (-want +got):\n%s", diff)
	}
	var params []map[string]any
	var names []string
	for _, op := range pl.Ops {
		var m map[string]any
		if err := json.Unmarshal(op.Params, &m); err != nil {
			t.Fatal(err)
		}
		params = append(params, m)
		names = append(names, op.Name)
	}
	wantParams := []map[string]any{
		{"name": "echo", "arguments": map[string]any{"text": "hello acme", "id": "${request}", "literal": "${MCPB_KEY}", "n": float64(3),
			"nested": map[string]any{"list": []any{"K3y", float64(1), map[string]any{"deep": "acme"}}}}},
		{"uri": "file:///acme/doc"},
		{"name": "echo", "arguments": map[string]any{"who": "acme"}},
	}
	if diff := cmp.Diff(wantParams, params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	// What is shown keeps the templates.
	if diff := cmp.Diff([]string{"tools/call:${MCPB_TOOL}", "resources/read:file:///${MCPB_TENANT}/doc", "prompts/get:${MCPB_TOOL}"}, names); diff != "" {
		t.Errorf("op names (-want +got):\n%s", diff)
	}
	if want := "http://bench:[redacted]@127.0.0.1:9/mcp?api_key=[redacted]"; pl.Target != want || pl.Profile.URL != want {
		t.Errorf("target %q, profile url %q; want %q", pl.Target, pl.Profile.URL, want)
	}
	if diff := cmp.Diff([]string{"Authorization: [redacted]", "X-Api-Key: [redacted]", "X-Tenant: ${MCPB_TENANT}"}, pl.ShownHeader()); diff != "" {
		t.Errorf("shown header (-want +got):\n%s", diff)
	}
	shown, _ := json.Marshal(pl.Profile)
	for _, v := range []string{"Pa55", "K3y", "acme"} {
		if strings.Contains(string(shown), v) {
			t.Errorf("plan profile shows %q: %s", v, shown)
		}
	}
	// The profile compiled is not changed (beyond Defaults).
	p.Defaults()
	p2, _ := profile.ParseProfile(template)
	p2.Defaults()
	if diff := cmp.Diff(p2, p, cmp.AllowUnexported(profile.Profile{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Compile changed its profile (-before +after):\n%s", diff)
	}
}

func TestCompileUnsetVariable(t *testing.T) {
	t.Setenv("MCPB_TENANT", "acme")
	t.Setenv("MCPB_TOOL", "echo")
	p, _ := profile.ParseProfile([]byte(envProfile))
	_, err := Compile(p, nil)
	var pe *profile.ProfileError
	if !errors.As(err, &pe) || !errors.Is(err, secret.ErrUnset) {
		t.Fatalf("err = %v, want a *ProfileError wrapping secret.ErrUnset", err)
	}
	want := []string{
		"headers.X-Api-Key: ${MCPB_KEY} is not set in the environment",
		"url: ${MCPB_PASS} and ${MCPB_KEY} are not set in the environment",
		"ops[0].arguments.nested.list[0]: ${MCPB_KEY} is not set in the environment",
	}
	if diff := cmp.Diff(want, errStrings(pe.Errs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "acme") {
		t.Errorf("error shows a value: %v", err)
	}
}

// driver.Config.Validate and ParseHeader never quote a credential.
func TestDriverMessagesHideCredentials(t *testing.T) {
	errs := (&driver.Config{URL: "http://u:SECRET@h:bad/mcp?api_key=SECRET"}).Validate()
	if got := errStrings(errs); len(got) != 1 || got[0] != `url: invalid port ":bad" after host` {
		t.Errorf("Validate: %q", got)
	}
	for _, tt := range []struct{ in, want string }{
		{"Authorization Bearer SECRET", `header "Authorization [redacted]": want "Name: value"`},
		{"Authorization Bearer: SECRET", `header "Authorization [redacted]": want "Name: value"`},
		{"\tX-Key\tSECRET", `header "X-Key [redacted]": want "Name: value"`},
		{": SECRET", `header ": [redacted]": want "Name: value"`},
		{"SECRET", `header "[redacted]": want "Name: value"`},
	} {
		_, _, err := driver.ParseHeader(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseHeader(%q): %v, want %s", tt.in, err, tt.want)
		}
	}
}
