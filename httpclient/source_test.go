package httpclient

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestParseSourceAddrs(t *testing.T) {
	for _, tt := range []struct {
		spec string
		want []string
		err  string
	}{
		{"127.0.0.2", []string{"127.0.0.2"}, ""},
		{"127.0.0.2, 127.0.0.5", []string{"127.0.0.2", "127.0.0.5"}, ""},
		{"127.0.0.2-127.0.0.4", []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}, ""},
		{"127.0.0.8/30", []string{"127.0.0.8", "127.0.0.9", "127.0.0.10", "127.0.0.11"}, ""},
		{"::1", []string{"::1"}, ""},
		{"127.0.0.x", nil, `source address "127.0.0.x": not an IP address`},
		{"127.0.0.9-127.0.0.2", nil, "FIRST ≤ LAST"},
		{"10.0.0.0/8", nil, "more than 65536"},
		{"", nil, "none given"},
	} {
		ips, err := ParseSourceAddrs(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want %q", tt.spec, err, tt.err)
			}
			continue
		}
		var got []string
		for _, ip := range ips {
			got = append(got, ip.String())
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q: %v %v, want %v", tt.spec, got, err, tt.want)
		}
	}
}

// Connections come from the source addresses round robin: 6 connections
// over 3 addresses, 2 from each (the server sees them).
func TestSourceAddrsSpreadConnections(t *testing.T) {
	var mu sync.Mutex
	from := map[string]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			h, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			mu.Lock()
			from[h]++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	ips, _ := ParseSourceAddrs("127.0.0.2-127.0.0.4")
	tr := &h1Transport{SourceAddrs: ips}
	for range 6 {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Close = true               // a new connection each time
		resp, err := tr.RoundTrip(req) // one transport: round robin across its dials
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"127.0.0.2": 2, "127.0.0.3": 2, "127.0.0.4": 2}
	if len(from) != 3 || from["127.0.0.2"] != 2 || from["127.0.0.3"] != 2 || from["127.0.0.4"] != 2 {
		t.Fatalf("connections by source %v, want %v", from, want)
	}
}
