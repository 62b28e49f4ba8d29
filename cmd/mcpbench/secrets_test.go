package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/internal/testenv"
	"github.com/mcpbench/mcpbench/launch"
	"github.com/mcpbench/mcpbench/refserver"
)

// guarded is the reference server behind a check of every request's
// credentials: Authorization, the api_key query parameter and any other
// headers in want. A request that fails the check is answered 401 and
// counted.
type guarded struct {
	url       string // http://127.0.0.1:P/mcp
	mu        sync.Mutex
	requests  int
	bad       []string // what each refused request lacked (no values)
	bodies    bytes.Buffer
	keepBody  bool
	wantQuery string
	want      http.Header
	onRequest func() // called (outside mu) on each request while set
}

func startGuarded(t *testing.T, apiKey string, want http.Header, keepBody bool) *guarded {
	t.Helper()
	h, err := refserver.NewHandler(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := &guarded{want: want, wantQuery: apiKey, keepBody: keepBody}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var lacks []string
		for name := range g.want {
			if r.Header.Get(name) != g.want.Get(name) {
				lacks = append(lacks, name)
			}
		}
		if r.URL.Query().Get("api_key") != g.wantQuery {
			lacks = append(lacks, "api_key")
		}
		if r.URL.User != nil {
			lacks = append(lacks, "userinfo in the URL")
		}
		var body []byte
		if g.keepBody && r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		g.mu.Lock()
		if f := g.onRequest; f != nil {
			g.mu.Unlock()
			f()
			g.mu.Lock()
		}
		g.requests++
		if len(lacks) > 0 {
			g.bad = append(g.bad, r.Method+" lacks "+strings.Join(lacks, ", "))
		}
		g.bodies.Write(body)
		g.mu.Unlock()
		if len(lacks) > 0 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		h.(io.Closer).Close()
	})
	g.url = srv.URL + "/mcp"
	return g
}

func (g *guarded) check(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.requests == 0 {
		t.Fatal("the server saw no request")
	}
	if len(g.bad) > 0 {
		t.Fatalf("%d of %d requests refused, e.g. %s", len(g.bad), g.requests, g.bad[0])
	}
}

func basicAuth(userpass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(userpass))
}

// noSecret fails if any file under dir ("": none), or any of the
// outputs, contains one of the secrets.
func noSecret(t *testing.T, dir string, outputs map[string]string, secrets ...string) {
	t.Helper()
	for what, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s contains %q:\n%s", what, s, out)
			}
		}
	}
	if dir == "" {
		return
	}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s contains %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 4 {
		t.Errorf("only %d files under %s", files, dir)
	}
}

// The URL's userinfo is sent as Basic auth, and no credential (userinfo,
// api_key, header value) reaches stdout, stderr or any file of the
// results directory, the charts and the reports included.
func TestCredentialsInTheURLAreSentAndRedacted(t *testing.T) {
	g := startGuarded(t, "SECRET2", http.Header{"Authorization": {basicAuth("u:SECRET1")}, "X-Api-Key": {"SECRET3"}}, false)
	target := strings.Replace(g.url, "http://", "http://u:SECRET1@", 1) + "?api_key=SECRET2"
	dir := filepath.Join(t.TempDir(), "r")
	outputs := map[string]string{}
	out, errs, code := run(t, "run", "--url", target, "-H", "X-Api-Key: SECRET3", "--duration", "1s", "--warmup", "0s", "--out", dir)
	outputs["run stdout"], outputs["run stderr"] = out, errs
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	g.check(t)
	shown := strings.Replace(g.url, "http://", "http://u:[redacted]@", 1) + "?api_key=[redacted]"
	if !strings.Contains(out, shown) {
		t.Errorf("run output does not name the target as %s:\n%s", shown, out)
	}
	var info struct {
		Target  string
		Headers []string
		Flags   map[string]string
		Spec    struct{ URL string }
	}
	data, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Target != shown || info.Spec.URL != shown || info.Flags["url"] != shown {
		t.Errorf("run.json target %q, spec.url %q, flags.url %q; want %q", info.Target, info.Spec.URL, info.Flags["url"], shown)
	}
	if diff := cmp.Diff([]string{"Authorization: [redacted]", "X-Api-Key: [redacted]"}, info.Headers); diff != "" {
		t.Errorf("run.json headers (-want +got):\n%s", diff)
	}
	for _, args := range [][]string{
		{"plot", dir},
		{"report", dir},
		{"report", dir, "--format", "markdown"},
		{"report", dir, "--format", "json"},
		{"compare", filepath.Join(dir, "summary.json"), filepath.Join(dir, "summary.json")},
	} {
		out, errs, code := run(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errs)
		}
		outputs[strings.Join(args[:min(len(args), 3)], " ")] = out + errs
	}
	if !strings.Contains(outputs["report "+dir], shown) {
		t.Errorf("report does not name the target as %s", shown)
	}
	noSecret(t, dir, outputs, "SECRET", base64.StdEncoding.EncodeToString([]byte("u:SECRET1")))
	for _, f := range []string{"report.html", "plots/latency.svg", "plots/latency.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("plot wrote no %s", f)
		}
	}
}

// The probe takes the same path: userinfo as Basic auth, nothing shown.
func TestProbeCredentials(t *testing.T) {
	g := startGuarded(t, "SECRET2", http.Header{"Authorization": {basicAuth("u:SECRET1")}, "X-Api-Key": {"SECRET3"}}, false)
	t.Setenv("MCPB_TEST_KEY", "SECRET3")
	target := strings.Replace(g.url, "http://", "http://u:SECRET1@", 1) + "?api_key=SECRET2"
	out, errs, code := run(t, "probe", target, "-H", "X-Api-Key: ${MCPB_TEST_KEY}")
	if code != exitOK {
		t.Fatalf("probe: exit %d\n%s\n%s", code, out, errs)
	}
	g.check(t)
	if want := "mcpbench probe " + strings.Replace(g.url, "http://", "http://u:[redacted]@", 1) + "?api_key=[redacted] ("; !strings.HasPrefix(out, want) {
		t.Errorf("probe output starts %q, want %q", out[:min(len(out), 120)], want)
	}
	noSecret(t, "", map[string]string{"probe": out + errs}, "SECRET")

	// The --help example, as written: an explicit Authorization header
	// wins over the URL's userinfo.
	t.Setenv("TOKEN", "SECRET6")
	g = startGuarded(t, "SECRET2", http.Header{"Authorization": {"Bearer SECRET6"}}, false)
	target = strings.Replace(g.url, "http://", "http://u:SECRET1@", 1) + "?api_key=SECRET2"
	out, errs, code = run(t, "probe", target, "--header", "Authorization: Bearer ${TOKEN}")
	if code != exitOK {
		t.Fatalf("probe: exit %d\n%s\n%s", code, out, errs)
	}
	g.check(t)
	noSecret(t, "", map[string]string{"probe": out + errs}, "SECRET")
}

// ${NAME} in --url, -H values and --args is read from the environment;
// run.json keeps the templates, not the values.
func TestRunExpandsTheEnvironment(t *testing.T) {
	t.Setenv("MCPB_TEST_PASS", "SECRET1")
	t.Setenv("MCPB_TEST_KEY", "SECRET2")
	t.Setenv("MCPB_TEST_TENANT", "SECRET4")
	t.Setenv("MCPB_TEST_TEXT", "SECRET5")
	g := startGuarded(t, "SECRET2", http.Header{"Authorization": {basicAuth("u:SECRET1")}, "X-Tenant": {"SECRET4"}}, true)
	target := strings.Replace(g.url, "http://", "http://u:${MCPB_TEST_PASS}@", 1) + "?api_key=${MCPB_TEST_KEY}"
	dir := filepath.Join(t.TempDir(), "r")
	out, errs, code := run(t, "run", "--url", target, "-H", "X-Tenant: ${MCPB_TEST_TENANT}",
		"--tool", "echo", "--args", `{"text":"${MCPB_TEST_TEXT} ${request}"}`, "--vus", "2", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	g.check(t)
	g.mu.Lock()
	bodies := g.bodies.String()
	g.mu.Unlock()
	if !strings.Contains(bodies, `"text":"SECRET5 `) || strings.Contains(bodies, "MCPB_TEST") || strings.Contains(bodies, "${request}") {
		t.Errorf("the server did not get the expanded arguments (and ${request} replaced):\n%.600s", bodies)
	}
	runJSON, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	for _, want := range []string{`"X-Tenant: ${MCPB_TEST_TENANT}"`, `"text": "${MCPB_TEST_TEXT} ${request}"`, `"url": "` + strings.Replace(g.url, "http://", "http://u:[redacted]@", 1) + `?api_key=[redacted]"`} {
		if !strings.Contains(string(runJSON), want) {
			t.Errorf("run.json lacks %s:\n%s", want, runJSON)
		}
	}
	noSecret(t, dir, map[string]string{"run": out + errs}, "SECRET")
}

func TestUnsetVariable(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-q", "-H", "Authorization: Bearer ${MCPB_TEST_UNSET}"}, // embedded server: reported before it starts
		{"run", "-q", "--url", "http://127.0.0.1:1/mcp?key=${MCPB_TEST_UNSET}"},
		{"probe", "http://127.0.0.1:1/mcp", "-H", "Authorization: Bearer ${MCPB_TEST_UNSET}"},
	} {
		_, errs, code := run(t, args...)
		want := "headers.Authorization: ${MCPB_TEST_UNSET} is not set in the environment"
		if strings.Contains(strings.Join(args, " "), "--url") {
			want = "url: ${MCPB_TEST_UNSET} is not set in the environment"
		}
		if code != exitUsage || !strings.Contains(errs, want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", args, code, errs, exitUsage, want)
		}
	}
}

// A malformed -H names the problem without its value.
func TestMalformedHeaderFlag(t *testing.T) {
	for _, cmd := range []string{"run", "probe", "sweep", "soak"} {
		for _, h := range []string{"Authorization Bearer SECRET", "Authorization Bearer: SECRET", "SECRET"} {
			_, errs, code := run(t, cmd, "-H", h)
			if code != exitUsage || !strings.Contains(errs, `want "Name: value"`) || strings.Contains(errs, "SECRET") {
				t.Errorf("%s -H %q: exit %d, stderr %q; want %d, naming the problem, not the value", cmd, h, code, errs, exitUsage)
			}
		}
	}
	_, errs, _ := run(t, "run", "-H", "Authorization Bearer SECRET")
	if want := `header "Authorization [redacted]": want "Name: value"`; !strings.Contains(errs, want) {
		t.Errorf("stderr %q, want %q", errs, want)
	}
}

func TestRedactArgs(t *testing.T) {
	in := []string{"mcpbench", "run", "--url", "http://u:S1@h/mcp?api_key=S2&n=1", "--url=https://S3@h/?token=S4",
		"-H", "Authorization: Bearer S5", "--header=X-Key: S6", "-HX-Other: S7", "--args", `{"a":"b"}`, "--profile", "p.yaml"}
	want := []string{"mcpbench", "run", "--url", "http://u:[redacted]@h/mcp?api_key=[redacted]&n=1", "--url=https://[redacted]@h/?token=[redacted]",
		"-H", "Authorization: [redacted]", "--header=X-Key: [redacted]", "-HX-Other: [redacted]", "--args", `{"a":"b"}`, "--profile", "p.yaml"}
	if diff := cmp.Diff(want, launch.RedactArgs(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A sweep's files (sweep.json, every step's results, the capacity charts)
// show the target without credentials.
func TestSweepCredentials(t *testing.T) {
	testenv.Long(t)
	t.Parallel()
	g := startGuarded(t, "SECRET2", http.Header{"Authorization": {basicAuth("u:SECRET1")}}, false)
	target := strings.Replace(g.url, "http://", "http://u:SECRET1@", 1) + "?api_key=SECRET2"
	dir := filepath.Join(t.TempDir(), "sw")
	out, errs, code := runPar(t, "sweep", "--url", target, "--tool", "echo", "--args", `{"text":"hi"}`, "--from", "20", "--to", "40", "--steps", "2",
		"--step", "1s", "--step-warmup", "0s", "-q", "--out", dir)
	if code != exitOK {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errs)
	}
	g.check(t)
	pout, perrs, code := runPar(t, "plot", dir)
	if code != exitOK {
		t.Fatalf("plot: exit %d\n%s\n%s", code, pout, perrs)
	}
	var sw struct{ Target string }
	data, _ := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err := json.Unmarshal(data, &sw); err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(g.url, "http://", "http://u:[redacted]@", 1) + "?api_key=[redacted]"; sw.Target != want {
		t.Errorf("sweep.json target %q, want %q", sw.Target, want)
	}
	noSecret(t, dir, map[string]string{"sweep": out + errs, "plot": pout + perrs}, "SECRET")
}

// oauthGuarded is the reference server behind OAuth: a 401 challenge
// without the bearer token, metadata naming itself as the authorization
// server, and a token endpoint that gives token for clientSecret. It
// counts the requests that carried the token.
func oauthGuarded(t *testing.T, clientSecret, token string) (url string, authorized *int64) {
	t.Helper()
	h, err := refserver.NewHandler(refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	var mu sync.Mutex
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		mu.Lock()
		n++
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": base, "token_endpoint": base + "/token"})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if id, secret, _ := r.BasicAuth(); id != "bench" || secret != clientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		h.(io.Closer).Close()
	})
	base = srv.URL
	return base + "/mcp", &n
}

// The OAuth client secret, the tokens and the proxy's password reach the
// servers and never an output: stdout, stderr, the results directory, its
// charts and reports. A secret written on the command line is refused
// without being repeated.
func TestOAuthAndProxySecretsNeverShown(t *testing.T) {
	url, authorized := oauthGuarded(t, "CLIENTSECRET9", "TOKEN-b7e2a1")
	px, err := mcptest.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	px.SetAuth("u", "PROXYPASS7")
	t.Setenv("MY_CLIENT_SECRET", "CLIENTSECRET9")
	proxyURL := strings.Replace(px.URL, "http://", "http://u:PROXYPASS7@", 1)
	dir := filepath.Join(t.TempDir(), "r")
	out, errs, code := run(t, "run", "--url", url, "--proxy", proxyURL, "--oauth-client-id", "bench", "--oauth-client-secret", "${MY_CLIENT_SECRET}",
		"--vus", "2", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir)
	if code != exitOK || *authorized == 0 || px.Refused() != 0 || len(px.Forwards()) == 0 {
		t.Fatalf("run: exit %d, %d authorized requests, proxy refused %d, forwarded %d\n%s\n%s", code, *authorized, px.Refused(), len(px.Forwards()), out, errs)
	}
	if !strings.Contains(out, "through proxy "+strings.Replace(px.URL, "http://", "http://u:[redacted]@", 1)) {
		t.Errorf("header %q", headerLine(out))
	}
	outputs := map[string]string{"run": out + errs}
	for _, args := range [][]string{{"plot", dir}, {"report", dir}, {"report", dir, "--format", "json"}} {
		o, e, c := run(t, args...)
		if c != exitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, c, o, e)
		}
		outputs[strings.Join(args, " ")] = o + e
	}
	noSecret(t, dir, outputs, "CLIENTSECRET9", "TOKEN-b7e2a1", "PROXYPASS7", base64.StdEncoding.EncodeToString([]byte("u:PROXYPASS7")))

	_, errs, code = run(t, "run", "--url", url, "--oauth-client-id", "bench", "--oauth-client-secret", "LITERALSECRET", "-q", "--no-results")
	if code != exitUsage || !strings.Contains(errs, "oauth.client_secret: give ${NAME}") || strings.Contains(errs, "LITERALSECRET") {
		t.Errorf("a literal secret: exit %d, stderr %q", code, errs)
	}
}

func TestRedactSecretFlags(t *testing.T) {
	in := []string{"mcpbench", "run", "--oauth-client-secret", "S1", "--oauth-client-secret=S2", "--proxy", "http://u:S3@p:1"}
	want := []string{"mcpbench", "run", "--oauth-client-secret", "[redacted]", "--oauth-client-secret=[redacted]", "--proxy", "http://u:[redacted]@p:1"}
	if diff := cmp.Diff(want, launch.RedactArgs(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A URL that mcpbench sends no credentials from (--prometheus-rw,
// --oauth-issuer, proxy --upstream) is refused with user:password@ by
// every command that takes it — run, sweep, soak, run --processes,
// --dry-run, k8s-job — with one error, the same as run's, exit 2, before
// anything is written: no results directory, no manifest. (Issue 33
// item 7: k8s-job printed the password into the manifest.)
func TestURLCredentialsRefusedEverywhere(t *testing.T) {
	t.Parallel()
	const rw = "http://u:PLANTED1@127.0.0.1:1/api/v1/write"
	const wantRW = `--prometheus-rw "http://u:[redacted]@127.0.0.1:1/api/v1/write": credentials in the URL would be printed: set MCPBENCH_PROMETHEUS_RW_TOKEN, or MCPBENCH_PROMETHEUS_RW_USER and MCPBENCH_PROMETHEUS_RW_PASSWORD, instead`
	const issuer = "https://u:PLANTED2@as.example"
	const wantIssuer = `--oauth-issuer (oauth.issuer) "https://u:[redacted]@as.example": credentials in the URL would be printed: give the authorization server's issuer URL without user:password@ (the client secret is read from the environment: --oauth-client-secret '${NAME}')`
	k8s := []string{"k8s-job", "--parallelism", "2", "--image", "img", "--url", "http://svc/mcp"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--prometheus-rw", rw}, wantRW},
		{[]string{"run", "--prometheus-rw", rw, "--dry-run"}, wantRW},
		{[]string{"run", "--processes", "2", "--prometheus-rw", rw}, wantRW},
		{[]string{"sweep", "--from", "10", "--to", "20", "--steps", "2", "--prometheus-rw", rw}, wantRW},
		{[]string{"sweep", "--processes", "2", "--from", "10", "--to", "20", "--steps", "2", "--prometheus-rw", rw}, wantRW},
		{[]string{"soak", "--prometheus-rw", rw}, wantRW},
		{[]string{"soak", "--processes", "2", "--prometheus-rw", rw}, wantRW},
		{append(slices.Clone(k8s), "--prometheus-rw", rw), wantRW},
		{[]string{"run", "--oauth-client-id", "bench", "--oauth-issuer", issuer}, wantIssuer},
		{append(slices.Clone(k8s), "--oauth-client-id", "bench", "--oauth-issuer", issuer), wantIssuer},
		{[]string{"proxy", "--listen", "127.0.0.1:0", "--upstream", "http://u:PLANTED3@127.0.0.1:1/mcp"},
			`--upstream "http://u:[redacted]@127.0.0.1:1/mcp": credentials in the URL would be printed: ` + upstreamCredentials},
	} {
		args := tt.args
		dir := filepath.Join(t.TempDir(), "r")
		if args[0] != "k8s-job" && args[0] != "proxy" {
			args = append(slices.Clone(args), "--out", dir, "-q")
		}
		ctx := t.Context()
		if args[0] == "proxy" { // a proxy that starts anyway (not refused) stops at once
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
		out, errs, code := cli(ctx, args...)
		if code != exitUsage || errs != tt.want || out != "" {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr:\n%s\nwant exit %d, nothing on stdout, and:\n%s", tt.args, code, len(out), errs, exitUsage, tt.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: %s was written (%v)", tt.args, dir, err)
		}
		noSecret(t, "", map[string]string{strings.Join(tt.args[:2], " "): out + errs}, "PLANTED")
	}
}

// Every manifest k8s-job prints, for runs that give their secrets as
// ${NAME} (in --url, -H, --proxy, -e, --prometheus-rw's query and a
// --profile file), holds none of the values (set in the environment
// here); and every literal form of them is refused with nothing printed
// and the secret in no output.
func TestK8sJobManifestsHoldNoSecret(t *testing.T) {
	for k, v := range map[string]string{"PW": "PLANTED1", "TOKEN": "PLANTED2", "PPW": "PLANTED3", "KEY": "PLANTED4"} {
		t.Setenv(k, v)
	}
	profile := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(profile, []byte(`name: secretive
url: http://u:${PW}@svc/mcp?api_key=${KEY}
headers: {X-Api-Key: "${KEY}"}
env: {API_TOKEN: "${TOKEN}"}
ops: [{method: tools/call, tool: echo, arguments: {text: '{{env "API_TOKEN"}}'}}]
vus: 2
duration: 2s
`), 0o644)
	base := []string{"k8s-job", "--parallelism", "2", "--image", "img"}
	outputs := map[string]string{}
	for i, args := range [][]string{
		{"--url", "http://u:${PW}@svc/mcp?api_key=${KEY}", "-H", "Authorization: Bearer ${TOKEN}", "--proxy", "http://u:${PPW}@proxy:3128",
			"-e", "API_TOKEN=${TOKEN}", "--prometheus-rw", "http://prom:9090/api/v1/write?api_key=${KEY}", "--oauth-client-id", "bench", "--oauth-client-secret", "${KEY}"},
		{"--profile", profile},
		{"--profile", profile, "-H", "X-Other: ${TOKEN}", "--env-from-secret", "mcp-token"},
	} {
		out, errs, code := run(t, append(slices.Clone(base), args...)...)
		if code != exitOK || !strings.Contains(out, "kind: Job") {
			t.Fatalf("%v: exit %d\n%s", args, code, errs)
		}
		outputs[fmt.Sprintf("manifest %d", i)] = out + errs
	}
	for _, args := range [][]string{
		{"--url", "http://u:PLANTED1@svc/mcp"},
		{"--url", "http://svc/mcp?api_key=PLANTED4"},
		{"--url", "http://u:PLANTED1@svc/mcp?api_key=${KEY}"},
		{"--url", "http://svc/mcp", "-H", "Authorization: Bearer PLANTED2"},
		{"--url", "http://svc/mcp", "--proxy", "http://u:PLANTED3@proxy:3128"},
		{"--url", "http://svc/mcp", "-e", "API_TOKEN=PLANTED2"},
		{"--url", "http://svc/mcp", "--prometheus-rw", "http://u:PLANTED1@prom/api/v1/write"},
		{"--url", "http://svc/mcp", "--prometheus-rw", "http://prom/api/v1/write?api_key=PLANTED4"},
		{"--url", "http://svc/mcp", "--oauth-client-id", "bench", "--oauth-client-secret", "PLANTED2"},
	} {
		out, errs, code := run(t, append(slices.Clone(base), args...)...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, %d bytes of manifest: want exit 2 and none\n%s", args, code, len(out), errs)
		}
		outputs[strings.Join(args, " ")] = out + errs
	}
	hits := 0
	for what, out := range outputs {
		if n := strings.Count(out, "PLANTED"); n > 0 {
			hits += n
			t.Errorf("%s: %d planted secrets:\n%s", what, n, out)
		}
	}
	if hits != 0 {
		t.Errorf("%d planted secrets in k8s-job's outputs, want 0", hits)
	}
}

// childCmdlines reads, from /proc, the command line of every process
// whose parent is this one and whose command line holds mark, into seen
// (by pid); it returns how many seen holds.
func childCmdlines(mark string, seen map[int]string) int {
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ok := seen[pid]; ok {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil || !strings.Contains(string(status), "\nPPid:\t"+self+"\n") {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), mark) { // not yet exec'd: the test binary's own
			seen[pid] = strings.ReplaceAll(string(cmdline), "\x00", " ")
		}
	}
	return len(seen)
}

// run --processes 2 with secrets typed on its command line — a bearer
// token and an API key in -H, user:password@ and ?api_key= in --url, a
// proxy password, an -e value, a ${NAME} reference — gives its children
// none of them in their argv (world-readable: /proc/PID/cmdline, ps),
// read from /proc while each child is in a request (so it runs); every
// secret still reaches the servers: the header, the query, the proxy's
// credentials, the -e value in the tool's arguments. (Issue 33 item 7.)
func TestProcessesArgvHoldsNoSecret(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc")
	}
	t.Setenv("MCPB_TEST_TENANT", "PLANTED6")
	g := startGuarded(t, "PLANTED2", http.Header{"Authorization": {"Bearer PLANTED1"}, "X-Api-Key": {"PLANTED3"}, "X-Tenant": {"PLANTED6"}}, true)
	px, err := mcptest.StartProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	px.SetAuth("u", "PLANTED4")
	dir := filepath.Join(t.TempDir(), "r")
	seen := map[int]string{}
	var mu sync.Mutex
	g.mu.Lock()
	g.onRequest = func() { // the child that sent this request waits for its answer: it runs
		mu.Lock()
		defer mu.Unlock()
		if len(seen) < 2 {
			childCmdlines("--out="+dir+"/segment-", seen)
		}
	}
	g.mu.Unlock()
	target := strings.Replace(g.url, "http://", "http://u:PLANTED5@", 1) + "?api_key=PLANTED2"
	out, errs, code := runPar(t, "run", "--processes", "2", "--url", target, "-H", "Authorization: Bearer PLANTED1", "--header=X-Api-Key: PLANTED3",
		"-H", "X-Tenant: ${MCPB_TEST_TENANT}", "--proxy", strings.Replace(px.URL, "http://", "http://u:PLANTED4@", 1),
		"-e", "NOTE=PLANTED7", "--tool", "echo", "--args", `{"text":"{{env \"NOTE\"}}"}`,
		"--rate", "40", "--duration", "2s", "--warmup", "0s", "--start-delay", "1s", "-q", "--out", dir)
	if code != exitOK {
		t.Fatalf("run --processes 2: exit %d\n%s\n%s", code, out, errs)
	}
	g.check(t) // every request had the header, the query and no userinfo
	if px.Refused() != 0 || len(px.Forwards()) == 0 {
		t.Errorf("the proxy refused %d requests, forwarded %d: want 0 and some (its password reached it)", px.Refused(), len(px.Forwards()))
	}
	g.mu.Lock()
	bodies := g.bodies.String()
	g.mu.Unlock()
	if !strings.Contains(bodies, `"text":"PLANTED7"`) {
		t.Errorf("the server did not get -e NOTE's value in the arguments:\n%.400s", bodies)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("saw %d children running (%v), want 2", len(seen), seen)
	}
	hits := 0
	for pid, cmdline := range seen {
		if !strings.Contains(cmdline, " run --launch-file=- ") { // the profile and flags on its stdin (launch/childfile.go)
			t.Errorf("child %d: cmdline %q", pid, cmdline)
		}
		for i := 1; i <= 7; i++ {
			if s := "PLANTED" + strconv.Itoa(i); strings.Contains(cmdline, s) {
				hits++
				t.Errorf("child %d's argv holds %s: %s", pid, s, cmdline)
			}
		}
	}
	if hits != 0 {
		t.Errorf("%d secrets in the children's argv, want 0", hits)
	}
	// The children's run.json records their whole command (redacted).
	runJSON, _ := os.ReadFile(filepath.Join(dir, "segment-0", "run.json"))
	if !bytes.Contains(runJSON, []byte(`"--header=X-Api-Key: [redacted]"`)) || !bytes.Contains(runJSON, []byte(`"--segment=0/2"`)) {
		t.Errorf("segment-0/run.json lacks the child's redacted flags:\n%.1500s", runJSON)
	}
	// -e values are shown as given (run.json: README, "-e KEY=VALUE"; a
	// secret goes as -e KEY='${NAME}'); the others never.
	noSecret(t, dir, map[string]string{"run": out + errs}, "PLANTED1", "PLANTED2", "PLANTED3", "PLANTED4", "PLANTED5", "PLANTED6")
}

// A secret query parameter of --prometheus-rw (accepted: only userinfo
// is refused) is redacted in run.json's flags, as in its command and
// the stderr line, and every push carries it to the receiver.
func TestRemoteWriteQuerySecretRedacted(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	pushes, keyed := 0, 0
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pushes++
		if r.URL.Query().Get("api_key") == "PLANTED1" {
			keyed++
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	dir := filepath.Join(t.TempDir(), "r")
	out, errs, code := runPar(t, "run", "--prometheus-rw", recv.URL+"/api/v1/write?api_key=PLANTED1", "--duration", "1s", "--warmup", "0s", "-q", "--out", dir)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	mu.Lock()
	if pushes == 0 || keyed != pushes {
		t.Errorf("%d pushes, %d with the key: want all of some", pushes, keyed)
	}
	mu.Unlock()
	if want := "--prometheus-rw " + recv.URL + "/api/v1/write?api_key=[redacted]:"; !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}
	noSecret(t, dir, map[string]string{"run": out + errs}, "PLANTED")
}
