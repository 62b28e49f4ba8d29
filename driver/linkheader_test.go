package driver

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLinks(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    []linkValue
		wantErr bool
	}{
		{in: []string{`</s/1>; rel="stream"`}, want: []linkValue{{"/s/1", "stream"}}},
		{in: []string{`</s/1>;rel=stream`}, want: []linkValue{{"/s/1", "stream"}}},
		{in: []string{`<https://a.example/x>; rel="next", </s/2>; title="a, b; c"; rel="stream other"`},
			want: []linkValue{{"https://a.example/x", "next"}, {"/s/2", "stream other"}}},
		{in: []string{`</a>; rel="x\"y"`}, want: []linkValue{{"/a", `x"y`}}},
		{in: []string{`</a>; rel=first; rel=second`}, want: []linkValue{{"/a", "first"}}}, // RFC 8288 §3.3: the first
		{in: []string{`</a>; REL="Stream"`}, want: []linkValue{{"/a", "Stream"}}},
		{in: []string{`</a>; crossorigin; rel=stream`}, want: []linkValue{{"/a", "stream"}}},
		{in: []string{`</a>`, ` , </b>; rel=stream ,`}, want: []linkValue{{"/a", ""}, {"/b", "stream"}}},
		{in: []string{``}, want: nil},
		{in: []string{`/a; rel=stream`}, wantErr: true},
		{in: []string{`</a; rel=stream`}, wantErr: true},
		{in: []string{`</a>; rel="stream`}, wantErr: true},
		{in: []string{`</a> rel=stream`}, wantErr: true},
		{in: []string{`</a>; rel=`}, wantErr: true},
	} {
		var got []linkValue
		err := parseLinks(tc.in, func(l linkValue) bool { got = append(got, l); return true })
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%q: (-want +got)\n%s", tc.in, d)
		}
	}
}

func TestStreamLinkOrigin(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080/mcp")
	for _, tc := range []struct {
		link, want string
		refused    bool
	}{
		{`</mcp?stream=a>; rel="stream"`, "http://127.0.0.1:8080/mcp?stream=a", false},
		{`<http://127.0.0.1:8080/s/a#frag>; rel="stream"`, "http://127.0.0.1:8080/s/a", false},
		{`<//127.0.0.1:8080/s>; rel="next stream"`, "http://127.0.0.1:8080/s", false},
		{`<http://127.0.0.1:8081/s>; rel="stream"`, "", true},  // another port
		{`<https://127.0.0.1:8080/s>; rel="stream"`, "", true}, // another scheme
		{`<http://evil.example:8080/s>; rel=stream`, "", true}, // another host
		{`</s>; rel="next"`, "", false},                        // no stream link
		{`</s; rel="stream"`, "", false},                       // malformed: nothing to follow
	} {
		got, refused := streamLink(http.Header{"Link": {tc.link}}, base)
		gs := ""
		if got != nil {
			gs = got.String()
		}
		if gs != tc.want || refused != tc.refused {
			t.Errorf("%s: got %q refused %v, want %q refused %v", tc.link, gs, refused, tc.want, tc.refused)
		}
	}
	d, _ := url.Parse("https://h.example/mcp")
	if got, _ := streamLink(http.Header{"Link": {`<https://h.example:443/s>; rel=stream`}}, d); got == nil {
		t.Error("the default port written out is the same origin")
	}
}

// FuzzLinkHeader: the parser never panics, never loops, and every target
// it yields is a substring of the input without angle brackets, and no
// link to another origin is followed.
func FuzzLinkHeader(f *testing.F) {
	for _, s := range []string{`</s/1>; rel="stream"`, `<a>; rel="x\"y", <b>;rel=stream;;`, `<`, `</a>; rel="`, `<>;a=b,<c>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := 0
		_ = parseLinks([]string{s}, func(l linkValue) bool {
			n++
			if !strings.Contains(s, l.Target) || strings.ContainsAny(l.Target, "<>") {
				t.Fatalf("target %q not from %q", l.Target, s)
			}
			return true
		})
		if n > len(s) {
			t.Fatalf("%d links from %d bytes", n, len(s))
		}
		base, _ := url.Parse("http://127.0.0.1:1/mcp")
		if u, _ := streamLink(http.Header{"Link": {s}}, base); u != nil && !sameOrigin(base, u) {
			t.Fatalf("followed %s", u)
		}
	})
}
