package live

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/results"
)

// rebinding checks the DNS rebinding rule on the listener at base
// (http://127.0.0.1:PORT): path answers 200 with body containing want to
// its own Host and Origin (localhost's too), and 403 without want to a
// foreign Host or a foreign Origin.
func rebinding(t *testing.T, base, path, want string) {
	t.Helper()
	port := base[strings.LastIndex(base, ":")+1:]
	for _, tc := range []struct {
		name, host, origin string
		code               int
	}{
		{"own host", "", "", 200},
		{"own host and origin", "", base, 200},
		{"localhost host and origin", "localhost:" + port, "http://localhost:" + port, 200},
		{"foreign host", "evil.example:" + port, "", 403},
		{"foreign host with its own origin", "evil.example:" + port, "http://evil.example:" + port, 403},
		{"foreign origin", "", "http://evil.example", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// Enough of the body to see the data (an SSE stream stays open).
			b := make([]byte, 4096)
			n, _ := io.ReadAtLeast(resp.Body, b, len(want))
			body := string(b[:n])
			if resp.StatusCode != tc.code {
				t.Fatalf("%s %s: %d %q, want %d", req.Host, tc.origin, resp.StatusCode, body, tc.code)
			}
			if tc.code == 200 && !strings.Contains(body, want) {
				t.Fatalf("200 body %q: want %q in it", body, want)
			}
			if tc.code == 403 && (strings.Contains(body, want) || !strings.HasPrefix(body, "Forbidden: ")) {
				t.Fatalf("403 body %q: want the refusal, not the data", body)
			}
		})
	}
}

func TestMetricsRebinding(t *testing.T) {
	s, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background(), 0)
	rebinding(t, "http://"+s.Addr(), "/metrics", "go_goroutines")
}

func TestDashboardRebinding(t *testing.T) {
	d := startDashboard(t)
	d.Start(&results.RunInfo{Started: time.Now(), Profile: "p", Target: "http://127.0.0.1:1/mcp", Ops: []string{"a"}})
	for _, p := range []struct{ path, want string }{{"/", "<html"}, {"/events", "event: start"}} {
		t.Run(p.path, func(t *testing.T) { rebinding(t, strings.TrimSuffix(d.URL(), "/"), p.path, p.want) })
	}
}
