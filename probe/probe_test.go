package probe_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbench/mcpbench/driver"
	"github.com/mcpbench/mcpbench/internal/mcptest"
	"github.com/mcpbench/mcpbench/probe"
	"github.com/mcpbench/mcpbench/refserver"
)

// probeBudget is the most requests a probe may send ("never loads the
// server").
const probeBudget = 50

func probeURL(t *testing.T, url string, h http.Header) (*probe.Report, error) {
	t.Helper()
	r, err := probe.Run(t.Context(), &driver.Config{URL: url, Header: h}, probe.Options{})
	if r != nil && r.Requests > probeBudget {
		t.Errorf("the probe sent %d requests, more than %d", r.Requests, probeBudget)
	}
	return r, err
}

func serveFake(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// differing lists the cases that differ from the spec.
func differing(r *probe.Report) []string {
	var out []string
	for _, c := range r.Cases {
		if c.Result == probe.Differs {
			out = append(out, c.Case)
		}
	}
	slices.Sort(out)
	return out
}

func caseNamed(t *testing.T, r *probe.Report, name string) probe.Case {
	t.Helper()
	for _, c := range r.Cases {
		if c.Case == name {
			return c
		}
	}
	t.Fatalf("no case %q in %d cases", name, len(r.Cases))
	return probe.Case{}
}

func TestProbeCompliantFake(t *testing.T) {
	t.Parallel()
	// The fake puts event ids on streaming answers only (initialize and
	// tools/list answer JSON): the probe must trigger one to see them.
	r, err := probeURL(t, serveFake(t, &mcptest.ProbeFake{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := differing(r); len(d) != 0 {
		t.Fatalf("a compliant server differs in %v", d)
	}
	for _, c := range r.Cases {
		if c.Spec == "" || c.Expected == "" || (c.Result == probe.NA) == c.OK {
			t.Errorf("case %+v: needs a spec, an expectation, and ok only when it applied and held", c)
		}
	}
	if r.Checked != 30 || len(r.Cases) != 30 { // 30: with the stream-link row (links.go)
		t.Errorf("%d of %d cases checked, want 30 of 30", r.Checked, len(r.Cases))
	}
	if !r.MCPEndpoint || r.Sessions != "stateful" || r.Answers != "mixed" || !r.EventIDs || !r.Priming || r.Recommended != "2025-11-25" {
		t.Errorf("report %+v", r)
	}
	s := r.Streaming
	if s.Tool != "progress" || s.AnsweredAs != "sse" || s.Progress != 3 || s.Events != 5 || !s.EventIDs || !s.Priming || !s.Response || !s.Ended {
		t.Errorf("streaming %+v", s)
	}
	if diff := cmp.Diff([]int{250}, r.RetryHints); diff != "" {
		t.Errorf("retry hints (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(r.Resumable, "yes: a finished stream resumed from st") || !strings.Contains(r.Resumable, "4 events replayed exactly, then the end") {
		t.Errorf("resumable %q", r.Resumable)
	}
}

func TestProbePlantedFaults(t *testing.T) {
	const (
		origin     = "foreign Origin (DNS rebinding)"
		ctype      = "wrong Content-Type (text/plain)"
		version    = "unsupported MCP-Protocol-Version header"
		noSession  = "request without the session id"
		unknown    = "request with an unknown session id"
		getUnknown = "GET with an unknown session id"
		unknownWF  = "request with an unknown well-formed session id"
		getUnkWF   = "GET with an unknown well-formed session id"
		delAgain   = "DELETE the session again"
		onDeleted  = "request on the deleted session"
		getDeleted = "GET on the deleted session"
		chars      = "session id characters"
		retry      = "retry hint before the server closes a stream"
		poll       = "resume a stream the server closed (SSE polling)"
		replay     = "resume with Last-Event-ID (exact replay)"
		terminate  = "SSE answer ends after its response"
		unknownID  = "GET with an unknown Last-Event-ID"
		secondGET  = "second concurrent GET"
		put        = "PUT on the endpoint"
	)
	tests := []struct {
		name   string
		faults mcptest.ProbeFaults
		want   []string
		detail map[string]string // case → a part of its detail
	}{
		{"Origin ignored", mcptest.ProbeFaults{IgnoreOrigin: true}, []string{origin}, nil},
		{"any Content-Type", mcptest.ProbeFaults{AnyContentType: true}, []string{ctype}, map[string]string{ctype: "a text/plain body was accepted"}},
		{"any protocol version", mcptest.ProbeFaults{AnyVersion: true}, []string{version}, nil},
		{"no session accepted", mcptest.ProbeFaults{NoSessionAccepted: true}, []string{noSession}, nil},
		{"400 where 404 is required", mcptest.ProbeFaults{UnknownSession400: true},
			[]string{delAgain, getDeleted, getUnknown, getUnkWF, onDeleted, unknown, unknownWF}, nil},
		{"deleted session still accepted", mcptest.ProbeFaults{DeletedAccepted: true}, []string{delAgain, getDeleted, onDeleted}, nil},
		{"session id with a space", mcptest.ProbeFaults{BadSessionID: true}, []string{chars}, map[string]string{chars: "byte 4 of the 6-byte Mcp-Session-Id is 0x20"}},
		{"no retry hint on close", mcptest.ProbeFaults{NoRetryOnClose: true}, []string{retry}, nil},
		{"stream stays open", mcptest.ProbeFaults{StreamStaysOpen: true}, []string{terminate}, map[string]string{terminate: "stayed open"}},
		{"replay sends a message twice", mcptest.ProbeFaults{ResumeDuplicates: true}, []string{poll, replay},
			map[string]string{poll: "_3 again", replay: `event 2 has id "st`}},
		{"replay carries another request's message", mcptest.ProbeFaults{ResumeForeign: true}, []string{poll, replay},
			map[string]string{poll: `progress of another request (token "another-request")`, replay: `1 event more than the stream had (first: id "st999_1")`}},
		{"replay never ends", mcptest.ProbeFaults{ResumeNeverEnds: true}, []string{poll, replay},
			map[string]string{poll: "stayed open", replay: "the replay did not end the stream"}},
		{"404 to an unknown Last-Event-ID", mcptest.ProbeFaults{UnknownLastID404: true}, []string{unknownID}, map[string]string{unknownID: "session is gone"}},
		{"500 to a second GET", mcptest.ProbeFaults{SecondGETError: true}, []string{secondGET}, nil},
		{"PUT served", mcptest.ProbeFaults{PUTAccepted: true}, []string{put}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := probeURL(t, serveFake(t, &mcptest.ProbeFake{Faults: tt.faults}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, differing(r)); diff != "" {
				t.Errorf("differing cases (-want +got):\n%s", diff)
			}
			if r.Differ != len(tt.want) {
				t.Errorf("Differ = %d, want %d", r.Differ, len(tt.want))
			}
			for name, part := range tt.detail {
				if c := caseNamed(t, r, name); !strings.Contains(c.Detail, part) {
					t.Errorf("%s: detail %q lacks %q", name, c.Detail, part)
				}
			}
		})
	}
}

// A server that closes its streams on its own (SSE polling) with a retry
// hint: the probe must see the hint, resume, and check the whole stream.
func TestProbeServerPolls(t *testing.T) {
	t.Parallel()
	f := &mcptest.ProbeFake{Tool: "ticker", ReadOnly: true, CloseAfter: 1, RetryMS: 100}
	r, err := probeURL(t, serveFake(t, f), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := differing(r); len(d) != 0 {
		t.Fatalf("differs in %v", d)
	}
	if diff := cmp.Diff([]int{100}, r.RetryHints); diff != "" {
		t.Errorf("retry hints (-want +got):\n%s", diff)
	}
	if f.Calls("ticker") != 1 {
		t.Errorf("ticker called %d times, want 1", f.Calls("ticker"))
	}
	if c := caseNamed(t, r, "retry hint before the server closes a stream"); c.Detail != "the streaming call: retry 100 ms, then closed after 3 events" {
		t.Errorf("retry case %+v", c)
	}
	if c := caseNamed(t, r, "resume a stream the server closed (SSE polling)"); !c.OK || !strings.Contains(c.Detail, "3 events more, the response, then the end") {
		t.Errorf("polling case %+v", c)
	}
	if c := caseNamed(t, r, "resume with Last-Event-ID (exact replay)"); !c.OK || !strings.Contains(c.Detail, "4 events replayed exactly, then the end; the stream spanned a server close") {
		t.Errorf("replay case %+v", c)
	}
}

// A stateless server whose SSE answers carry a priming event and ids that
// no GET can resume: the probe must say so, not just "priming yes".
func TestProbeStatelessIDsCannotResume(t *testing.T) {
	r, err := probeURL(t, serveFake(t, &mcptest.ProbeFake{Stateless: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"resume a stream the server closed (SSE polling)", "resume with Last-Event-ID (exact replay)"}
	if diff := cmp.Diff(want, differing(r)); diff != "" {
		t.Errorf("differing cases (-want +got):\n%s", diff)
	}
	if !r.Priming || r.Sessions != "stateless" || r.GETStream != "not offered (405)" {
		t.Errorf("report %+v", r)
	}
	if !strings.HasPrefix(r.Resumable, "no: a finished stream sent event ids, but GET with Last-Event-ID st") || !strings.HasSuffix(r.Resumable, "answered HTTP 405 (text/plain)") {
		t.Errorf("resumable %q", r.Resumable)
	}
}

// The probe never calls a tool that may change state.
func TestProbeCallsNoUnsafeTool(t *testing.T) {
	t.Parallel()
	f := &mcptest.ProbeFake{Tool: "delete_everything"}
	r, err := probeURL(t, serveFake(t, f), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Calls("delete_everything"); n != 0 {
		t.Fatalf("the probe called delete_everything %d times", n)
	}
	if !strings.HasPrefix(r.Streaming.Why, "could not trigger a streaming answer: of 1 tools listed, none") || r.Streaming.Tool != "" {
		t.Errorf("streaming %+v", r.Streaming)
	}
	if r.Resumable != "not checked: "+r.Streaming.Why {
		t.Errorf("resumable %q", r.Resumable)
	}
	for _, name := range []string{"resume with Last-Event-ID (exact replay)", "retry hint before the server closes a stream", "resume a stream the server closed (SSE polling)"} {
		if c := caseNamed(t, r, name); c.Result != probe.NA || !strings.HasPrefix(c.Detail, "no streaming answer: could not trigger") {
			t.Errorf("%s: %+v", name, c)
		}
	}
	if d := differing(r); len(d) != 0 {
		t.Errorf("differs in %v", d)
	}
}

func TestProbeNotAnMCPEndpoint(t *testing.T) {
	tests := []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"404 to everything", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			"not an MCP endpoint: HTTP 404 to every request (server/discover, initialize 2025-11-25, 2025-06-18, 2025-03-26)"},
		{"a web page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>hello</html>"))
		}, "not an MCP endpoint: HTTP 200 to every request"},
		{"JSON-RPC without MCP", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if strings.Contains(r.Header.Get("Mcp-Method"), "discover") {
				w.WriteHeader(http.StatusBadRequest)
			}
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`))
		}, "not an MCP endpoint: no server/discover result and no initialize result: server/discover: HTTP 400 (application/json); initialize 2025-11-25: HTTP 200 (application/json)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := probeURL(t, serveFake(t, tt.h), nil)
			if !errors.Is(err, probe.ErrNotMCPEndpoint) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want ErrNotMCPEndpoint with %q", err, tt.want)
			}
			if r == nil || r.MCPEndpoint || r.Recommended != "" || r.Requests != 4 || len(r.Cases) != 0 {
				t.Fatalf("report %+v", r)
			}
		})
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	r, err := probeURL(t, closed, nil)
	if err == nil || errors.Is(err, probe.ErrNotMCPEndpoint) || r != nil {
		t.Fatalf("closed port: report %v, error %v; want a transport error", r, err)
	}
}

func TestProbeUnauthorized(t *testing.T) {
	const secret = "Bearer s3cret-probe-token"
	const challenge = `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`
	for _, withChallenge := range []bool{true, false} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if withChallenge {
				w.Header().Set("WWW-Authenticate", challenge)
			}
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		})
		r, err := probeURL(t, serveFake(t, h), http.Header{"Authorization": {secret}})
		if !errors.Is(err, probe.ErrNotMCPEndpoint) || !strings.Contains(err.Error(), "HTTP 401 to every request: the server wants authorization") ||
			!strings.Contains(err.Error(), "the Authorization header given was refused") {
			t.Fatalf("error %v", err)
		}
		if withChallenge != strings.Contains(err.Error(), challenge) {
			t.Errorf("error %q: challenge shown %v, want %v", err, !withChallenge, withChallenge)
		}
		c := caseNamed(t, r, "401 carries a WWW-Authenticate challenge")
		if c.OK != withChallenge || c.Status != 401 {
			t.Errorf("challenge %v: case %+v", withChallenge, c)
		}
		if withChallenge && c.Detail != "401 to POST server/discover: WWW-Authenticate: "+challenge {
			t.Errorf("detail %q", c.Detail)
		}
		data, _ := json.Marshal(r)
		if strings.Contains(string(data)+err.Error(), "s3cret") {
			t.Fatalf("the Authorization value leaked:\n%s\n%v", data, err)
		}
	}
}

func TestProbeRefServerModes(t *testing.T) {
	tests := []struct {
		mode      refserver.Mode
		sessions  string
		resumable string // prefix
		getStream string
		retry     []int
		progress  int // on the answer to the tool call
	}{
		{refserver.ModeStateful, "stateful", "yes: a finished stream resumed from ", "offered", []int{250}, 3},
		// JSON answers: the progress goes to the GET stream, which is resumed.
		{refserver.ModeJSON, "stateful", "yes: the GET stream resumed from _0: 2 events replayed exactly", "offered", []int{}, 0},
		{refserver.ModeStateless, "stateless", "not resumable (no event ids)", "not offered (405)", []int{}, 3},
		// Both eras: resumption is checked in the legacy era (stateless there).
		{refserver.Mode2026, "stateless", "not resumable (no event ids), in 2025-11-25 (2026-07-28 has no resumption)", "not offered (405)", []int{}, 3},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			t.Parallel()
			srv, err := refserver.Start(t.Context(), "", refserver.Options{Mode: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			r, err := probeURL(t, srv.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := differing(r); len(d) != 0 {
				t.Errorf("the reference server differs in %v", d)
			}
			if c := caseNamed(t, r, "foreign Origin (DNS rebinding)"); !c.OK || c.Status != 403 {
				t.Errorf("Origin case %+v", c)
			}
			if r.Sessions != tt.sessions || !strings.HasPrefix(r.Resumable, tt.resumable) || r.GETStream != tt.getStream || r.Streaming.Progress != tt.progress {
				t.Errorf("sessions %q, resumable %q, GET stream %q, streaming %+v", r.Sessions, r.Resumable, r.GETStream, r.Streaming)
			}
			if diff := cmp.Diff(tt.retry, r.RetryHints); diff != "" {
				t.Errorf("retry hints (-want +got):\n%s", diff)
			}
		})
	}
}

// A server that speaks 2026-07-28 only: the legacy cases do not apply, the
// era-independent ones run in 2026-07-28.
func TestProbeModernOnly(t *testing.T) {
	t.Parallel()
	h, err := refserver.NewHandler(refserver.Options{Mode: refserver.Mode2026})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.(io.Closer).Close() })
	modernOnly := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !driver.IsModern(r.Header.Get("Mcp-Protocol-Version")) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2026-07-28"]}}}`))
			return
		}
		h.ServeHTTP(w, r)
	})
	r, err := probeURL(t, serveFake(t, modernOnly), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := differing(r); len(d) != 0 {
		t.Errorf("differs in %v", d)
	}
	if !r.Discover.Modern || r.Recommended != "2026-07-28" || r.Sessions != "none" || r.Streaming.Era != "2026-07-28" || r.Streaming.Progress != 3 {
		t.Errorf("report %+v", r)
	}
	na := 0
	for _, c := range r.Cases {
		if c.Result == probe.NA && strings.HasPrefix(c.Detail, "no 2025-11-25 era") {
			na++
		}
	}
	if na != 16 {
		t.Errorf("%d legacy cases marked as not applying, want 16", na)
	}
	for _, name := range []string{"malformed JSON", "wrong Content-Type (text/plain)", "foreign Origin (DNS rebinding)", "PUT on the endpoint"} {
		if c := caseNamed(t, r, name); !c.OK {
			t.Errorf("%s: %+v", name, c)
		}
	}
}

// A probe interrupted mid-way returns the cause and no report: the cases
// after the interruption would be void.
func TestProbeInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	fake := &mcptest.ProbeFake{}
	url := serveFake(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			cancel()
		}
		fake.ServeHTTP(w, r)
	}))
	r, err := probe.Run(ctx, &driver.Config{URL: url}, probe.Options{})
	if !errors.Is(err, context.Canceled) || r != nil {
		t.Fatalf("report %v, error %v; want context.Canceled", r, err)
	}
}
