package driver_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/jsonrpc"
)

// The wire pieces the probe takes from driver: the _meta a Session sends
// (a JSON object once braced, with the version, client info and log
// level), the encoded Mcp-Name value, the versions server/discover lists,
// and the same-origin stream link.
func TestProbeAPI(t *testing.T) {
	cfg := &driver.Config{ClientName: "c", ClientVersion: "1.2", LogLevel: "debug"}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(append(append([]byte("{"), cfg.ModernMeta(driver.Protocol20260728)...), '}'), &meta); err != nil {
		t.Fatalf("ModernMeta is not the inside of an object: %v", err)
	}
	got := map[string]string{
		"io.modelcontextprotocol/protocolVersion": string(meta["io.modelcontextprotocol/protocolVersion"]),
		"io.modelcontextprotocol/clientInfo":      string(meta["io.modelcontextprotocol/clientInfo"]),
		driver.MetaLogLevel:                       string(meta[driver.MetaLogLevel]),
	}
	want := map[string]string{
		"io.modelcontextprotocol/protocolVersion": `"2026-07-28"`,
		"io.modelcontextprotocol/clientInfo":      `{"name":"c","version":"1.2"}`,
		driver.MetaLogLevel:                       `"debug"`,
	}
	if diff := cmp.Diff(want, got); diff != "" || meta["io.modelcontextprotocol/clientCapabilities"] == nil {
		t.Errorf("ModernMeta (-want +got):\n%s(capabilities %s)", diff, meta["io.modelcontextprotocol/clientCapabilities"])
	}

	for _, tc := range []struct{ method, params, want string }{
		{"tools/call", `{"name":"echo","arguments":{}}`, "echo"},
		{"prompts/get", `{"name":"grüß"}`, "=?base64?Z3LDvMOf?="},
		{"resources/read", `{"uri":"mcpbench://static/small"}`, "mcpbench://static/small"},
		{"tools/call", `{"name":3}`, ""},
		{"tools/list", `{"name":"x"}`, ""},
	} {
		if got := driver.NameHeader(tc.method, []byte(tc.params)); got != tc.want {
			t.Errorf("NameHeader(%s, %s) = %q, want %q", tc.method, tc.params, got, tc.want)
		}
	}

	for _, tc := range []struct {
		answer   string
		versions []string
		code     int
		modern   string
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28","2099-01-01"]}}`, []string{"2026-07-28", "2099-01-01"}, 0, "2026-07-28"},
		{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2099-01-01"]}}`, []string{"2099-01-01"}, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m","data":{"supported":["2026-07-28"]}}}`, []string{"2026-07-28"}, -32022, "2026-07-28"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m","data":{"supported":["2026-07-28"]}}}`, nil, -32601, ""},
		{`{"jsonrpc":"2.0","method":"notifications/x"}`, nil, 0, ""},
	} {
		m, err := jsonrpc.Parse([]byte(tc.answer))
		if err != nil {
			t.Fatal(err)
		}
		vs, code, modern := driver.DiscoverVersions(m)
		if !cmp.Equal(vs, tc.versions) || code != tc.code || modern != tc.modern {
			t.Errorf("DiscoverVersions(%s) = %v, %d, %q; want %v, %d, %q", tc.answer, vs, code, modern, tc.versions, tc.code, tc.modern)
		}
	}

	base, _ := url.Parse("http://127.0.0.1:8080/mcp")
	if u, refused := driver.StreamLink(http.Header{"Link": {`</s/a#f>; rel="stream"`}}, base); u == nil || u.String() != "http://127.0.0.1:8080/s/a" || refused {
		t.Errorf("same-origin link: %v refused %v", u, refused)
	}
	if u, refused := driver.StreamLink(http.Header{"Link": {`<http://evil.example/s>; rel="stream"`}}, base); u != nil || !refused {
		t.Errorf("foreign link: %v refused %v", u, refused)
	}
}
