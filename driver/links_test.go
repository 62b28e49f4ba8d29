package driver_test

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/refserver"
)

// linkCutTransport cuts every POST stream answering a tools/call: before
// its first event (after == 0) or after `after` events; with crossOrigin
// it rewrites the stream's Link header to another origin first. It records
// every request's URL.
type linkCutTransport struct {
	rt          http.RoundTripper
	after       int
	crossOrigin string

	mu   sync.Mutex
	cuts int
	urls []string
}

func (c *linkCutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.urls = append(c.urls, req.URL.String())
	c.mu.Unlock()
	var body []byte
	if req.Body != nil && req.GetBody != nil {
		b, _ := req.GetBody()
		body, _ = io.ReadAll(b)
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || !strings.Contains(string(body), `"tools/call"`) ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	if c.crossOrigin != "" && resp.Header.Get("Link") != "" {
		resp.Header.Set("Link", "<"+c.crossOrigin+`/mcp?stream=x>; rel="stream"`)
	}
	c.mu.Lock()
	c.cuts++
	c.mu.Unlock()
	if c.after == 0 {
		resp.Body.Close()
		resp.Body = io.NopCloser(errReader{})
		return resp, nil
	}
	resp.Body = &cutBody{rc: resp.Body, left: c.after}
	return resp, nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errCut }

func startLinkRef(t *testing.T, links bool) *refserver.Server {
	t.Helper()
	srv, err := refserver.Start(t.Context(), "", refserver.Options{StreamLinks: links})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// linkSession runs n progress calls through a session whose every call
// stream is cut as ct says, and returns their results.
func linkSession(t *testing.T, srv *refserver.Server, ct *linkCutTransport, n int) []driver.Result {
	t.Helper()
	cfg := &driver.Config{URL: srv.URL(), HTTPClient: &http.Client{Transport: ct}, DefaultRetry: time.Millisecond}
	s, err := driver.NewSession(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	var res driver.Result
	if err := s.Initialize(t.Context(), &res); err != nil {
		t.Fatal(err)
	}
	out := make([]driver.Result, n)
	for i := range out {
		s.Do(t.Context(), op(t, "tools/call", `{"name":"progress","arguments":{"count":4,"interval_ms":2}}`, true), &out[i])
	}
	return out
}

// A server that sends rel="stream" links (SEP-1335): every call stream,
// cut before its first event or after two, is resumed at its link —
// with Last-Event-ID when it carried one — and replayed exactly; the
// server counts each resume at the link. The control, the same cuts on a
// server without links, finds the streams cut before any event
// unresumable and resumes the others at the endpoint.
func TestStreamLinkResume(t *testing.T) {
	const calls = 4
	for _, tc := range []struct {
		name  string
		links bool
		after int
	}{
		{"links, cut before the first event", true, 0},
		{"links, cut after two events", true, 2},
		{"no links, cut before the first event", false, 0},
		{"no links, cut after two events", false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startLinkRef(t, tc.links)
			ct := &linkCutTransport{rt: http.DefaultTransport, after: tc.after}
			rs := linkSession(t, srv, ct, calls)
			if ct.cuts != calls {
				t.Fatalf("%d streams cut, want %d", ct.cuts, calls)
			}
			viaLink, atLink, accepted := 0, 0, 0
			for i, r := range rs {
				for _, a := range r.Resumes {
					if a.Link {
						viaLink++
					}
				}
				unresumable := r.Ledger.Counts[driver.VerdictUnresumable]
				switch {
				case !tc.links && tc.after == 0:
					if !errors.Is(r.Err, driver.ErrUnresumable) || unresumable != 1 || len(r.Resumes) != 0 {
						t.Fatalf("call %d: err %v, unresumable %d, resumes %+v: want unresumable, no resume", i, r.Err, unresumable, r.Resumes)
					}
				default:
					// The server may refuse a resume with 409 while it has
					// not yet seen the cut (the stream is still attached to
					// the first request); the driver then tries again. Any
					// number of such refusals, then exactly one accepted
					// resume, all at the link (or all at the endpoint).
					ok := r.Err == nil && !r.Ledger.Faulty() && r.Progress == 4 && len(r.Resumes) >= 1
					for j, a := range r.Resumes {
						last := j == len(r.Resumes)-1
						if a.Link != tc.links || a.OK != last || (!last && a.Status != http.StatusConflict) {
							ok = false
						}
					}
					if !ok {
						t.Fatalf("call %d: err %v, ledger %v, progress %d, resumes %+v: want one accepted resume after any 409s (at the link: %v), every progress once", i, r.Err, r.Ledger.Counts, r.Progress, r.Resumes, tc.links)
					}
					accepted++
				}
			}
			for _, u := range ct.urls {
				if strings.Contains(u, "stream=") {
					atLink++
				}
			}
			// The server counts every resume at a link it hands to the SDK,
			// those the SDK then refuses with 409 included: one per attempt,
			// at least one per call.
			want := 0
			if tc.links {
				want = calls
			}
			if viaLink != atLink || srv.Stats().LinkResumes != int64(viaLink) || viaLink < want || (!tc.links && viaLink != 0) {
				t.Fatalf("resumes at the link: driver %d, requests %d, server served %d; want at least %d, every attempt at the link seen by all three", viaLink, atLink, srv.Stats().LinkResumes, want)
			}
			if tc.links || tc.after != 0 {
				if accepted != calls {
					t.Fatalf("%d calls resumed, want %d", accepted, calls)
				}
			}
		})
	}
}

// A fake whose links name another origin: each is refused and counted
// (exactly one per cut stream), never followed; the streams cut before
// their first event stay unresumable.
func TestStreamLinkCrossOriginRefused(t *testing.T) {
	const calls = 3
	srv := startLinkRef(t, true)
	ct := &linkCutTransport{rt: http.DefaultTransport, crossOrigin: "http://other.invalid:9"}
	rs := linkSession(t, srv, ct, calls)
	refused := 0
	for i, r := range rs {
		refused += r.LinksRefused
		if !errors.Is(r.Err, driver.ErrUnresumable) || len(r.Resumes) != 0 {
			t.Fatalf("call %d: err %v, resumes %+v: want unresumable, no resume", i, r.Err, r.Resumes)
		}
	}
	if refused != calls {
		t.Fatalf("%d links refused, want %d", refused, calls)
	}
	base, _ := url.Parse(srv.URL())
	for _, u := range ct.urls {
		if p, _ := url.Parse(u); p.Host != base.Host {
			t.Fatalf("a request went to %s", u)
		}
	}
	if n := srv.Stats().LinkResumes; n != 0 {
		t.Fatalf("server saw %d link resumes, want 0", n)
	}
}

// A 404 to a resume sent to the stream's rel="stream" URL is the link's,
// not the session's (its MCP endpoint was not asked): class link-missing.
// The same 404 without a link (the resume went to the endpoint) is the
// session's: session-missing.
func TestStreamLink404IsNotTheSession(t *testing.T) {
	for _, tc := range []struct {
		link bool
		want driver.Class
	}{{true, driver.ClassLinkMissing}, {false, driver.ClassSessionMissing}} {
		fake := mcptest.New()
		fake.Handle(mcptest.K("POST", "s1", "tools/call", ""), func(w *mcptest.Writer, r *mcptest.Request) {
			if tc.link {
				w.Header().Set("Link", `</mcp/streams/x>; rel="stream"`)
			}
			w.Events(mcptest.Event{ID: "a1", Data: mcptest.Progress(r.ProgressToken(), 1, 2)}) // then the stream ends
		})
		fake.Handle(mcptest.K("GET", "s1", "", "a1"), func(w *mcptest.Writer, r *mcptest.Request) {
			w.WriteHeader(http.StatusNotFound)
		})
		s, _, stop := pipeSession(t, fake, nil)
		var res driver.Result
		s.Do(t.Context(), op(t, "tools/call", `{"name":"x","arguments":{}}`, true), &res)
		if res.Class != tc.want || len(res.Resumes) != 1 || res.Resumes[0].Link != tc.link || res.Resumes[0].Status != 404 {
			t.Errorf("link %v: class %v (%v), resumes %+v; want %v after one 404", tc.link, res.Class, res.Err, res.Resumes, tc.want)
		}
		s.Close(t.Context())
		stop()
	}
}
