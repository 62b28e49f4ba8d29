package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// With --auth, every endpoint refuses a foreign Origin before any
// authorization, as /mcp does without auth: the token endpoint issues no
// token to a page of another site, and the metadata is not handed to it.
// The server's own Origin, and no Origin (a non-browser client), are
// served.
func TestAuthEndpointsRefuseForeignOrigin(t *testing.T) {
	srv, err := Start(t.Context(), "127.0.0.1:0", Options{Auth: &AuthOptions{ClientID: "c", ClientSecret: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := strings.TrimSuffix(srv.URL(), "/mcp")
	send := func(method, path, origin string) *http.Response {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(url.Values{"grant_type": {"client_credentials"}, "client_id": {"c"}, "client_secret": {"s"}}.Encode())
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, base+path, body)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	endpoints := []struct{ method, path string }{
		{http.MethodPost, "/token"},
		{http.MethodGet, "/.well-known/oauth-protected-resource/mcp"},
		{http.MethodGet, "/.well-known/oauth-protected-resource"},
		{http.MethodGet, "/.well-known/oauth-authorization-server"},
		{http.MethodPost, "/mcp"},
	}
	for _, e := range endpoints {
		if got := send(e.method, e.path, "https://evil.example").StatusCode; got != http.StatusForbidden {
			t.Errorf("%s %s with a foreign Origin: %d, want 403", e.method, e.path, got)
		}
	}
	if n := srv.AuthStats().TokensIssued; n != 0 {
		t.Fatalf("%d tokens issued to a foreign Origin", n)
	}
	for _, origin := range []string{"", base} {
		for _, e := range endpoints[:4] {
			if got := send(e.method, e.path, origin).StatusCode; got != http.StatusOK {
				t.Errorf("%s %s with Origin %q: %d, want 200", e.method, e.path, origin, got)
			}
		}
		if got := send(http.MethodPost, "/mcp", origin).StatusCode; got != http.StatusUnauthorized {
			t.Errorf("POST /mcp without a token, Origin %q: %d, want 401", origin, got)
		}
	}
}

// On a wildcard address (0.0.0.0, [::]) the server advertises the address
// each client used (its Host), never the wildcard, in the 401's
// resource_metadata and in both metadata documents; on a specific address
// that address. (Served in memory: no socket on a wildcard address.)
func TestAuthAdvertisesUsableAddress(t *testing.T) {
	for _, tt := range []struct {
		base     string
		wildcard bool
		want     string
	}{
		{"http://[::]:8080", true, "http://127.0.0.2:8080"},
		{"http://0.0.0.0:8080", true, "http://127.0.0.2:8080"},
		{"http://10.1.2.3:8080", false, "http://10.1.2.3:8080"},
	} {
		t.Run(tt.base, func(t *testing.T) {
			a := newAuthServer(AuthOptions{ClientID: "c", ClientSecret: "s"}, tt.base, tt.wildcard, originPolicy{})
			mux := http.NewServeMux()
			mux.Handle("/mcp", a.mount(mux, http.NotFoundHandler()))
			get := func(method, path string) *httptest.ResponseRecorder {
				req := httptest.NewRequest(method, "http://127.0.0.2:8080"+path, nil)
				w := httptest.NewRecorder()
				mux.ServeHTTP(w, req)
				return w
			}
			w := get(http.MethodPost, "/mcp")
			if got, want := w.Header().Get("WWW-Authenticate"), `resource_metadata="`+tt.want+`/.well-known/oauth-protected-resource/mcp"`; w.Code != 401 || !strings.Contains(got, want) {
				t.Errorf("401 %d WWW-Authenticate %q, want %s", w.Code, got, want)
			}
			var prm struct {
				Resource string   `json:"resource"`
				AS       []string `json:"authorization_servers"`
			}
			json.Unmarshal(get(http.MethodGet, "/.well-known/oauth-protected-resource/mcp").Body.Bytes(), &prm)
			if prm.Resource != tt.want+"/mcp" || len(prm.AS) != 1 || prm.AS[0] != tt.want {
				t.Errorf("protected resource metadata %+v, want %s", prm, tt.want)
			}
			var as struct {
				Issuer string `json:"issuer"`
				Token  string `json:"token_endpoint"`
			}
			json.Unmarshal(get(http.MethodGet, "/.well-known/oauth-authorization-server").Body.Bytes(), &as)
			if as.Issuer != tt.want || as.Token != tt.want+"/token" {
				t.Errorf("authorization server metadata %+v, want %s", as, tt.want)
			}
		})
	}
}
