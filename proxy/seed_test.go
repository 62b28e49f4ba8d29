package proxy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpbench/mcpbench/proxy"
	"github.com/mcpbench/mcpbench/refserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plantedStreams runs 30 sequential progress calls of one go-sdk client
// session through a proxy seeded with seed, and returns the planted
// faults as "stream:kind" in log order.
func plantedStreams(t *testing.T, srvURL string, seed uint64) []string {
	t.Helper()
	up, _ := url.Parse(srvURL)
	var faults []proxy.Fault
	for _, s := range []string{"drop target=progress p=0.5", "duplicate target=progress at=1 p=0.3"} {
		f, err := proxy.ParseFault(s)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, f)
	}
	var log bytes.Buffer
	px, err := proxy.New(proxy.Config{Upstream: up, Faults: faults, Seed: seed, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: px}
	go hs.Serve(ln)
	defer hs.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "seed", Version: "0"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Meta: mcp.Meta{"progressToken": i}, Name: "progress", Arguments: map[string]any{"count": 2}}); err != nil {
			t.Fatal(err)
		}
	}
	cs.Close()
	px.Close()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var ln proxy.Line
		if err := json.Unmarshal([]byte(l), &ln); err != nil {
			t.Fatal(err)
		}
		if ln.Ev == "fault" {
			out = append(out, fmt.Sprintf("%d:%s", ln.Stream, ln.Fault))
		}
	}
	return out
}

// A run is reproducible: the same requests in the same order meet the
// same faults under the same seed (stream n draws from (seed, n)), and
// another seed picks other streams.
func TestSeedReproducible(t *testing.T) {
	srv, err := refserver.Start(t.Context(), "127.0.0.1:0", refserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, b, c := plantedStreams(t, srv.URL(), 7), plantedStreams(t, srv.URL(), 7), plantedStreams(t, srv.URL(), 8)
	if len(a) < 5 || strings.Join(a, " ") != strings.Join(b, " ") {
		t.Fatalf("seed 7 twice: %v vs %v", a, b)
	}
	if strings.Join(a, " ") == strings.Join(c, " ") {
		t.Fatalf("seeds 7 and 8 planted the same faults: %v", a)
	}
}
